"""`planb status`'s reads: everything one look shows, read once from the API server and kept as read. First every
list (fetch), then each RayJob's own objects picked out of them (objects_of) and the reads of that job alone (its
submitters' logs, its variants, its regions), then the regions' tokens and the ledger where asked. planb.status.report
interprets what this returns, with no read of its own.

The choices made here are which objects to read, never what they mean: a region's copy is read only where it can
still run the job (the winner once one won, else each region the keeper has not quarantined), a log's tail only when
its head fills HEAD_BYTES, a ClusterQueue only under a Kubernetes name."""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass, field

from planb.errors import PlanbError
from planb.kube import Kube, KubeError, Obj
from planb.regions.access.connection import KUEUE_NAMESPACE, region_connection, region_kube
from planb.regions.access.kubeconfig import is_dns_subdomain
from planb.regions.calendar.watch import CONFIGMAP as CALENDAR_CONFIGMAP
from planb.regions.dispatcher import ledger_store
from planb.regions.keeper.options import KeeperSettings
from planb.regions.keeper.quarantine import quarantined

KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
PROVREQ = "/apis/autoscaling.x-k8s.io/v1"
RAY = "/apis/ray.io/v1"
#: The label Kueue puts on a concurrent-ladder job's own Workload (planb.status.variants).
PARENT_LABEL = "kueue.x-k8s.io/concurrent-admission-parent"
#: How much of the start of a submitter log is read (the kubelet's limitBytes), and how many lines of its end after
#: that (planb.status.trainlog says why: the resumes come first, the latest figure last).
HEAD_BYTES = 1 << 20
TAIL_LINES = 200


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


@dataclass(frozen=True)
class RegionRead:
    """One region's copy of a dispatched Workload, read from that region: the copy (None: the region has none), or
    why it could not be read."""

    region: str
    copy: Obj | None
    error: str = ""


@dataclass(frozen=True)
class DispatchReads:
    """What the manager and the regions hold of one dispatched Workload (planb.status.regions interprets it)."""

    #: Every region: the MultiKueueClusters', else the Workload's nominated ones and its winner.
    regions: list[str]
    #: The keeper's ConfigMap ({} when it cannot be read) and the regions it quarantined, as it lists them.
    keeper: Obj
    quarantined: list[str]
    #: The copies read: the winner's once one won, else each region's but the quarantined.
    copies: list[RegionRead]
    #: While the regions race: the keeper's calendar ConfigMap (None: none, or not readable).
    calendar: Obj | None


@dataclass(frozen=True)
class LogRead:
    """A submitter pod's log with the kubelet's timestamps: its first HEAD_BYTES and, when it goes on, its last
    TAIL_LINES lines."""

    head: str
    tail: str | None = None


@dataclass(frozen=True)
class VariantReads:
    """What a concurrent-ladder job's variants are read from (planb.status.variants)."""

    cluster_queue: Obj | None  # its ClusterQueue, for the flavors' order (None: not read)
    variants: list[Obj]  # its variant Workloads: those of the namespace's Workloads it owns
    events: list[Obj]  # the namespace's Events


@dataclass(frozen=True)
class JobReads:
    """One RayJob: its objects out of the Snapshot, and the reads that belong to it alone."""

    objects: JobObjects
    dispatch: DispatchReads | None  # on a MultiKueue manager, for a dispatched Workload
    logs: list[LogRead] | None  # the submitters' logs, oldest pod first (None: neither goodput nor variants asked)
    variants: VariantReads | None  # for a concurrent-ladder job


@dataclass(frozen=True)
class RegionToken:
    """A region's MultiKueue token, as its kubeconfig Secret on the manager holds it."""

    region: str
    secret: str  # "kueue-system/<name>"
    token: str = field(repr=False)  # never in a repr (a log line, a traceback's locals)


@dataclass(frozen=True)
class Reading:
    """Everything one look read."""

    snapshot: Snapshot | None  # None when no RayJob matches (or the jobs were not asked)
    jobs: list[JobReads]
    goodput: bool  # whether the jobs' goodput was asked (their logs and Events read)
    tokens: list[RegionToken]
    ledger: ledger_store.Stored | None  # the manager's obtainability ledger (--capacity)


