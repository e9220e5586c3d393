"""What one dispatcher tick reads before anything is decided (planb.regions.dispatcher.tick): the ledger's ConfigMap at
the first tick, and for each Workload of the MultiKueue check what its decisions need, as plain data (`Look`): the
winner's copy, once Kueue set ``clusterName``; for a Workload planned now, each Active region's ladder (its LocalQueue's
ClusterQueue, read with the region's MultiKueue access), Google's advice and the reservations' rooms per pair; the
copies of the regions its plan waits on; the reservation pairs read full.

A region's answer that fails is kept as the exception (never raised): one region never stops the others, and the
decision says what it could not read (``kueue_objects.unreadable``).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from planb.catalog import gpu, tpu
from planb.catalog.profiles import PROFILES
from planb.kube import Kube, KubeError, Obj
from planb.printable import printable
from planb.regions.access.connection import KUEUE, RegionAccessError
from planb.regions.access.kubeconfig import is_dns_subdomain
from planb.regions.access.kueue_objects import condition, is_active
from planb.regions.dispatcher import ledger_store as cs
from planb.regions.dispatcher.advise import Advise
from planb.regions.dispatcher.google_advice import Advice, Candidate
from planb.regions.dispatcher.job_dispatch import DispatchSettings, JobDispatch
from planb.regions.dispatcher.ledger import Key
from planb.regions.dispatcher.offer_plan import regions_in_order, waiting
from planb.regions.dispatcher.reservation_reads import Rooms
from planb.regions.dispatcher.reservation_room import ReservationRef

#: A region's copy of a Workload as read (None: none there), or why it could not be read.
Copy = Obj | None | Exception
#: The rung of a region whose ladder planb could not read (its ClusterQueue): the region's ladder as a whole.
LADDER = "ladder"

#: The resources a rung's flavor is chosen for (the job's workers; the head's CPU flavor is no rung).
ACCELERATORS = ("google.com/tpu", "nvidia.com/gpu")


class NotAName(ValueError):
    """A name read from a cluster that is not a Kubernetes object name (DNS-1123 subdomain)."""


@dataclass
class Look:
    """A Workload of the MultiKueue check as one tick read it: its check's state, the region Kueue admitted it in
    (``clusterName``, "" before) and the rung of that region's copy ("" unknown), whether Kueue would sync it now, the
    regions nominated; for one planned this tick, its shape, pairs and their reservations; the copies of the regions
    its plan waits on; and the reservation pairs read full."""

    workload: Obj
    uid: str
    state: str
    winner: str
    awaits: bool
    nominated: list[str]
    winner_rung: str = ""
    shape: str = ""
    candidates: list[Candidate] | None = None
    reservations: dict[Key, ReservationRef] = field(default_factory=dict)
    copies: dict[str, Copy] = field(default_factory=dict)
    full: list[Key] = field(default_factory=list)

    @property
    def name(self) -> str:
        meta = self.workload["metadata"]
        return f"{meta['namespace']}/{meta['name']}"


@dataclass
class Reading:
    """One tick's reading: the regions of the MultiKueueConfig Kueue reaches, each Workload of the check, and the
    ledger's ConfigMap when the dispatcher has not read it yet."""

    active: list[str]
    looks: list[Look]
    stored: cs.Stored | None


def segment(name: str) -> str:
    """`name` quoted as one URL path segment, once it is a DNS-1123 subdomain (else NotAName, its text escaped)."""
    if not is_dns_subdomain(name):
        raise NotAName(f"{printable(repr(name[:100]), one_line=True)} is not a Kubernetes name (DNS-1123 subdomain)")
    return urllib.parse.quote(name, safe="")


@dataclass(frozen=True)
class Sources:
    """Where the dispatcher reads: the manager (its ledger), the regions (`connect`: a client for a region, made once a
    region a tick), Google's advice (`advise`) and the reservations' rooms (`rooms`, None: none to read)."""

    manager: Kube
    settings: DispatchSettings
    advise: Advise
    rooms: Rooms | None
    connect: Callable[[Kube, str], Kube]


def read_tick(
    sources: Sources,
    workloads: Sequence[Obj],
    clusters: Mapping[str, Obj],
    config: Obj,
    jobs: Mapping[str, JobDispatch],
    first: bool,
    now: float,
) -> Reading:
    """What this tick decides on, `jobs` the dispatches under way (read, never changed); the ledger's ConfigMap when
    `first`."""
    kubes: dict[str, Kube] = {}
    listed = [str(c) for c in (config.get("spec") or {}).get("clusters") or []]
    active = [c for c in listed if c in clusters and is_active(clusters[c])]
    looks = []
    for workload in workloads:
        look = look_at(sources, kubes, workload, jobs, active, now)
        if look is not None:
            looks.append(look)
    stored = cs.read(sources.manager) if first else None
    return Reading(active, looks, stored)


