"""`planb status`'s reads and joins: every list it needs, read once and kept as read (fetch), then each RayJob's own
objects picked out of them (join). Nothing here interprets: planb.status.snapshot_maps derives the cluster-wide maps
(retry limits, flavors' plans, queues' shapes, nodes' pools), and planb.status.report a job's status, from what this
returns, without another read but the few that belong to one job (its regions, its submitter's log, its variants,
its goodput)."""

from __future__ import annotations

from dataclasses import dataclass

from planb.kube import Kube, KubeError, Obj, items_if_allowed
from planb.status import admissions

KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
PROVREQ = "/apis/autoscaling.x-k8s.io/v1"
RAY = "/apis/ray.io/v1"


@dataclass(frozen=True)
class Snapshot:
    """What one `planb status` read, as read: the lists (a cluster-scoped one the caller may not read is empty)."""

    ns_path: str
    rayjobs: list[Obj]
    workloads: list[Obj]
    requests: list[Obj]
    admission_checks: list[Obj]
    provisioning_configs: list[Obj]  # Kueue's ProvisioningRequestConfigs
    flavors: list[Obj]
    local_queues: list[Obj]
    cluster_queues: list[Obj]
    pods: list[Obj]
    nodes: list[Obj]
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


def _checks(kube: Kube) -> tuple[list[Obj], list[Obj]]:
    """The AdmissionChecks and ProvisioningRequestConfigs; both empty when the caller may not read cluster-scoped
    config."""
    try:
        return kube.items(f"{KUEUE}/admissionchecks"), kube.items(f"{KUEUE}/provisioningrequestconfigs")
    except KubeError as exc:
        if exc.status in (401, 403):
            return [], []
        raise


def _readable(kube: Kube, path: str) -> list[Obj]:
    """The items at ``path``; empty when the caller may not read them (cluster-scoped Kueue objects)."""
    return items_if_allowed(kube, path) or []


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
    checks, configs = _checks(kube)
    flavors = _readable(kube, f"{KUEUE}/resourceflavors")
    local_queues = _readable(kube, f"{KUEUE}{ns_path}/localqueues")
    cluster_queues = _readable(kube, f"{KUEUE}/clusterqueues")
    pods = kube.items(f"/api/v1{ns_path}/pods")
    nodes = kube.items("/api/v1/nodes")
    return Snapshot(
        ns_path=ns_path,
        rayjobs=sorted(rayjobs, key=lambda r: (r["metadata"]["namespace"], r["metadata"]["name"])),
        workloads=workloads,
        requests=requests,
        admission_checks=checks,
        provisioning_configs=configs,
        flavors=flavors,
        local_queues=local_queues,
        cluster_queues=cluster_queues,
        pods=pods,
        nodes=nodes,
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
