"""Where each RayJob landed, and why it waits if it does: Workload, flavors, checks, requests, pods, nodes."""

from __future__ import annotations

from dataclasses import dataclass, field

from planb.catalog.profiles import PROFILES
from planb.failover.names import AFTER_ANNOTATION as FAILOVER_AFTER
from planb.failover.names import MOVED_ANNOTATION as FAILOVER_MOVED
from planb.failover.names import move_message
from planb.kube import Kube, Obj, conditions, is_true
from planb.status import goodput as goodput_
from planb.status import lifecycle, shapes, trainlog, variants
from planb.status import regions as regions_
from planb.status.gather import KUEUE, PROVREQ, RAY, JobObjects, Snapshot, fetch, join
from planb.status.snapshot_maps import Maps, maps_of

#: The chart's reason for keeping a multi-slice job off the DWS plans (charts/planb planb.offDwsReason).
OFF_DWS_ANNOTATION = "planb.dev/off-dws"
#: A pending Workload's reason before Kueue has written one.
WAITING = "waiting for Kueue"


@dataclass(frozen=True)
class PodSetInfo:
    name: str
    count: int
    flavors: dict[str, str]


@dataclass(frozen=True)
class CheckInfo:
    name: str
    state: str
    message: str
    #: Kueue's count of this check's retries (status.admissionChecks[].retryCount).
    retry_count: int = 0
    #: Kueue's backoff before the next attempt, while the check is in Retry.
    requeue_after: int | None = None


@dataclass(frozen=True)
class RequestInfo:
    name: str
    state: str
    reason: str
    message: str
    #: The attempt number Kueue put at the end of the name.
    attempt: int | None = None
    #: How long DWS kept it queued: Accepted until Provisioned, or so far (planb's own count).
    queued_for: str = ""
    #: The pods it asks for (Kueue: the worker group's replicas x hosts).
    pods: int = 0


@dataclass(frozen=True)
class ConditionInfo:
    """One of the Workload's conditions, as Kueue last set it (a condition keeps only its latest transition)."""

    type: str
    status: str
    reason: str
    #: Its lastTransitionTime (seconds since the epoch; None when Kueue has not written one).
    at: float | None