def look_at(
    sources: Sources,
    kubes: dict[str, Kube],
    workload: Obj,
    jobs: Mapping[str, JobDispatch],
    active: list[str],
    now: float,
) -> Look | None:
    """One Workload as this tick reads it (None: not one of the MultiKueue check's)."""
    check, rooms = sources.settings.admission_check, sources.rooms
    state = mk_check(workload, check)
    if not state:
        return None
    uid = str(workload["metadata"].get("uid"))
    winner = str((workload.get("status") or {}).get("clusterName") or "")
    look = Look(workload, uid, str(state.get("state") or ""), winner, awaits_nomination(workload, check), [])
    look.nominated = nominated_now(workload)
    job = jobs.get(uid)
    if winner and job is not None:
        look.winner_rung = _rung(_copy(sources, kubes, winner, workload))
    elif look.awaits and job is None and active:
        look.shape = job_shape(workload)
        look.candidates, look.reservations = _pairs(sources, kubes, workload, look.shape, active, now)
    if look.awaits and (job is not None or look.candidates is not None):
        waits = regions_in_order(job.plan, waiting(job.attempts)) if job else look.nominated
        look.copies = {r: _copy(sources, kubes, r, workload) for r in waits if r in active}
        reservations = job.reservations if job is not None else look.reservations
        look.full = [] if rooms is None else rooms.full(reservations, now)
    return look


def _pairs(
    sources: Sources, kubes: dict[str, Kube], workload: Obj, shape: str, active: list[str], now: float
) -> tuple[list[Candidate], dict[Key, ReservationRef]]:
    """A new plan's pairs: every Active region times its ladder's rungs, each with Google's advice and, for a
    reservation rung, its room; and the reservation each such pair consumes."""
    meta, rooms = workload["metadata"], sources.rooms
    candidates, reservations = [], {}
    for region in active:
        queue = str((workload.get("spec") or {}).get("queueName"))
        rungs, why = _rungs(sources, kubes, region, meta["namespace"], queue)
        refs = _reservations(sources.settings, region) if rooms is not None and not why and shape else {}
        for rung in rungs:
            key = Key(region, rung, shape or "unknown")
            if why:
                advice = Advice.absent(why)
            elif not shape:
                advice = Advice.absent("the job selects no accelerator of planb's catalog")
            else:
                advice = sources.advise(key)
            if rung in refs:
                reservations[key] = refs[rung]
            ref = reservations.get(key)
            room = None if rooms is None or ref is None else rooms.room(key, ref, now)
            candidates.append(Candidate(key, advice, room))
    return candidates, reservations


def _rungs(sources: Sources, kubes: dict[str, Kube], region: str, namespace: str, queue: str) -> tuple[list[str], str]:
    """The region's rungs for a job of ``queue`` (its LocalQueue there, of the manager's name), or the ladder as
    one pair and why it could not be read."""
    try:
        kube = _region(sources, kubes, region)
        local = kube.get(f"{KUEUE}/namespaces/{segment(namespace)}/localqueues/{segment(queue)}")
        cq_name = ((local or {}).get("spec") or {}).get("clusterQueue")
        # planb's policy: the name the region's LocalQueue gives goes into a URL only as a
        # Kubernetes name, quoted, because whoever may write that LocalQueue chooses it (``..`` reaches another
        # resource).
        cq = kube.get(f"{KUEUE}/clusterqueues/{segment(str(cq_name))}") if cq_name else None
        rungs = ladder_rungs(cq or {})
    except NotAName as exc:
        return [LADDER], f"{region}'s ladder could not be read: {exc}"
    except (RegionAccessError, KubeError) as exc:
        return [LADDER], f"{region}'s ladder could not be read: {exc}"
    except Exception as exc:  # planb's policy: any error reading a region's objects: unread (as a copy)
        return [LADDER], f"{region}'s ladder could not be read: planb cannot read it ({type(exc).__name__})"
    if not rungs:
        return [LADDER], f"{region} has no ClusterQueue for LocalQueue {namespace}/{queue} with an accelerator"
    return rungs, ""


