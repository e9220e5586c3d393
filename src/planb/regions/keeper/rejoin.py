"""Which of a quarantined region's objects are stale, the keeper's to delete or Kueue's GC's, before the region
comes back: pure functions over the API's JSON and over what the keeper's tick read (`decide_rejoin`;
planb.regions.keeper.reads reads, planb.regions.keeper.writes deletes and writes; docs/regions.md, section 4).

Kueue's GC deletes a region's copy only when the manager's Workload is gone
(pkg/controller/admissionchecks/multikueue/multikueuecluster.go#L699-L711), and the earliest Admitted copy wins
(workload.go#L140-L155): a stale copy on a region that comes back could take the job from its new home. planb's
policy: a quarantined region comes back into the config only after every copy there that this manager's
MultiKueue made and whose manager Workload is gone, runs elsewhere or runs nowhere yet is gone, and the RayJobs Kueue
made for them (`_not_home`: out of the config, a copy of a Workload still racing is no candidate of Kueue's).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from planb.kube import Obj
from planb.regions.access.connection import KUEUE, RegionAccessError
from planb.regions.access.kueue_objects import (
    PREBUILT,
    made_by,
    owner_rayjob,
    under_check,
    unreadable,
)
from planb.regions.keeper import grace, leftovers
from planb.regions.keeper.options import RAY, SAID_CHARS, KeeperSettings
from planb.regions.keeper.reads import Seen
from planb.regions.keeper.writes import Delete


def stale_copies(
    region: str,
    copies: Sequence[Obj],
    manager_workloads: Mapping[tuple[str, str], Obj],
    origin: str,
    check: str,
    *,
    listed: Collection[str],
) -> tuple[list[Obj], list[Obj]]:
    """The region's copies this manager's MultiKueue made (its `origin`), as (the keeper's to delete, Kueue's GC's):
    the keeper's are copies of a Workload the manager has under its MultiKueue `check` (same namespace and name)
    that is not the job's home (`_not_home`: it runs elsewhere, or, `region` out of the config's clusters `listed`,
    it runs nowhere yet); Kueue's GC's are copies whose manager Workload is gone or being deleted."""

    def name(meta: Obj) -> str:
        return str(meta.get("name"))

    return _stale(region, copies, manager_workloads, origin, check, name, lambda meta, home: True, region in listed)


def stale_jobs(
    region: str,
    jobs: Sequence[Obj],
    manager_workloads: Mapping[tuple[str, str], Obj],
    origin: str,
    check: str,
    *,
    listed: Collection[str],
) -> tuple[list[Obj], list[Obj]]:
    """The region's RayJobs this manager's MultiKueue made (its `origin`), as (the keeper's to delete, Kueue's GC's):
    the keeper's name by their prebuilt-workload mark a Workload the manager has under its MultiKueue `check`, carry
    the name of that Workload's RayJob, and are not where that Workload's job is at home (`_not_home`, with the
    config's clusters `listed`)."""

    def prebuilt(meta: Obj) -> str:
        return str((meta.get("labels") or {}).get(PREBUILT) or (meta.get("annotations") or {}).get(PREBUILT, ""))

    def own(meta: Obj, home: Obj) -> bool:
        return bool(meta.get("name")) and owner_rayjob(home) == meta.get("name")

    return _stale(region, jobs, manager_workloads, origin, check, prebuilt, own, region in listed)


def _stale(
    region: str,
    objs: Sequence[Obj],
    manager_workloads: Mapping[tuple[str, str], Obj],
    origin: str,
    check: str,
    workload_name: Callable[[Obj], str],
    own: Callable[[Obj, Obj], bool],
    in_config: bool,
) -> tuple[list[Obj], list[Obj]]:
    """Of the objects carrying `origin`: those whose manager Workload (same namespace, `workload_name` of their
    metadata) is under `check`, `own`s them and is not at home in `region` (`_not_home`); and those whose manager
    Workload is gone or being deleted. Nothing for an empty origin."""
    delete: list[Obj] = []
    gc: list[Obj] = []
    for obj in objs:
        if not made_by(obj, origin):
            continue
        meta = obj.get("metadata") or {}
        home = manager_workloads.get((str(meta.get("namespace")), workload_name(meta)))
        if home is None or (home.get("metadata") or {}).get("deletionTimestamp"):
            gc.append(obj)
        elif under_check(home, check) and own(meta, home) and _not_home(home, region, in_config):
            delete.append(obj)
    return delete, gc


def _not_home(home: Obj, region: str, in_config: bool) -> bool:
    """Whether the manager Workload's copy in `region` is stale: the Workload runs in another region, or it runs
    nowhere yet (no clusterName) and `region` is not in the MultiKueueConfig (`in_config` False).

    planb's policy: a copy of a Workload still racing is live only in a region of the config,
    because Kueue reads and deletes copies only in the config's clusters (kueue@v0.19.2
    pkg/controller/admissionchecks/multikueue/workload.go#L293-L306, readGroup #L334-L363): a copy left in a region
    out of it is Kueue's to see again only once the region is back, and the earliest Admitted copy wins
    (workload.go#L140-L155), so kept, it could run the job beside the region Kueue chose meanwhile."""
    name = (home.get("status") or {}).get("clusterName") or ""
    if not name:
        return not in_config
    return name != region


@dataclass(frozen=True)
class RejoinMemory:
    """What the keeper remembers between ticks of each quarantined region: what was last said of it, by topic; the
    first tick it answered, then the last at which it held anything stale (let back release_after after), and the
    wait after it (planb.regions.keeper.grace); and what they wait for as last written."""

    said_of: Mapping[tuple[str, str], str] = field(default_factory=dict)
    region_held_at: Mapping[str, float] = field(default_factory=dict)
    region_wait: Mapping[str, float] = field(default_factory=dict)
    #: What the quarantined regions wait for as this keeper last wrote it (None: as stored in its ConfigMap).
    waiting_written: Mapping[str, str] | None = None


@dataclass(frozen=True)
class Rejoining:
    """The rejoin decisions of one tick: the memory after it, the lines to say, the deletes per region; the regions
    back out of the ConfigMap's list (`back`), those still out (`away`) and what each waits for (`waiting`), written
    when that changed from what was `written`; and the regions returning into the config (written first)."""

    memory: RejoinMemory
    said: tuple[str, ...]
    deletes: dict[str, list[Delete]]
    back: list[str]
    away: list[str]
    waiting: dict[str, str]
    written: Mapping[str, str]
    returning: list[str]

    @property
    def state_changed(self) -> bool:
        """Whether the ConfigMap's list or what it says the regions wait for changes."""
        return bool(self.back) or self.waiting != self.written


def decide_rejoin(seen: Seen, memory: RejoinMemory, settings: KeeperSettings, now: float) -> Rejoining:
    """What is stale on each quarantined region that answers again (as `seen` read it), to delete; which regions
    are left clean for release_after and come back (into the config first, then out of the ConfigMap's list).

    `listed`, the config as this tick read it, decides both whether a region is cleaned and (stale_copies) whether a
    copy of a Workload still racing is live there. Only a region out of it is cleaned, so such copies are deleted.
    The config may change between this read and a delete (an operator or the playbook puts the region back): the
    keeper itself adds a region back only after a tick whose cleaning left nothing, by a write preconditioned on the
    resourceVersion read (a change meanwhile is a conflict, and the next tick reads again); another writer's add is
    bounded by one tick's deletes, each preconditioned on the uid listed, so a copy Kueue creates after the add is
    never deleted, and a deleted copy is one Kueue either re-creates (racing) or never sees: deleting never lets a
    job run twice."""
    away, listed, clusters = seen.away, seen.listed, seen.clusters
    homes = {(str(w["metadata"]["namespace"]), str(w["metadata"]["name"])): w for w in seen.workloads}
    said_of, held_at, waits = dict(memory.said_of), dict(memory.region_held_at), dict(memory.region_wait)
    said: list[str] = []
    deletes: dict[str, list[Delete]] = {}
    back: list[str] = []
    waiting: dict[str, str] = {}
    for name in away:
        # Removed from the manager: forget it. Back in the config (put there by hand or by the playbook): Kueue
        # races it again, so planb's policy is to clean nothing there, because its copies may be live.
        if name not in clusters or name in listed:
            back.append(name)
            continue
        if name not in seen.active:
            held_at.pop(name, None)  # counted again from when it answers
            waiting[name] = "waiting for Kueue to reach it again"
            continue
        try:
            stale, wait, deletes[name] = _clean(name, seen, homes, settings, said_of, said)
        except Exception as exc:  # planb's policy: any error: unreadable, because one region never stops the others
            deletes.pop(name, None)
            waiting[name] = unreadable(name, exc, "answers Kueue again but not planb yet")
            said.append(waiting[name])
            held_at[name] = now  # unread: taken as holding something stale, as the release path does
            continue
        # planb's policy: a region is let back release_after after the first tick it answered and the last at which
        # it still held a stale copy, RayJob or RayCluster, as the release path waits (held_at), because KubeRay's
        # Suspended waits for the RayCluster object only, not its pods (ray-project/kuberay@v1.6.2
        # ray-operator/controllers/ray/rayjob_controller.go#L369-L407, #L771-L807) and Kueue deletes a region's
        # RayJob with background propagation (kubernetes-sigs/kueue@v0.19.2
        # pkg/controller/jobs/ray/ray_multikueue_adapter.go#L294-L299): back earlier, Kueue could start the job there
        # while the old one's pods still run their grace period. From the first answer too: a keeper restarted after
        # the last RayCluster went cannot tell how long ago that was. The wait: the largest of the stale RayJobs' and
        # RayClusters' grace periods seen (planb.regions.keeper.grace).
        held = held_at.setdefault(name, now)
        wait = waits[name] = max(wait, waits.get(name, wait))
        if stale:
            held_at[name] = now
            waiting[name] = leftovers.waiting_line(stale)
        elif now - held >= wait:
            back.append(name)
        else:
            waiting[name] = f"nothing stale left; back {wait:g} s after the last was gone"
    kept = RejoinMemory(
        {k: v for k, v in said_of.items() if k[0] in away},
        {k: v for k, v in held_at.items() if k in away},  # a conflict: no new wait
        {k: v for k, v in waits.items() if k in away},
        memory.waiting_written,
    )
    returning = [n for n in back if n in clusters and n not in listed]
    written = memory.waiting_written if memory.waiting_written is not None else seen.waiting
    still = [n for n in away if n not in back]
    return Rejoining(kept, tuple(said), deletes, back, still, waiting, written, returning)


def _clean(
    region: str,
    seen: Seen,
    homes: dict[tuple[str, str], Obj],
    settings: KeeperSettings,
    said_of: dict[tuple[str, str], str],
    said: list[str],
) -> tuple[list[str], float, list[Delete]]:
    """The region's stale copies and RayJobs this manager's Kueue made for its Workloads, to delete; what keeps the
    region out (leftovers.describe of each; none: clean) and the wait after the last is gone (their RayJobs' and
    RayClusters' grace, planb.regions.keeper.grace): those, copies of gone Workloads (Kueue's GC's) and the
    RayClusters of stale RayJobs, listed now or deleted before (leftovers.stale_rayclusters). `listed`: the
    MultiKueueConfig's clusters as this tick read them. Raises what reading the region raised."""
    answers, (copies_ask, rayjobs_ask, rayclusters_ask) = seen.regions[region], seen.rejoin
    origin, listed, check = seen.origin, seen.listed, settings.admission_check
    rayjobs = answers.items(rayjobs_ask)
    copies, orphans = stale_copies(region, answers.items(copies_ask), homes, origin, check, listed=listed)
    jobs, gone = stale_jobs(region, rayjobs, homes, origin, check, listed=listed)
    mine = leftovers.dispatched(homes.values(), check)  # only a job's of this manager keeps it out
    rayclusters = leftovers.stale_rayclusters(answers.items(rayclusters_ask), rayjobs, [*jobs, *gone], origin, mine)
    kube = answers.kube
    if kube is None:  # never so once its answers were read
        raise RegionAccessError(f"{region}: no client to delete with")

    def once(topic: str, line: str) -> None:  # said when what follows its colon is new, not ""
        line = leftovers.cap(line, SAID_CHARS)
        detail = line.split(": ", 1)[-1]
        if detail and said_of.get((region, topic)) != detail:
            said.append(f"{region}: {line}")
        said_of[(region, topic)] = detail

    names = ", ".join(f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in orphans)
    once("orphans", f"waiting for Kueue's GC to delete the copies of gone Workloads: {names}")
    names = ", ".join(f"{rc['metadata'].get('namespace')}/{rc['metadata'].get('name')}" for rc in rayclusters)
    once("rayclusters", f"waiting for the RayClusters of its stale RayJobs to be gone: {names}")
    left = [
        *((leftovers.describe("Workload", w), w) for w in [*copies, *orphans]),
        *((leftovers.describe("RayJob", j), j) for j in jobs),
        *((leftovers.describe("RayCluster", rc), rc) for rc in rayclusters),
    ]
    # planb's policy: one stuck on a finalizer is said with its finalizers, because it keeps the region out.
    going = "; ".join(text for text, obj in left if (obj.get("metadata") or {}).get("deletionTimestamp"))
    once("going", f"kept out until these are deleted (their finalizers cleared): {going}")
    deletes = []
    for obj, kind in [*((c, "workloads") for c in copies), *((j, "rayjobs") for j in jobs)]:
        meta = obj["metadata"]
        # Going: its finalizers are Kueue's or KubeRay's to clear there. No uid (never so from an API server):
        # nothing to precondition on, and a null uid would make the delete unconditional.
        if meta.get("deletionTimestamp") or not meta.get("uid"):
            continue
        group = KUEUE if kind == "workloads" else RAY
        # Preconditioned on the uid listed: an object of the same name made meanwhile (another manager's RayJob
        # under the same key) is not this one.
        options = {"propagationPolicy": "Background", "preconditions": {"uid": str(meta["uid"])}}
        path = f"{group}/namespaces/{meta['namespace']}/{kind}/{meta['name']}"
        name = f"{meta['namespace']}/{meta['name']}"
        deletes.append(
            Delete(
                kube,
                path,
                options,
                f"{region}: deleted the stale {kind[:-1]} {name} (its job is gone or runs elsewhere)",
            )
        )
    wait = grace.wait_after([*jobs, *gone, *rayclusters], settings.release_after, settings.release_margin)
    return [text for text, _ in left], wait, deletes