def read(
    kube: Kube,
    namespace: str | None = None,
    name: str | None = None,
    goodput: bool = False,
    *,
    jobs: bool = True,
    tokens: bool = False,
    ledger: bool = False,
) -> Reading:
    """One look's reads, in this order: the jobs (in one namespace, or all; one job), the regions' tokens, the
    ledger."""
    snapshot = fetch(kube, namespace, name, goodput) if jobs else None
    found = [_job_reads(kube, snapshot, rayjob, goodput) for rayjob in snapshot.rayjobs] if snapshot else []
    return Reading(
        snapshot, found, goodput, region_tokens(kube) if tokens else [], ledger_store.read(kube) if ledger else None
    )


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
    checks = _allowed(kube, f"{KUEUE}/admissionchecks") or []
    configs = _allowed(kube, f"{KUEUE}/provisioningrequestconfigs") or []
    flavors = _allowed(kube, f"{KUEUE}/resourceflavors") or []
    local_queues = _allowed(kube, f"{KUEUE}{ns_path}/localqueues") or []
    cluster_queues = _allowed(kube, f"{KUEUE}/clusterqueues") or []
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
        events=_allowed(kube, f"/api/v1{ns_path}/events") if goodput else None,
    )


def _allowed(kube: Kube, path: str) -> list[Obj] | None:
    """The collection's objects; None when the caller may not read them (401 or 403: a job author's credentials often
    cannot list cluster-scoped Kueue objects or Events)."""
    try:
        return kube.items(path)
    except KubeError as exc:
        if exc.status in (401, 403):
            return None
        raise


def owned_by(obj: Obj, kind: str, name: str) -> bool:
    return any(o.get("kind") == kind and o.get("name") == name for o in obj["metadata"].get("ownerReferences", []))


def objects_of(snapshot: Snapshot, rayjob: Obj) -> JobObjects:
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


def _job_reads(kube: Kube, snapshot: Snapshot, rayjob: Obj, goodput: bool) -> JobReads:
    """The job's objects, then its own reads: its submitters' logs (for goodput and a concurrent job's variants), its
    variants, its regions."""
    objs = objects_of(snapshot, rayjob)
    wl = objs.workload
    dispatched = wl is not None and is_dispatched(wl)
    parent = wl is not None and (wl["metadata"].get("labels") or {}).get(PARENT_LABEL) == "true"
    logs = _logs(kube, objs.submitters) if goodput or parent else None
    variants = variant_reads(kube, wl) if wl is not None and parent else None
    return JobReads(objs, dispatch_reads(kube, wl) if wl is not None and dispatched else None, logs, variants)


def is_dispatched(workload: Obj) -> bool:
    """Whether MultiKueue nominated regions for the Workload, or placed it in one (its regions' copies are read)."""
    status = workload.get("status") or {}
    return bool(status.get("clusterName") or status.get("nominatedClusterNames"))