@dataclass
class JobStatus:
    """Everything `planb status` knows about one RayJob."""

    namespace: str
    name: str
    queue: str
    suspended: bool
    workload: str | None = None
    state: str = "no Workload yet"
    reason: str = ""
    podsets: list[PodSetInfo] = field(default_factory=list)
    checks: list[CheckInfo] = field(default_factory=list)
    requests: list[RequestInfo] = field(default_factory=list)
    pods: list[tuple[str, str, str]] = field(default_factory=list)  # (pod, phase, node)
    nodes: dict[str, str] = field(default_factory=dict)  # node -> pool
    node_plans: dict[str, str] = field(default_factory=dict)  # node -> plan of its pool (planb.dev/plan)
    ray_status: str = ""
    #: The Workload's spec.active (Kueue deactivates a workload whose check it rejects).
    active: bool = True
    #: How long each phase took: queued, provisioning, admitted.
    phases: str = ""
    #: Per provisioning check: the attempt and the retries left.
    retries: dict[str, lifecycle.Retries] = field(default_factory=dict)
    #: For a deactivated Workload: why, and the command that re-activates it (one line).
    deactivated: str = ""
    #: Set when planb's failover moved the job off plan A: "moved to plan B after 10m: ...".
    moved: str = ""
    #: Per ResourceFlavor: the plan it selects (its nodeLabels' planb.dev/plan), so the plan is named too.
    flavor_plans: dict[str, str] = field(default_factory=dict)
    #: Why the chart kept this multi-slice job off the DWS plans (the RayJob's planb.dev/off-dws annotation).
    off_dws: str = ""
    #: A concurrent-ladder job's variants and migrations (None for a job of a sequential ladder).
    concurrent: variants.Variants | None = None
    #: The shape the job's workers select (GKE's accelerator labels of their nodeSelector in the RayJob).
    shape: dict[str, str] = field(default_factory=dict)
    #: The job's profile, as the catalog names that shape ('-' when its workers select no accelerator).
    profile: str = "-"
    #: The ClusterQueue behind the job's LocalQueue ('' when it cannot be read).
    cluster_queue: str = ""
    #: The job's team: its ClusterQueue when the queues release made it for a team (queues.teams), else its namespace.
    team: str = ""
    #: The shapes that queue's plan flavors select (every ResourceFlavor's when the queue cannot be read).
    cluster_shapes: list[dict[str, str]] = field(default_factory=list)
    #: Their profiles ('-' when the flavors select no accelerator, or cannot be read).
    cluster_profile: str = "-"
    #: Goodput and its terms per run (computed only when asked: it reads the submitter's log and the Events).
    goodput: goodput_.Goodput | None = None
    #: The Workload's conditions (the parent's, for a concurrent-ladder job).
    conditions: list[ConditionInfo] = field(default_factory=list)
    #: When planb's failover moved the job off plan A (its planb.dev/failover-moved-at annotation).
    moved_at: float | None = None
    #: On a MultiKueue manager: which region runs the job, or how each region's copy stands (planb.status.regions).
    regions: regions_.Dispatch | None = None

    @property
    def failed(self) -> bool:
        """The job cannot go on without someone: Kueue deactivated its Workload, or KubeRay reports it Failed."""
        return not self.active or self.ray_status.startswith("Failed")

    @property
    def wrong_shape(self) -> bool:
        """The job's workers select a shape that none of the queue's plan flavors selects."""
        return bool(self.shape and self.cluster_shapes and self.shape not in self.cluster_shapes)

    @property
    def shape_note(self) -> str:
        """For a pending job of the wrong shape, why it waits, in one line ('' otherwise)."""
        if not self.wrong_shape or self.state != "Pending":
            return ""
        queue = f"ClusterQueue {self.cluster_queue}'s" if self.cluster_queue else "the cluster's"
        kueue = f' (Kueue: "{self.reason}")' if self.reason and self.reason != WAITING else ""
        fix = self.cluster_profile if self.cluster_profile in PROFILES else ""
        return (
            f"wrong shape: the job is {self.profile} but {queue} flavors select {self.cluster_profile}, so no flavor "
            f"matches its workers and Kueue never admits it{kueue}"
            + (f"; install it with -f charts/planb/values/{fix}.yaml (or `planb values {fix}`)" if fix else "")
        )

    @property
    def plan(self) -> str:
        """The plan of the accelerator flavor ('-' before admission, or for a flavor without a plan label)."""
        return self.flavor_plans.get(self.accelerator_flavor, "") or "-"

    @property
    def accelerator_flavor(self) -> str:
        """The flavor of the PodSet that holds accelerators (else of the last PodSet)."""
        for ps in self.podsets:
            for resource, flavor in ps.flavors.items():
                if resource in ("google.com/tpu", "nvidia.com/gpu"):
                    return flavor
        return next((f for ps in self.podsets for f in ps.flavors.values()), "-")

    @property
    def node_pools(self) -> list[str]:
        return sorted(set(self.nodes.values()))


def _workload_state(wl: Obj) -> tuple[str, str]:
    conds = conditions(wl)
    finished = conds.get("Finished")
    if finished and finished.get("status") == "True":
        return "Finished", finished.get("message", "")
    if wl.get("spec", {}).get("active") is False:
        deactivated = conds.get("Evicted") or {}
        return "Deactivated", deactivated.get("message", "the Workload was deactivated")
    for kind in ("Evicted", "Admitted", "QuotaReserved"):
        cond = conds.get(kind)
        if cond and cond.get("status") == "True":
            return kind, cond.get("message", "")
    pending = conds.get("QuotaReserved") or conds.get("Admitted") or {}
    return "Pending", pending.get("message", WAITING)


