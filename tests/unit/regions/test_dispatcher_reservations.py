"""The keeper's dispatcher reads the reservation the manager's configuration names for each region's reservation rung
(``DispatchSettings.reservations``, ``planb regions keep --reservation``) before it offers that rung: a region whose
reservation has room for the job goes first, one read full is not nominated for it while it reads full, and each
reservation is read once per ``READ_TTL_S``, not once a tick. A TPU job is planned with no advice at all (Google
gives none for TPUs): the reads and the ledger order it, not the race."""

from __future__ import annotations

from planb.regions.dispatcher.google_advice import Advice
from planb.regions.dispatcher.job_dispatch import DispatchSettings
from planb.regions.dispatcher.ledger import Key
from planb.regions.dispatcher.reservation_reads import READ_TTL_S
from planb.regions.dispatcher.reservation_room import ReservationRef, Room, RoomUnread
from planb.regions.dispatcher.tick import Dispatcher
from tests.support.unit.dispatcher_fakes import REGIONS, WL, Clock, Fake, region, stored, tick, workload


def _dispatching(free: dict[str, int | None]) -> tuple[Dispatcher, Fake, Clock, list[str], list[str]]:
    """Every region with a reservation rung (the manager names its reservation ``res-<region>``, ``free`` VMs of it
    free; None: its read fails) above a DWS rung; the job is a TPU slice, so there is no advice at all (by design), and
    only the reads tell the regions apart."""
    manager, said, reads, clock = Fake({WL: workload()}), [], [], Clock()
    regions = {name: region(["reserved", "dws"]) for name in REGIONS}
    named = {(name, "reserved"): ReservationRef("planb-local", f"{name}-b", f"res-{name}") for name in REGIONS}

    def read(key: Key, ref: ReservationRef) -> Room:
        reads.append(ref.name)
        room = free[key.region]
        if room is None:
            raise RoomUnread("403 PERMISSION_DENIED")
        return Room(ref.name, room, 4, "VMs")

    dispatcher = Dispatcher(
        manager,
        DispatchSettings(reservations=named),
        lambda key: Advice.not_asked("not asked: a TPU shape"),
        said.append,
        clock,
        lambda m, r: regions[r],  # type: ignore[arg-type,return-value]
        read=read,
    )
    return dispatcher, manager, clock, said, reads


def _nominated(manager: Fake) -> list[str]:
    return manager.applies[-1][1]["status"]["nominatedClusterNames"]


def test_the_region_whose_reservation_has_room_goes_first_and_the_configmap_says_what_was_read() -> None:
    dispatcher, manager, clock, said, reads = _dispatching({"us-east5": 0, "europe-west4": 4, "asia-northeast1": None})
    tick(dispatcher, manager)
    assert _nominated(manager) == ["europe-west4"]
    _, advice = stored(manager)
    reasons = {(p.key.region, p.key.rung): p.reason for p in advice.pairs}
    assert (
        "reservation res-europe-west4: 4 VMs free, the job needs 4 (room for the job)"
        in reasons[("europe-west4", "reserved")]
    )
    assert "res-us-east5: 0 VMs free" in reasons[("us-east5", "reserved")]
    failed = [line for line in said if "asia-northeast1/reserved" in line and "403 PERMISSION_DENIED" in line]
    assert len(failed) == 1
    for _ in range(3):  # read again past READ_TTL_S, failing for the same reason: said once
        clock.now += READ_TTL_S + 1
        tick(dispatcher, manager)
    assert [line for line in said if "403 PERMISSION_DENIED" in line] == failed
    assert reads.count("res-asia-northeast1") == 4


def _asked(manager: Fake) -> set[tuple[str, str]]:
    ledger, _ = stored(manager)
    return {(key.region, key.rung) for key, asks in ledger.asks.items() if asks}


def test_a_reservation_read_full_is_not_asked_until_a_read_finds_room_and_reads_are_kept_a_while() -> None:
    free: dict[str, int | None] = {"us-east5": 0, "europe-west4": 0, "asia-northeast1": 0}
    dispatcher, manager, clock, _, reads = _dispatching(free)
    tick(dispatcher, manager)
    assert _nominated(manager) and {rung for _, rung in _asked(manager)} == {"dws"}
    _, advice = stored(manager)
    assert all(p.score == 0.0 for p in advice.pairs if p.key.rung == "reserved")
    assert len(reads) == len(REGIONS)
    clock.now += 5
    tick(dispatcher, manager)
    assert len(reads) == len(REGIONS)  # within READ_TTL_S: not read again
    # Every pair left waits past its bound, then past the hour after which the rest of the offer joins: the
    # reservations still read full stay unasked; the one read with room again is asked.
    free["asia-northeast1"] = 4
    for _ in range(8):
        clock.now += 20 * 60
        tick(dispatcher, manager)
    assert len(reads) > len(REGIONS) and READ_TTL_S < 20 * 60
    assert ("asia-northeast1", "reserved") in _asked(manager)
    assert not {("us-east5", "reserved"), ("europe-west4", "reserved")} & _asked(manager)
