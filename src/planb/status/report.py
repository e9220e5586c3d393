"""Where each RayJob landed, and why it waits if it does: Workload, flavors, checks, requests, pods, nodes."""

from __future__ import annotations

from dataclasses import dataclass, field

from planb.catalog import profiles
from planb.failover.names import AFTER_ANNOTATION as FAILOVER_AFTER
from planb.failover.names import MOVED_ANNOTATION as FAILOVER_MOVED
from planb.failover.names import PLAN_LABEL, move_message
from planb.kube import Kube, KubeError, Obj, conditions, is_true, items_if_allowed
from planb.status import admissions, lifecycle, shapes, trainlog, variants
from planb.status import goodput as goodput_
from planb.status import regions as regions_

KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
PROVREQ = "/apis/autoscaling.x-k8s.io/v1"
RAY = "/apis/ray.io/v1"
NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"
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
        fix = self.cluster_profile if self.cluster_profile in profiles.PROFILES else ""
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


def _owned_by(obj: Obj, kind: str, name: str) -> bool:
    return any(o.get("kind") == kind and o.get("name") == name for o in obj["metadata"].get("ownerReferences", []))


def _retry_limits(kube: Kube) -> dict[str, int]:
    """backoffLimitCount per provisioning check; empty when the caller may not read cluster-scoped config."""
    try:
        return lifecycle.retry_limits(
            kube.items(f"{KUEUE}/admissionchecks"), kube.items(f"{KUEUE}/provisioningrequestconfigs")
        )
    except KubeError as exc:
        if exc.status in (401, 403):
            return {}
        raise


def _readable(kube: Kube, path: str) -> list[Obj]:
    """The items at ``path``; empty when the caller may not read them (cluster-scoped Kueue objects)."""
    return items_if_allowed(kube, path) or []


def _flavor_plans(flavors: list[Obj]) -> dict[str, str]:
    """ResourceFlavor -> the plan it selects."""
    out = {}
    for flavor in flavors:
        plan = ((flavor.get("spec") or {}).get("nodeLabels") or {}).get(PLAN_LABEL)
        if plan:
            out[flavor["metadata"]["name"]] = str(plan)
    return out


