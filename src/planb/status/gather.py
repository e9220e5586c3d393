"""`planb status`'s reads and joins: every list it needs, read once (fetch), then each RayJob's own objects picked
out of them (join). planb.status.report derives a job's status from what this returns, without another read but
the few that belong to one job (its regions, its submitter's log, its variants, its goodput)."""

from __future__ import annotations

from dataclasses import dataclass

from planb.failover.names import PLAN_LABEL
from planb.kube import Kube, KubeError, Obj, items_if_allowed
from planb.status import admissions, lifecycle, shapes

KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
PROVREQ = "/apis/autoscaling.x-k8s.io/v1"
RAY = "/apis/ray.io/v1"
NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"


@dataclass(frozen=True)
class Snapshot:
    """What one `planb status` read: the lists, and the maps derived from the cluster-scoped ones."""

    ns_path: str
    rayjobs: list[Obj]
    workloads: list[Obj]
    requests: list[Obj]
    limits: dict[str, int]  # backoffLimitCount per provisioning check
    flavor_plans: dict[str, str]  # ResourceFlavor -> the plan it selects
    queues: shapes.Queues
    pods: list[Obj]
    node_pools: dict[str, str]  # node -> its GKE node pool ('-' when unlabelled)
    node_plans: dict[str, str]  # node -> its plan ('' when unlabelled)
    events: list[Obj] | None  # the admission events, read only for goodput


@dataclass(frozen=True)
class JobObjects:
    """One RayJob and what belongs to it, picked out of a Snapshot."""

    rayjob: Obj
    workload: Obj | None  # the Workload the RayJob owns
    requests: list[Obj]  # the ProvisioningRequests that Workload owns
    pods: list[Obj]  # the job's pods: its Ray cluster's, and its submitter's
    submitters: list[Obj]  # the submitter pods (label job-name)


def owned_by(obj: Obj, kind: str, name: str) -> bool:
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
    out = {}
    for flavor in flavors:
        plan = ((flavor.get("spec") or {}).get("nodeLabels") or {}).get(PLAN_LABEL)
        if plan:
            out[flavor["metadata"]["name"]] = str(plan)
    return out


def fetch(kube: Kube, namespace: str | None, name: str | None, goodput: bool) -> Snapshot | None:
    """Every list `planb status` reads (in one namespace, or all); None when no RayJob matches."""
    ns_path = f"/namespaces/{namespace}" if namespace else ""
    rayjobs = kube.items(f"{RAY}{ns_path}/rayjobs")
    if name:
        rayjobs = [r for r in rayjobs if r["metadata"]["name"] == name]
    if not rayjobs:
        return None
    workloads = kube.items(f"{KUEUE}{ns_path}/workloads")
    requests = kube.items(f"{PROVREQ}{ns_path}/provisioningrequests")
    limits = _retry_limits(kube)
    flavors = _readable(kube, f"{KUEUE}/resourceflavors")
    queues = shapes.queues(
        _readable(kube, f"{KUEUE}{ns_path}/localqueues"), _readable(kube, f"{KUEUE}/clusterqueues"), flavors
    )
    pods = kube.items(f"/api/v1{ns_path}/pods")
    nodes = kube.items("/api/v1/nodes")
    return Snapshot(
        ns_path=ns_path,
        rayjobs=sorted(rayjobs, key=lambda r: (r["metadata"]["namespace"], r["metadata"]["name"])),
        workloads=workloads,
        requests=requests,
        limits=limits,
        flavor_plans=_flavor_plans(flavors),
        queues=queues,
        pods=pods,
        node_pools={n["metadata"]["name"]: n["metadata"].get("labels", {}).get(NODEPOOL_LABEL, "-") for n in nodes},
        node_plans={n["metadata"]["name"]: n["metadata"].get("labels", {}).get(PLAN_LABEL, "") for n in nodes},
        events=admissions.events(kube, ns_path) if goodput else None,
    )


def join(snapshot: Snapshot, rayjob: Obj) -> JobObjects:
    """The RayJob's own Workload, ProvisioningRequests and pods, out of the snapshot."""
    meta = rayjob["metadata"]
    namespace, name = meta["namespace"], meta["name"]
    workload = next(
        (w for w in snapshot.workloads if w["metadata"]["namespace"] == namespace and owned_by(w, "RayJob", name)),
        None,
    )
    requests = []
    if workload is not None:
        wl_name = workload["metadata"]["name"]
        requests = [
            pr
            for pr in snapshot.requests
            if pr["metadata"]["namespace"] == namespace and owned_by(pr, "Workload", wl_name)
        ]
    cluster = (rayjob.get("status") or {}).get("rayClusterName", "")
    mine = [p for p in snapshot.pods if p["metadata"]["namespace"] == namespace]
    pods = [
        p
        for p in mine
        if (cluster and p["metadata"].get("labels", {}).get("ray.io/cluster") == cluster)
        or p["metadata"].get("labels", {}).get("job-name") == name
    ]
    submitters = [p for p in mine if p["metadata"].get("labels", {}).get("job-name") == name]
    return JobObjects(rayjob, workload, requests, pods, submitters)