def _ray_status(status: Obj) -> str:
    """KubeRay's deployment status, the Ray job's own status and, when it failed, the first line of why."""
    text = str(status.get("jobDeploymentStatus", ""))
    job = status.get("jobStatus")
    if text and job:
        text += f" (Ray job {job})"
    message = str(status.get("message") or "").strip()
    if text.startswith("Failed") and message:
        text += f": {message.splitlines()[0][:200]}"
    return text


def _conditions(wl: Obj) -> list[ConditionInfo]:
    return [
        ConditionInfo(
            str(c.get("type", "")),
            str(c.get("status", "")),
            str(c.get("reason", "")),
            lifecycle.parse_time(c.get("lastTransitionTime")),
        )
        for c in (wl.get("status") or {}).get("conditions") or []
    ]


def _checks(wl: Obj) -> list[CheckInfo]:
    return [
        CheckInfo(
            check["name"],
            check.get("state", ""),
            check.get("message", ""),
            int(check.get("retryCount") or 0),
            check.get("requeueAfterSeconds"),
        )
        for check in (wl.get("status") or {}).get("admissionChecks", [])
    ]


def _requests(workload: str, checks: list[CheckInfo], owned: list[Obj]) -> list[RequestInfo]:
    out = []
    for pr in owned:
        state, reason, message = lifecycle.request_state(pr)
        name = pr["metadata"]["name"]
        attempts = (lifecycle.attempt_of(name, workload, c.name) for c in checks)
        attempt = next((n for n in attempts if n is not None), None)
        queued = lifecycle.queued_for(pr)
        out.append(RequestInfo(name, state, reason, message, attempt, queued, lifecycle.pod_count(pr)))
    return sorted(out, key=lambda r: (r.attempt or 0, r.name))


def _derive_workload(job: JobStatus, wl: Obj, owned: list[Obj], limits: dict[str, int], max_run: str | None) -> None:
    """What the job's Workload and its ProvisioningRequests say: state, conditions, flavors, checks, retries."""
    job.workload = workload = str(wl["metadata"]["name"])
    job.state, job.reason = _workload_state(wl)
    job.conditions = _conditions(wl)
    for psa in ((wl.get("status") or {}).get("admission") or {}).get("podSetAssignments", []):
        job.podsets.append(PodSetInfo(psa["name"], int(psa.get("count", 0)), dict(psa.get("flavors", {}))))
    job.checks = _checks(wl)
    job.requests = _requests(workload, job.checks, owned)
    revoked = any(r.state == "CapacityRevoked" for r in job.requests)
    wl_conds = conditions(wl)
    job.active = (wl.get("spec") or {}).get("active", True) is not False
    job.phases = lifecycle.phases(wl, wl_conds) if job.active else ""
    for check in job.checks:
        numbers = (lifecycle.attempt_of(r.name, workload, check.name) for r in job.requests)
        attempts = [n for n in numbers if n is not None]
        found = lifecycle.retries(check.retry_count, attempts, limits.get(check.name))
        if found is not None:
            job.retries[check.name] = found
    if not job.active:
        job.deactivated = lifecycle.deactivation(job.namespace, job.workload, wl_conds, revoked, limits, max_run)