def collect(
    kube: Kube, namespace: str | None = None, name: str | None = None, goodput: bool = False
) -> list[JobStatus]:
    """The status of every RayJob (in one namespace, or one job); with ``goodput``, each job's goodput too."""
    ns_path = f"/namespaces/{namespace}" if namespace else ""
    rayjobs = kube.items(f"{RAY}{ns_path}/rayjobs")
    if name:
        rayjobs = [r for r in rayjobs if r["metadata"]["name"] == name]
    if not rayjobs:
        return []
    workloads = kube.items(f"{KUEUE}{ns_path}/workloads")
    requests = kube.items(f"{PROVREQ}{ns_path}/provisioningrequests")
    limits = _retry_limits(kube)
    flavors = _readable(kube, f"{KUEUE}/resourceflavors")
    flavor_plans = _flavor_plans(flavors)
    queues = shapes.queues(
        _readable(kube, f"{KUEUE}{ns_path}/localqueues"), _readable(kube, f"{KUEUE}/clusterqueues"), flavors
    )
    pods = kube.items(f"/api/v1{ns_path}/pods")
    nodes = kube.items("/api/v1/nodes")
    node_pools = {n["metadata"]["name"]: n["metadata"].get("labels", {}).get(NODEPOOL_LABEL, "-") for n in nodes}
    node_plans = {n["metadata"]["name"]: n["metadata"].get("labels", {}).get(PLAN_LABEL, "") for n in nodes}
    events = admissions.events(kube, ns_path) if goodput else None
    out = []
    for rj in sorted(rayjobs, key=lambda r: (r["metadata"]["namespace"], r["metadata"]["name"])):
        meta = rj["metadata"]
        job = JobStatus(
            namespace=meta["namespace"],
            name=meta["name"],
            queue=meta.get("labels", {}).get("kueue.x-k8s.io/queue-name", "-"),
            suspended=bool(rj["spec"].get("suspend", False)),
            ray_status=_ray_status(rj.get("status") or {}),
            moved=_move_note(meta.get("annotations") or {}),
            moved_at=lifecycle.parse_time((meta.get("annotations") or {}).get(FAILOVER_MOVED)),
            flavor_plans=flavor_plans,
            off_dws=(meta.get("annotations") or {}).get(OFF_DWS_ANNOTATION, ""),
            shape=shapes.job_shape(rj),
        )
        job.profile = shapes.profile_of(job.shape, meta.get("labels", {}).get(shapes.PROFILE_LABEL, ""))
        job.cluster_queue, job.cluster_shapes, job.cluster_profile = queues.of(job.namespace, job.queue)
        wl = next(
            (w for w in workloads if w["metadata"]["namespace"] == job.namespace and _owned_by(w, "RayJob", job.name)),
            None,
        )
        if wl is not None:
            job.workload = wl["metadata"]["name"]
            job.state, job.reason = _workload_state(wl)
            status = wl.get("status") or {}
            job.conditions = [
                ConditionInfo(
                    str(c.get("type", "")),
                    str(c.get("status", "")),
                    str(c.get("reason", "")),
                    lifecycle.parse_time(c.get("lastTransitionTime")),
                )
                for c in status.get("conditions") or []
            ]
            for psa in (status.get("admission") or {}).get("podSetAssignments", []):
                job.podsets.append(PodSetInfo(psa["name"], int(psa.get("count", 0)), dict(psa.get("flavors", {}))))
            for check in status.get("admissionChecks", []):
                job.checks.append(
                    CheckInfo(
                        check["name"],
                        check.get("state", ""),
                        check.get("message", ""),
                        int(check.get("retryCount") or 0),
                        check.get("requeueAfterSeconds"),
                    )
                )
            revoked = False
            for pr in requests:
                if pr["metadata"]["namespace"] == job.namespace and _owned_by(pr, "Workload", job.workload):
                    state, reason, message = lifecycle.request_state(pr)
                    attempt = next(
                        (
                            n
                            for c in job.checks
                            if (n := lifecycle.attempt_of(pr["metadata"]["name"], job.workload, c.name)) is not None
                        ),
                        None,
                    )
                    revoked = revoked or state == "CapacityRevoked"
                    job.requests.append(
                        RequestInfo(
                            pr["metadata"]["name"],
                            state,
                            reason,
                            message,
                            attempt,
                            lifecycle.queued_for(pr),
                            lifecycle.pod_count(pr),
                        )
                    )
            job.requests.sort(key=lambda r: (r.attempt or 0, r.name))
            wl_conds = conditions(wl)
            job.active = (wl.get("spec") or {}).get("active", True) is not False
            job.regions = regions_.dispatch(kube, wl) if regions_.is_dispatched(wl) else None
            job.phases = lifecycle.phases(wl, wl_conds) if job.active else ""
            for check in job.checks:
                attempts = [
                    n for r in job.requests if (n := lifecycle.attempt_of(r.name, job.workload, check.name)) is not None
                ]
                found = lifecycle.retries(check.retry_count, attempts, limits.get(check.name))
                if found is not None:
                    job.retries[check.name] = found
            if not job.active:
                job.deactivated = lifecycle.deactivation(
                    job.namespace,
                    job.workload,
                    wl_conds,
                    revoked,
                    limits,
                    (meta.get("annotations") or {}).get("provreq.kueue.x-k8s.io/maxRunDurationSeconds"),
                )
        cluster = (rj.get("status") or {}).get("rayClusterName", "")
        for pod in pods:
            labels = pod["metadata"].get("labels", {})
            ours = (cluster and labels.get("ray.io/cluster") == cluster) or labels.get("job-name") == job.name
            if pod["metadata"]["namespace"] == job.namespace and ours:
                node = pod["spec"].get("nodeName", "")
                job.pods.append((pod["metadata"]["name"], pod.get("status", {}).get("phase", ""), node or "-"))
                if node:
                    job.nodes[node] = node_pools.get(node, "-")
                    if node_plans.get(node):
                        job.node_plans[node] = node_plans[node]
        mine = [p for p in pods if p["metadata"]["namespace"] == job.namespace]
        submitters = [p for p in mine if p["metadata"].get("labels", {}).get("job-name") == job.name]
        log = trainlog.submitter_log(kube, job.namespace, submitters) if goodput else None
        if wl is not None and variants.is_parent(wl):
            job.concurrent = variants.fetch(kube, wl, [p["metadata"]["name"] for p in submitters], log)
        if goodput:
            job.goodput = goodput_.of_job(rj, wl, workloads, events, requests, log)
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


__all__ = ["ConditionInfo", "JobStatus", "admitted_on", "collect", "is_true", "provisioned"]
