"""The dispatcher's writing step (planb.regions.dispatcher.tick): the nominations a tick decided, each by Kueue's own
apply (``nomination.admission_apply``, as the field manager ``kueue-admission``, preconditioned on the resourceVersion
read: a Workload changed meanwhile answers 409 and is nominated again at the next look), then the ledger and the last
advice to ``kueue-system/planb-regions-ledger`` when they changed (``ledger_store.configmap``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from planb.kube import Kube, KubeError
from planb.regions.access.connection import KUEUE
from planb.regions.dispatcher import nomination as dp
from planb.regions.dispatcher.ledger_store import configmap
from planb.regions.dispatcher.view import Nomination, View

APPLY = "application/apply-patch+yaml"


def write_tick(manager: Kube, nominations: Sequence[Nomination], view: View, say: Callable[[str], None]) -> View:
    """The nominations, then the ledger when `view` says it is behind; the view as written: each Workload's dispatch
    with the nomination written, the ledger no longer behind once its ConfigMap was written."""
    jobs = dict(view.jobs)
    for nomination in nominations:
        meta, regions, job = nomination.workload["metadata"], nomination.regions, jobs[nomination.uid]
        path = f"{KUEUE}/namespaces/{meta['namespace']}/workloads/{meta['name']}/status"
        query = {"fieldManager": dp.FIELD_MANAGER, "force": "true"}
        body = dp.admission_apply(nomination.workload, regions)
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
