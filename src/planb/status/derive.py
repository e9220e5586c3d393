"""One RayJob's status (JobStatus) derived from its reads (planb.status.gather) and the look's cluster-wide maps
(planb.status.snapshot_maps), with no read: its own objects as they stand, then what Kueue's records say of its way
(planb.status.lifecycle), its shape, its regions, its variants and its goodput."""

from __future__ import annotations

from planb.failover.names import AFTER_ANNOTATION as FAILOVER_AFTER
from planb.failover.names import MOVED_ANNOTATION as FAILOVER_MOVED
from planb.failover.names import move_message
from planb.kube import Obj
from planb.kube_objects import conditions, parse_time
from planb.status import goodput as goodput_
from planb.status import lifecycle, shapes, trainlog, variants
from planb.status import regions as regions_
from planb.status.gather import JobReads, Snapshot
from planb.status.job_status import CheckInfo, ConditionInfo, JobStatus, PodSetInfo, RequestInfo
from planb.status.snapshot_maps import Maps

#: The chart's reason for keeping a multi-slice job off the DWS plans (charts/planb planb.offDwsReason).
OFF_DWS_ANNOTATION = "planb.dev/off-dws"


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


def _own_parts(job: JobStatus, wl: Obj | None, pods: list[Obj], maps: Maps) -> None:
    """What the job's objects say as they stand: its Workload's name, PodSets' flavors, checks and spec.active, and
    each pod's phase, node, and that node's pool and plan."""
    if wl is not None:
        job.workload = str(wl["metadata"]["name"])
        for psa in ((wl.get("status") or {}).get("admission") or {}).get("podSetAssignments", []):
            job.podsets.append(PodSetInfo(psa["name"], int(psa.get("count", 0)), dict(psa.get("flavors", {}))))
        job.checks = [
            CheckInfo(
                check["name"],
                check.get("state", ""),
                check.get("message", ""),
                int(check.get("retryCount") or 0),
                check.get("requeueAfterSeconds"),
            )
            for check in (wl.get("status") or {}).get("admissionChecks", [])
        ]
        job.active = (wl.get("spec") or {}).get("active", True) is not False
    for pod in pods:
        node = pod["spec"].get("nodeName", "")
        job.pods.append((pod["metadata"]["name"], pod.get("status", {}).get("phase", ""), node or "-"))
        if node:
            job.nodes[node] = maps.node_pools.get(node, "-")
            if maps.node_plans.get(node):
                job.node_plans[node] = maps.node_plans[node]


def _workload(job: JobStatus, wl: Obj, owned: list[Obj], limits: dict[str, int], max_run: str | None) -> None:
    """What Kueue's conditions and the ProvisioningRequests say of the job's way (planb.status.lifecycle): its state,
    conditions, requests, phases, retries and, once deactivated, why and how to re-queue it."""
    workload, conds = str(job.workload), conditions(wl)
    job.state, job.reason = lifecycle.workload_state(wl, conds)
    job.conditions = [
        ConditionInfo(
            str(c.get("type", "")),
            str(c.get("status", "")),
            str(c.get("reason", "")),
            parse_time(c.get("lastTransitionTime")),
        )
        for c in (wl.get("status") or {}).get("conditions") or []
    ]
    requests = []
    for pr in owned:
        state, reason, message = lifecycle.request_state(pr)
        name = pr["metadata"]["name"]
        attempts = (lifecycle.attempt_of(name, workload, c.name) for c in job.checks)
        attempt = next((n for n in attempts if n is not None), None)
        requests.append(
            RequestInfo(name, state, reason, message, attempt, lifecycle.queued_for(pr), lifecycle.pod_count(pr))
        )
    job.requests = sorted(requests, key=lambda r: (r.attempt or 0, r.name))
    job.phases = lifecycle.phases(wl, conds) if job.active else ""
    for check in job.checks:
        numbers = (lifecycle.attempt_of(r.name, workload, check.name) for r in job.requests)
        found = lifecycle.retries(check.retry_count, [n for n in numbers if n is not None], limits.get(check.name))
        if found is not None:
            job.retries[check.name] = found
    if not job.active:
        revoked = any(r.state == "CapacityRevoked" for r in job.requests)
        job.deactivated = lifecycle.deactivation(job.namespace, workload, conds, revoked, limits, max_run)


def derive(reads: JobReads, maps: Maps, snapshot: Snapshot, goodput: bool) -> JobStatus:
    """A job's status from its reads and the snapshot's maps alone, no read: its objects as they stand, then what
    Kueue's records say of its way (lifecycle), its shape (shapes), its regions, its variants and, with ``goodput``,
    its goodput."""
    objs = reads.objects
    rj, wl = objs.rayjob, objs.workload
    meta = rj["metadata"]
    annotations = meta.get("annotations") or {}
    job = JobStatus(
        namespace=meta["namespace"],
        name=meta["name"],
        queue=meta.get("labels", {}).get("kueue.x-k8s.io/queue-name", "-"),
        suspended=bool(rj["spec"].get("suspend", False)),
        ray_status=_ray_status(rj.get("status") or {}),
        moved=_move_note(annotations),
        flavor_plans=maps.flavor_plans,
        off_dws=annotations.get(OFF_DWS_ANNOTATION, ""),
    )
    _own_parts(job, wl, objs.pods, maps)
    if wl is not None:
        _workload(job, wl, objs.requests, maps.limits, annotations.get("provreq.kueue.x-k8s.io/maxRunDurationSeconds"))
    job.moved_at = parse_time(annotations.get(FAILOVER_MOVED))
    job.shape = shapes.job_shape(rj)
    job.profile = shapes.profile_of(job.shape, meta.get("labels", {}).get(shapes.PROFILE_LABEL, ""))
    job.cluster_queue, job.cluster_shapes, job.cluster_profile = maps.queues.of(job.namespace, job.queue)
    job.team = maps.queues.team(job.namespace, job.cluster_queue)
    if wl is not None and reads.dispatch is not None:
        job.regions = regions_.dispatch(wl, reads.dispatch)
    log = trainlog.newest_log(reads.logs) if reads.logs is not None else None
    if wl is not None and reads.variants is not None:
        job.concurrent = variants.of_parent(wl, reads.variants, log)
    if goodput:
        job.goodput = goodput_.of_job(rj, wl, job.concurrent, snapshot.events, snapshot.requests, log)
    return job


def _move_note(annotations: dict[str, str]) -> str:
    """The failover controller's annotations as one line (planb.failover.controller writes them)."""
    if FAILOVER_MOVED not in annotations:
        return ""
    try:
        after = float(annotations.get(FAILOVER_AFTER, "0"))
    except ValueError:
        after = 0.0
    return f"{move_message(after)} (at {annotations[FAILOVER_MOVED]})"