def derive(maps: Maps, objs: JobObjects) -> JobStatus:
    """A job's status from its objects and the snapshot's maps alone: no read."""
    rj = objs.rayjob
    meta = rj["metadata"]
    annotations = meta.get("annotations") or {}
    job = JobStatus(
        namespace=meta["namespace"],
        name=meta["name"],
        queue=meta.get("labels", {}).get("kueue.x-k8s.io/queue-name", "-"),
        suspended=bool(rj["spec"].get("suspend", False)),
        ray_status=_ray_status(rj.get("status") or {}),
        moved=_move_note(annotations),
        moved_at=lifecycle.parse_time(annotations.get(FAILOVER_MOVED)),
        flavor_plans=maps.flavor_plans,
        off_dws=annotations.get(OFF_DWS_ANNOTATION, ""),
        shape=shapes.job_shape(rj),
    )
    job.profile = shapes.profile_of(job.shape, meta.get("labels", {}).get(shapes.PROFILE_LABEL, ""))
    job.cluster_queue, job.cluster_shapes, job.cluster_profile = maps.queues.of(job.namespace, job.queue)
    job.team = maps.queues.team(job.namespace, job.cluster_queue)
    if objs.workload is not None:
        max_run = annotations.get("provreq.kueue.x-k8s.io/maxRunDurationSeconds")
        _derive_workload(job, objs.workload, objs.requests, maps.limits, max_run)
    for pod in objs.pods:
        node = pod["spec"].get("nodeName", "")
        job.pods.append((pod["metadata"]["name"], pod.get("status", {}).get("phase", ""), node or "-"))
        if node:
            job.nodes[node] = maps.node_pools.get(node, "-")
            if maps.node_plans.get(node):
                job.node_plans[node] = maps.node_plans[node]
    return job


def _per_job_reads(kube: Kube, snapshot: Snapshot, objs: JobObjects, job: JobStatus, goodput: bool) -> None:
    """The reads that belong to one job: the regions its Workload went to, its submitter's log (for goodput and
    concurrent variants), its variants, its goodput."""
    wl = objs.workload
    if wl is not None and regions_.is_dispatched(wl):
        job.regions = regions_.dispatch(kube, wl)
    log = trainlog.submitter_log(kube, job.namespace, objs.submitters) if goodput else None
    if wl is not None and variants.is_parent(wl):
        job.concurrent = variants.fetch(kube, wl, [p["metadata"]["name"] for p in objs.submitters], log)
    if goodput:
        job.goodput = goodput_.of_job(objs.rayjob, wl, snapshot.workloads, snapshot.events, snapshot.requests, log)


def collect(
    kube: Kube, namespace: str | None = None, name: str | None = None, goodput: bool = False
) -> list[JobStatus]:
    """The status of every RayJob (in one namespace, or one job); with ``goodput``, each job's goodput too: fetch
    (planb.status.gather), the cluster-wide maps (planb.status.snapshot_maps), then per job join, derive, and the job's
    own reads."""
    snapshot = fetch(kube, namespace, name, goodput)
    if snapshot is None:
        return []
    maps = maps_of(snapshot)
    out = []
    for rayjob in snapshot.rayjobs:
        objs = join(snapshot, rayjob)
        job = derive(maps, objs)
        _per_job_reads(kube, snapshot, objs, job, goodput)
        out.append(job)
    return out


def admitted_on(job: JobStatus, flavor: str) -> bool:
    return job.state in ("Admitted", "Finished") and job.accelerator_flavor == flavor


def why_it_cannot_run(job: JobStatus, flavor: str) -> str:
    """Why `job` can no longer be admitted on `flavor` ('' while it still can): its Workload finished on another
    flavor, or Kueue deactivated it (it stays so until someone re-activates it)."""
    if job.state == "Finished" and job.accelerator_flavor != flavor:
        return f"{job.name} finished on {job.accelerator_flavor}, not {flavor}"
    if not job.active:
        return f"{job.name} was deactivated{': ' + job.deactivated if job.deactivated else ''}"
    if job.shape_note:
        return f"{job.name}: {job.shape_note}"
    return ""


def provisioned(job: JobStatus) -> bool:
    return any(r.state == "Provisioned" for r in job.requests)


def _move_note(annotations: dict[str, str]) -> str:
    """The failover controller's annotations as one line (planb.failover.controller writes them)."""
    if FAILOVER_MOVED not in annotations:
        return ""
    try:
        after = float(annotations.get(FAILOVER_AFTER, "0"))
    except ValueError:
        after = 0.0
    return f"{move_message(after)} (at {annotations[FAILOVER_MOVED]})"


__all__ = ["KUEUE", "PROVREQ", "RAY", "ConditionInfo", "JobStatus", "admitted_on", "collect", "is_true", "provisioned"]
