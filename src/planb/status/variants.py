"""A concurrent-ladder job's variants and migrations, as Kueue v0.19.2 records them.

Under ConcurrentAdmission the RayJob's own Workload is the parent (label
kueue.x-k8s.io/concurrent-admission-parent=true) and Kueue creates one variant Workload per flavor of the
ClusterQueue, owned by the parent and annotated kueue.x-k8s.io/workload-allowed-resource-flavors with its one
flavor (kueue pkg/controller/concurrentadmission/controller.go generateVariant; pkg/controller/constants).
Once a variant is admitted, the controller deactivates the variants it will not pursue (spec.active false,
deactivateVariants): with TryPreferredFlavors those below the admitted one, and with lastAcceptableFlavorName
also those below that flavor; with RetainFirstAdmission every other one. The rest keep pursuing their flavor.

A migration is the job moving from one variant to another: Kueue records each admission of a variant with an
Event "Admitted" on it (pkg/scheduler/scheduler.go admit, for a flavor without admission checks;
pkg/controller/core/workload_controller.go, once the checks of a flavor such as dws are Ready), so the
variants' Admitted Events in time order are where the job ran, and each change of flavor is one migration,
at the new variant's admission. Kueue moves a job two ways:

* a more preferred variant that fits while a less preferred one is admitted makes the scheduler evict the
  admitted one first (reason FlavorMigration, scheduler.go issueMigration, before the preferred variant
  reserves any quota, whether or not its flavor has checks); it evicts again on every cycle until the quota
  is released, with an Event EvictedDueToFlavorMigration each time (the recorder may fold the repeats into
  one Event's series), and the preferred variant is admitted after that;
* a more preferred variant that already held its quota when the other was admitted (one waiting for its
  ProvisioningRequest, say) is admitted once its checks are Ready, and the controller then deactivates the
  running one (controller.go deactivateVariants: Event DeactivatedVariant, then EvictedDueToDeactivated), so
  the job runs on one or the other throughout.

A move that does not end in the preferred variant's admission (its check rejected, its quota taken meanwhile)
restarts the job on the same flavor: that is no migration here, though train.py resumes and reports it.

Events live as long as kube-apiserver's --event-ttl (one hour by default upstream; GKE's setting is not
published), so older migrations drop out of the list.

Steps lost: train.py prints "resumed from checkpoint step S; N step(s) lost" when a restarted run restores
its newest checkpoint, after the job's earlier resumes ("earlier: resumed from ..."), so the newest submitter
pod's log (what `ray job logs --follow` prints) holds them all; the k-th such line belongs to the k-th
migration. A restart that is not a migration (a retry after a failure, a move that fell back to the same
flavor) also resumes, so the pairing holds for a job whose only restarts were migrations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from planb.kube import Obj
from planb.kube_objects import conditions
from planb.status.gather import VariantReads

FLAVOR_ANNOTATION = "kueue.x-k8s.io/workload-allowed-resource-flavors"
MIGRATION_EVENT = "EvictedDueToFlavorMigration"
ADMITTED_EVENT = "Admitted"
_RESUMED = re.compile(r"resumed from checkpoint step (\d+); (\d+) step(?:s|\(s\))? lost", re.IGNORECASE)


@dataclass(frozen=True)
class Variant:
    name: str
    flavor: str
    #: admitted (the job runs on it), pursuing (active, waits for its flavor), deactivated, finished.
    state: str


@dataclass(frozen=True)
class Migration:
    """One move off a flavor: when, from which flavor, to which (when known), and the steps it cost."""

    at: str
    from_flavor: str
    to_flavor: str = ""
    steps_lost: int | None = None


@dataclass
class Variants:
    variants: list[Variant] = field(default_factory=list)
    migrations: list[Migration] = field(default_factory=list)
    #: The variant Workloads as read, the job's runs for planb.status.goodput (left out of `planb status -o`'s
    #: document, which holds what the views print).
    workloads: list[Obj] = field(default_factory=list, repr=False, compare=False, metadata={"document": False})

    @property
    def running_on(self) -> str:
        return next((v.flavor for v in self.variants if v.state == "admitted"), "-")

    @property
    def pursued(self) -> list[str]:
        return [v.flavor for v in self.variants if v.state == "pursuing"]


def _state(wl: Obj) -> str:
    conds = conditions(wl)
    if (conds.get("Finished") or {}).get("status") == "True":
        return "finished"
    if (wl.get("spec") or {}).get("active") is False:
        return "deactivated"
    if (conds.get("Admitted") or {}).get("status") == "True":
        return "admitted"
    return "pursuing"


def _event_time(ev: Obj) -> str:
    """When it first happened: an events.k8s.io Event's eventTime (Kueue's recorder writes those; a repeat only
    adds to its series), else a core Event's firstTimestamp."""
    return str(ev.get("eventTime") or ev.get("firstTimestamp") or ev.get("lastTimestamp") or "")


def steps_lost(log: str) -> list[int]:
    """The steps lost of each resume train.py reported in ``log``, in order."""
    return [int(m.group(2)) for m in _RESUMED.finditer(log)]


def collect(parent: Obj, mine: list[Obj], events: list[Obj], order: list[str], log: str = "") -> Variants:
    """The variants of ``parent`` (its variant Workloads, ``mine``) in the ClusterQueue's flavor ``order``, and its
    migrations from ``events``."""
    ns = parent["metadata"]["namespace"]
    found = [
        Variant(w["metadata"]["name"], (w["metadata"].get("annotations") or {}).get(FLAVOR_ANNOTATION, "-"), _state(w))
        for w in mine
    ]
    rank = {flavor: i for i, flavor in enumerate(order)}
    found.sort(key=lambda v: (rank.get(v.flavor, len(rank)), v.flavor))
    flavor_of = {v.name: v.flavor for v in found}
    admissions = []
    for ev in events:
        obj = ev.get("involvedObject") or ev.get("regarding") or {}
        if ev.get("reason") != ADMITTED_EVENT or obj.get("name") not in flavor_of or obj.get("namespace") != ns:
            continue
        admissions.append((_event_time(ev), flavor_of[obj["name"]]))
    admissions.sort()
    moves = [
        Migration(at, admissions[i - 1][1], flavor)
        for i, (at, flavor) in enumerate(admissions)
        if i > 0 and flavor != admissions[i - 1][1]
    ]
    lost = steps_lost(log)
    moves = [
        Migration(m.at, m.from_flavor, m.to_flavor, lost[i] if i < len(lost) else None) for i, m in enumerate(moves)
    ]
    return Variants(found, moves, mine)


def of_parent(parent: Obj, reads: VariantReads, log: str | None = None) -> Variants:
    """The variants of ``parent`` from what planb.status.gather read for it: the ClusterQueue's flavor order, the
    namespace's Workloads and Events, and train.py's output (``log``, the newest run's submitter log:
    planb.status.trainlog.newest_log; None: none read)."""
    groups = ((reads.cluster_queue or {}).get("spec") or {}).get("resourceGroups") or [{}]
    order = [str(f["name"]) for f in groups[0].get("flavors", [])]
    return collect(parent, reads.variants, reads.events, order, log or "")


__all__ = ["Migration", "Variant", "Variants", "collect", "of_parent", "steps_lost"]
