"""What the dispatcher is given (``DispatchSettings``) and what it keeps of each Workload it dispatches between ticks
(``JobDispatch``: its plan, the pairs asked, the copies seen; planb.regions.dispatcher.tick)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from planb.regions.dispatcher.ledger import Key
from planb.regions.dispatcher.offer_order import Attempt, Job, OfferPlan, Policy
from planb.regions.dispatcher.reservation_room import ReservationRef


@dataclass(frozen=True)
class Seen:
    """A region's copy as the keeper first saw it after asking: its uid and evictions then ("" and 0: no copy yet)."""

    uid: str = ""
    evictions: int = 0


@dataclass(frozen=True)
class DispatchSettings:
    #: The manager's MultiKueue AdmissionCheck (the keeper's).
    admission_check: str = "planb-regions"
    #: What the Spot rule needs of a job (``offer_order`` rule 1). planb's policy: 45 min between checkpoints and 10
    #: min to restore unless the keeper is told (``--checkpoint-interval``, ``--restore``), because the chart counts
    #: its checkpoints in steps (``training.checkpointEvery``), which the Workload does not say in time.
    job: Job = field(default_factory=lambda: Job(checkpoint_interval_s=45 * 60.0, restore_s=10 * 60.0))
    policy: Policy = field(default_factory=Policy)
    #: The reservation each (region, rung) consumes, as the manager's configuration names it (``planb regions keep
    #: --reservation``; ``planb.regions.dispatcher.reservation_reads``): the only reservations the keeper reads.
    #: None is read from a region's objects.
    reservations: dict[tuple[str, str], ReservationRef] = field(default_factory=dict)


@dataclass(frozen=True)
class JobDispatch:
    """One Workload's dispatch: its plan, when it began (seconds since the epoch), the pairs asked, the copies seen. A
    value: a tick's decisions make the next one (``dataclasses.replace``), never change it."""

    name: str
    plan: OfferPlan
    started: float
    attempts: tuple[Attempt, ...] = ()
    seen: Mapping[str, Seen] = field(default_factory=dict)
    said: str = ""
    #: The nomination the keeper last wrote, None before its first; and whether another writer replaced it.
    written: tuple[str, ...] | None = None
    overruled: bool = False
    #: The reservation each reservation pair consumes (``DispatchSettings.reservations``, as at the plan); its room is
    #: read again at each look (``reservation_reads.Rooms`` keeps a read 30 s).
    reservations: Mapping[Key, ReservationRef] = field(default_factory=dict)
