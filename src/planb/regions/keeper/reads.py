"""What one keeper tick reads, before anything is decided or written (planb.regions.keeper.tick): the manager's
objects, and the regions' where a decision needs them, gathered into plain data (`Seen`).

The deciding is pure over it (release, quarantine, rejoin) and the writing one step after (writes). Each region is
read as planb.regions.access.connection reaches it, with the manager's kubeconfig Secret for it; a region that does
not answer, or answers objects planb cannot read, is recorded as unread (never raised): one region never stops the
others, and what it blocks the deciding says.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from planb.kube import Kube, Obj
from planb.kubeconfig import Connection
from planb.regions.access.connection import (
    KUEUE,
    RegionAccessError,
    RegionAnswers,
    RegionRead,
    read_regions,
    region_connection,
    region_kube,
)
from planb.regions.access.kueue_objects import ORIGIN, condition, holds_quota_evicted, owner_rayjob, owns
from planb.regions.keeper.options import RAY, KeeperSettings
from planb.regions.keeper.origin import checked_origin, quarantined, stored_waiting


@dataclass(frozen=True)
class Evicted:
    """A manager Workload under the keeper's check, evicted, that still holds its quota, and its RayJob on the manager
    (None: gone)."""

    workload: Obj
    namespace: str
    owner: str
    rayjob: Obj | None
    #: Whether the RayJob is the one the Workload's ownerReference names by uid (kueue_objects.owns).
    owned: bool

    @property
    def path(self) -> str:
        """The manager RayJob's path."""
        return f"{RAY}/namespaces/{self.namespace}/rayjobs/{self.owner}"

    @property
    def region_job(self) -> RegionRead:
        """Its RayJob in a region (the manager job's own key)."""
        return RegionRead(self.path)

    @property
    def region_clusters(self) -> RegionRead:
        """The RayClusters of its namespace in a region."""
        return RegionRead(f"{RAY}/namespaces/{self.namespace}/rayclusters", listing=True)


@dataclass(frozen=True)
class Seen:
    """One tick's reading, before anything is decided: the keeper's ConfigMap, origin and quarantined regions (and
    what each waits for); the
    MultiKueueClusters, their Active conditions, those Active, and since when each other one is not; the token each
    late region's kubeconfig Secret holds (None: planb cannot read it); the manager's Workloads, the evicted ones that
    hold quota (by uid); the MultiKueueConfig (None: missing); and each region's answers."""

    state: Obj
    origin: str
    away: list[str]
    #: What each quarantined region waits for, as the keeper's ConfigMap says.
    waiting: dict[str, str]
    clusters: dict[str, Obj]
    conditions: dict[str, Obj]
    active: frozenset[str]
    inactive_since: dict[str, float]
    tokens: dict[str, tuple[Connection, str] | None]
    workloads: list[Obj]
    evicted: dict[str, Evicted]
    config: Obj | None
    regions: dict[str, RegionAnswers]
    #: What a quarantined region that answers again is read for: its copies, RayJobs and RayClusters.
    rejoin: tuple[RegionRead, RegionRead, RegionRead]

    @property
    def listed(self) -> list[str]:
        """The MultiKueueConfig's clusters as read."""
        return [str(c) for c in ((self.config or {}).get("spec") or {}).get("clusters") or []]


def read(manager: Kube, settings: KeeperSettings, inactive_before: Mapping[str, float], now: float) -> Seen:
    """Everything one tick decides on, `inactive_before` since when each region was not Active as last read. Raises
    KeeperStateError without an origin, and the manager's KubeError. The regions read: for each evicted Workload
    whose RayJob the manager still has, every Active region (its RayJob and RayClusters there); each quarantined
    region that is Active again and out of the config (the copies this manager's Kueue made, by its origin label, and
    its RayJobs and RayClusters: the region token lists both anywhere)."""
    clusters = {str(c["metadata"]["name"]): c for c in manager.items(f"{KUEUE}/multikueueclusters")}
    workloads = manager.items(f"{KUEUE}/workloads")
    state = manager.get(settings.state_path)
    config = manager.get(settings.config_path)
    check = settings.admission_check
    conditions = {n: condition(c, "Active") for n, c in clusters.items()}
    owners = {str(w["metadata"].get("uid")): (w, o) for w in workloads if (o := owner_rayjob(w))}
    held = {
        uid: (w, o, str(w["metadata"]["namespace"])) for uid, (w, o) in owners.items() if holds_quota_evicted(w, check)
    }
    jobs = {uid: manager.get(f"{RAY}/namespaces/{ns}/rayjobs/{o}") for uid, (_, o, ns) in held.items()}
    evicted = {
        uid: Evicted(w, ns, o, jobs[uid], jobs[uid] is not None and owns(w, jobs[uid] or {}))
        for uid, (w, o, ns) in held.items()
    }
    state, origin = checked_origin(state, settings.origin, f"{settings.namespace}/{settings.config}-keeper")
    away, waiting = quarantined(state), stored_waiting(state)
    active = frozenset(n for n, c in conditions.items() if c.get("status") == "True")
    inactive = {n: since for n, since in inactive_before.items() if n not in active}
    inactive |= {n: now for n in clusters if n not in active and n not in inactive}
    late = [n for n, since in inactive.items() if now - since >= settings.lost_after and n in clusters]
    wanted_reads: dict[str, list[RegionRead]] = {}
    for job in evicted.values():
        for region in [] if job.rayjob is None else sorted(active, key=list(clusters).index):
            wanted_reads.setdefault(region, []).extend([job.region_job, job.region_clusters])
    listed = [str(c) for c in ((config or {}).get("spec") or {}).get("clusters") or []]
    rejoin = (
        RegionRead(f"{KUEUE}/workloads", listing=True, selector=f"{ORIGIN}={origin}"),
        RegionRead(f"{RAY}/rayjobs", listing=True),
        RegionRead(f"{RAY}/rayclusters", listing=True),
    )
    for name in away if config is not None else []:
        if name in active and name not in listed:
            wanted_reads.setdefault(name, []).extend(rejoin)
    regions = read_regions(manager, wanted_reads, region_kube)
    tokens: dict[str, tuple[Connection, str] | None] = {}
    for name in late:
        try:
            tokens[name] = region_connection(manager, name)
        except RegionAccessError:
            tokens[name] = None  # no token to read: planb cannot tell, so the region counts as lost as before
    found = (conditions, active, inactive, tokens, workloads, evicted, config, regions, rejoin)
    return Seen(state, origin, away, waiting, clusters, *found)