def _logs(kube: Kube, pods: list[Obj]) -> list[LogRead]:
    """The submitter pods' logs, oldest pod first; a log the API does not serve is left out."""
    found = []
    for pod in sorted(pods, key=lambda p: str(p["metadata"].get("creationTimestamp") or "")):
        meta = pod["metadata"]
        try:
            found.append(_bounded(kube, f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/log"))
        except KubeError:
            continue
    return found


def _bounded(kube: Kube, path: str) -> LogRead:
    """The log's first HEAD_BYTES and, if it goes on, its last TAIL_LINES lines."""
    head = kube.text(path, {"timestamps": "true", "limitBytes": str(HEAD_BYTES)})
    if len(head.encode()) < HEAD_BYTES:
        return LogRead(head)
    return LogRead(head, kube.text(path, {"timestamps": "true", "tailLines": str(TAIL_LINES)}))


def variant_reads(kube: Kube, parent: Obj) -> VariantReads:
    """The parent's ClusterQueue, its variant Workloads (picked out of the namespace's as objects_of picks a job's)
    and the namespace's Events (the job's submitters' logs are _job_reads')."""
    ns, parent_name = parent["metadata"]["namespace"], parent["metadata"]["name"]
    name = str(((parent.get("status") or {}).get("admission") or {}).get("clusterQueue") or "")
    # planb's policy (as planb.regions.dispatcher.tick reads a LocalQueue's): the name goes into a URL only as a
    # Kubernetes name (DNS-1123 subdomain), quoted, because whoever may write the Workload's status chooses it
    # (``..`` reaches another resource); another is not read, and the variants keep their flavors' names' order.
    cq = kube.get(f"{KUEUE}/clusterqueues/{urllib.parse.quote(name, safe='')}") if is_dns_subdomain(name) else None
    mine = [w for w in kube.items(f"{KUEUE}/namespaces/{ns}/workloads") if owned_by(w, "Workload", parent_name)]
    return VariantReads(cq, mine, kube.items(f"/api/v1/namespaces/{ns}/events"))


def dispatch_reads(kube: Kube, workload: Obj) -> DispatchReads:
    """A dispatched Workload's regions, the keeper's quarantine, the calendar ConfigMap while the regions race, and
    the copies that can still run the job."""
    status = workload.get("status") or {}
    winner = str(status.get("clusterName") or "")
    nominated = [str(n) for n in status.get("nominatedClusterNames") or []]
    try:
        everyone = sorted(c["metadata"]["name"] for c in kube.items(f"{KUEUE}/multikueueclusters"))
    except KubeError:
        everyone = []
    everyone = everyone or sorted({*nominated, *([winner] if winner else [])})
    keeper = keeper_state(kube)
    calendar = None if winner else _calendar(kube)
    away = quarantined(keeper)
    ns, name = workload["metadata"]["namespace"], workload["metadata"]["name"]
    readable = [region for region in everyone if region == winner or (not winner and region not in away)]
    copies = [region_read(kube, region, ns, name) for region in readable]
    return DispatchReads(everyone, keeper, away, copies, calendar)


def keeper_state(kube: Kube, config: str = KeeperSettings.config) -> Obj:
    """The keeper's ConfigMap of the MultiKueueConfig ``config`` (``kueue-system/<config>-keeper``); {} when it
    cannot be read: a user without access to Kueue's namespace sees no quarantine."""
    try:
        return kube.get(f"/api/v1/namespaces/{KeeperSettings.namespace}/configmaps/{config}-keeper") or {}
    except PlanbError:
        return {}


def region_read(kube: Kube, region: str, namespace: str, name: str) -> RegionRead:
    """One region's copy of the Workload ``namespace/name``, read from that region."""
    try:
        return RegionRead(region, region_kube(kube, region).get(f"{KUEUE}/namespaces/{namespace}/workloads/{name}"))
    except PlanbError as exc:  # a region that does not answer, no kubeconfig for it, a bad one
        return RegionRead(region, None, str(exc))


def _calendar(kube: Kube) -> Obj | None:
    try:
        return kube.get(f"/api/v1/namespaces/{KUEUE_NAMESPACE}/configmaps/{CALENDAR_CONFIGMAP}")
    except KubeError as exc:
        if exc.status not in (401, 403):
            raise
        return None


def region_tokens(kube: Kube) -> list[RegionToken]:
    """Each region's token, from its MultiKueueCluster's kubeconfig Secret on the manager. None when the manager has
    no MultiKueueClusters or the caller may not read them; a region whose Secret cannot be read or holds a kubeconfig
    planb refuses is left out."""
    try:
        clusters = kube.items(f"{KUEUE}/multikueueclusters")
    except KubeError:  # not a MultiKueue manager (no such resource), not allowed, or it does not answer
        return []
    found = []
    for name in sorted(str((c.get("metadata") or {}).get("name") or "") for c in clusters):
        try:
            conn, source = region_connection(kube, name)
        except PlanbError:
            continue
        found.append(RegionToken(name, source.removeprefix("Secret "), conn.token))
    return found