def _reservations(settings: DispatchSettings, region: str) -> dict[str, ReservationRef]:
    """The reservation each of the region's rungs consumes, as the manager's configuration names it (never a
    region's objects: ``planb.regions.dispatcher.reservation_reads``)."""
    return {rung: ref for (where, rung), ref in settings.reservations.items() if where == region}


def _copy(sources: Sources, kubes: dict[str, Kube], region: str, workload: Obj) -> Copy:
    """The region's copy of the Workload (same namespace and name), or why it could not be read."""
    meta = workload["metadata"]
    try:
        return _region(sources, kubes, region).get(f"{KUEUE}/namespaces/{meta['namespace']}/workloads/{meta['name']}")
    # planb's policy: any error reading a region's copy leaves it unread, because one must never stop the others
    except Exception as exc:
        return exc


def _rung(copy: Copy) -> str:
    """The rung the winner's copy was admitted on ("" when planb cannot tell)."""
    try:
        if isinstance(copy, Exception):
            raise copy
        return admitted_rung(copy)
    except Exception:  # planb's policy: any error reading the winner's copy: its rung unknown (as a copy)
        return ""


def _region(sources: Sources, kubes: dict[str, Kube], region: str) -> Kube:
    if region not in kubes:
        kubes[region] = sources.connect(sources.manager, region)
    return kubes[region]


def mk_check(workload: Obj, check: str) -> Obj:
    """The Workload's state of the MultiKueue admission check ``check`` ({} without one)."""
    for state in (workload.get("status") or {}).get("admissionChecks") or []:
        if state.get("name") == check:
            return dict(state)
    return {}


def awaits_nomination(workload: Obj, check: str) -> bool:
    """Whether Kueue would sync copies to nominated clusters now (Kueue's conditions: the docstring of
    planb.regions.dispatcher.nomination)."""
    status = workload.get("status") or {}
    if workload["metadata"].get("deletionTimestamp") or status.get("clusterName"):
        return False
    if mk_check(workload, check).get("state") != "Pending":
        return False
    if condition(workload, "QuotaReserved").get("status") != "True":
        return False
    if condition(workload, "Finished").get("status") == "True":
        return False
    others = [s for s in status.get("admissionChecks") or [] if s.get("name") != check]
    return all(s.get("state") == "Ready" for s in others)


def nominated_now(workload: Obj) -> list[str]:
    return [str(n) for n in (workload.get("status") or {}).get("nominatedClusterNames") or []]


def job_shape(workload: Obj) -> str:
    """The job's shape as the ledger keys it, ``machine-type:count`` (``ct6e-standard-4t:4``): the first PodSet that
    selects a catalog TPU or GPU profile by GKE's accelerator labels, its count the VMs asked; "" when none does."""
    for pod_set in (workload.get("spec") or {}).get("podSets") or []:
        selector = ((pod_set.get("template") or {}).get("spec") or {}).get("nodeSelector") or {}
        shape = {k: str(v) for k, v in selector.items() if k in (tpu.ACCELERATOR_LABEL, tpu.TOPOLOGY_LABEL)}
        shape |= {k: str(v) for k, v in selector.items() if k == gpu.ACCELERATOR_LABEL}
        if not shape:
            continue
        found = [p for p in PROFILES.values() if p.node_selector == shape]
        if found:
            return f"{found[0].machine_type}:{int(pod_set.get('count') or 1)}"
    return ""


def ladder_rungs(cluster_queue: Obj) -> list[str]:
    """A region's rungs for the job's accelerators: its ClusterQueue's flavors in order (Kueue tries them top to
    bottom) that hold a quota of a TPU or GPU resource; planb names each flavor after its plan. The queues chart's CPU
    flavor, first in the same group for the Ray head, holds 0 of the accelerator and is no rung."""
    rungs: list[str] = []
    for group in (cluster_queue.get("spec") or {}).get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            quotas = [r.get("nominalQuota") for r in flavor.get("resources") or [] if r.get("name") in ACCELERATORS]
            if flavor.get("name") and flavor["name"] not in rungs and any(not _zero(q) for q in quotas):
                rungs.append(str(flavor["name"]))
    return rungs


def _zero(quantity: object) -> bool:
    try:
        return float(str(quantity)) == 0.0
    except ValueError:
        return False


def admitted_rung(copy: Obj | None) -> str:
    """The rung (flavor) a region's copy reserved its accelerators on, "" before that."""
    admission = ((copy or {}).get("status") or {}).get("admission") or {}
    for assignment in admission.get("podSetAssignments") or []:
        for resource, flavor in (assignment.get("flavors") or {}).items():
            if resource in ACCELERATORS:
                return str(flavor)
    return ""
