"""The dispatcher's writing step (planb.regions.dispatcher.tick): the nominations a tick decided, each by Kueue's own
apply (``admission_apply``, as the field manager ``kueue-admission``, preconditioned on the resourceVersion
read: a Workload changed meanwhile answers 409 and is nominated again at the next look), then the ledger and the last
advice to ``kueue-system/planb-regions-ledger`` when they changed (``ledger_store.configmap``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from planb.kube import Kube, KubeError, Obj
from planb.regions.access.connection import KUEUE
from planb.regions.dispatcher.ledger_store import configmap
from planb.regions.dispatcher.view import Nomination, View

APPLY = "application/apply-patch+yaml"
#: Kueue's field manager for a Workload's admission status (pkg/constants/constants.go#L29: KueueName + "-admission").
FIELD_MANAGER = "kueue-admission"

#: The conditions Kueue's admission apply carries (patching.go#L36-L48), each copied when present.
ADMISSION_CONDITIONS = (
    "QuotaReserved",
    "BlockedOnPreemptionGates",
    "Evicted",
    "Admitted",
    "Preempted",
    "Requeued",
    "DeactivationTarget",
    "Finished",
    "PodsReady",
)


def write_tick(manager: Kube, nominations: Sequence[Nomination], view: View, say: Callable[[str], None]) -> View:
    """The nominations, then the ledger when `view` says it is behind; the view as written: each Workload's dispatch
    with the nomination written, the ledger no longer behind once its ConfigMap was written."""
    jobs = dict(view.jobs)
    for nomination in nominations:
        meta, regions, job = nomination.workload["metadata"], nomination.regions, jobs[nomination.uid]
        path = f"{KUEUE}/namespaces/{meta['namespace']}/workloads/{meta['name']}/status"
        query = {"fieldManager": FIELD_MANAGER, "force": "true"}
        body = admission_apply(nomination.workload, regions)
        try:
            manager.request("PATCH", path, body, query, content_type=APPLY)
        except KubeError as exc:
            if exc.status != 409:
                raise
            say(f"{job.name}: its Workload changed meanwhile; nominating again at the next look")
            continue
        said = ", ".join(regions) or "none (waiting to ask again)"
        if said != job.said:
            say(f"{job.name}: nominated {said}")
        jobs[nomination.uid] = replace(job, written=regions, said=said)
    view = replace(view, jobs=jobs)
    if not view.dirty:
        return view
    body = configmap(view.ledger, view.last)
    meta = body["metadata"]
    path = f"/api/v1/namespaces/{meta['namespace']}/configmaps/{meta['name']}"
    try:
        if manager.get(path) is None:
            manager.create(f"/api/v1/namespaces/{meta['namespace']}/configmaps", body)
        else:
            manager.merge_patch(path, {"data": body["data"]})
    except KubeError as exc:
        say(f"the ledger could not be written to {meta['namespace']}/{meta['name']}: {exc}")
        return view
    return replace(view, dirty=False)


def admission_apply(workload: Obj, nominated: Sequence[str], api_version: str = "kueue.x-k8s.io/v1beta2") -> Obj:
    """The server-side apply body Kueue's ``PatchAdmissionStatus`` would send (patching.go#L50-L75, #L105-L154) with
    ``nominatedClusterNames`` set to ``nominated``: identity, resourceVersion, labels and annotations, and the admission
    part of the status as read, so the apply as ``kueue-admission`` takes nothing of Kueue's away."""
    meta = workload["metadata"]
    status = workload.get("status") or {}
    # Never a null: the resourceVersion is what makes the apply conditional (a custom resource's /status drops the
    # uid: tests/integration/regions/test_status_preconditions.py), and a null would only clear a field.
    keys = ("name", "namespace", "uid", "generation", "resourceVersion")
    body_meta: Obj = {k: meta[k] for k in keys if meta.get(k) not in (None, "")}
    for key in ("labels", "annotations"):
        if meta.get(key):
            body_meta[key] = dict(meta[key])
    out: Obj = {}
    if status.get("admission"):
        out["admission"] = status["admission"]
    elif status.get("resourceRequests"):
        out["resourceRequests"] = status["resourceRequests"]
    requeue = status.get("requeueState") or {}
    if requeue.get("count") is not None or requeue.get("requeueAt") is not None:
        out["requeueState"] = requeue
    conditions = [c for c in status.get("conditions") or [] if c.get("type") in ADMISSION_CONDITIONS]
    if conditions:
        out["conditions"] = conditions
    for key in ("accumulatedPastExecutionTimeSeconds", "clusterName", "unhealthyNodes", "preemptionGates"):
        if status.get(key) not in (None, [], ""):
            out[key] = status[key]
    stats = (status.get("schedulingStats") or {}).get("evictions")
    if stats:
        out["schedulingStats"] = {"evictions": stats}
    if status.get("admissionChecks"):
        out["admissionChecks"] = status["admissionChecks"]
    if nominated:
        out["nominatedClusterNames"] = list(nominated)
    return {"apiVersion": api_version, "kind": "Workload", "metadata": body_meta, "status": out}
