"""A reservation's room read before its rung is offered (planb.regions.dispatcher.reservation_room, offer_order rule 2).

Each of GKE's matching rules (its cluster autoscaler's, the constant named in each test) has a test here: a
reservation GKE would not use for the pool is no read; the room is ``count - inUseCount``. planb's own extensions
(``assuredCount``, the chips in use of an aggregate reservation) are tested apart, as planb's. The read then sets
the pair's state: a reservation read full joins no first offer and is not asked while it reads full."""

from __future__ import annotations

from typing import Any

import pytest

from planb.regions.dispatcher import offer_order as ao
from planb.regions.dispatcher import reservation_room as rr
from planb.regions.dispatcher.ledger import FAILED, GRANTED, Key, Ledger
from planb.regions.dispatcher.reservation_room import ReservationRef, Room, RoomUnread

SHAPE = "ct6e-standard-4t:4"  # a 4x4 slice: four VMs of four chips, multi-host
SINGLE = "ct6e-standard-8t:1"  # one VM of eight chips, single-host
GPU = "a3-highgpu-8g:2"
EAST, WEST = (Key(r, "reservation", SHAPE) for r in ("us-east5", "europe-west4"))
WEST_DWS = Key("europe-west4", "dws", SHAPE)
REF = ReservationRef("p", "us-east5-b", "r")
ZONE_URL = "https://www.googleapis.com/compute/v1/projects/p/zones/us-east5-b"
CT6E = f"{ZONE_URL}/acceleratorTypes/ct6e"
CT5P = f"{ZONE_URL}/acceleratorTypes/ct5p"
JOB = ao.Job(checkpoint_interval_s=45 * 60, restore_s=10 * 60)


def _specific(count: int = 8, used: int = 0, machine: str = "a3-highgpu-8g", **extra: Any) -> dict[str, Any]:
    """A READY specific reservation as Compute writes it, required by name, in REF's zone."""
    specific = {"count": str(count), "inUseCount": str(used), "instanceProperties": {"machineType": machine}}
    return _body({"specificReservation": specific}, **extra)


def _aggregate(*chips: tuple[str, int], used: int = 0, workload: str = "BATCH", **extra: Any) -> dict[str, Any]:
    reserved = [{"accelerator": {"acceleratorType": kind, "acceleratorCount": count}} for kind, count in chips]
    aggregate: dict[str, Any] = {"workloadType": workload, "reservedResources": reserved}
    if used:
        aggregate["inUseResources"] = [{"accelerator": {"acceleratorType": CT6E, "acceleratorCount": used}}]
    return _body({"aggregateReservation": aggregate}, **extra)


def _body(shape: dict[str, Any], **extra: Any) -> dict[str, Any]:
    base = {"name": "r", "zone": ZONE_URL, "status": "READY", "specificReservationRequired": True}
    return {**base, **shape, **extra}


def _room(name: str, free: int) -> Room:
    return Room(name, free, 4, "VMs")


# ---- GKE's rules ------------------------------------------------------------------------------------------------


def test_a_specific_reservations_room_is_count_less_in_use_count_in_vms() -> None:
    """rr.ROOM: MatchingUnusedReservations adds Count - InUseCount of each matching reservation."""
    room = Room.read(REF, _specific(count=6, used=3), GPU)
    assert (room.free, room.need, room.unit, room.fits) == (3, 2, "VMs", True)
    assert str(room) == "reservation r: 3 VMs free, the job needs 2 (room for the job)"
    assert not Room.read(REF, _specific(count=6, used=5), GPU).fits
    assert "matcher.go#L52-L59" in rr.ROOM


@pytest.mark.parametrize(
    ("body", "says", "source"),
    [
        (_specific(specificReservationRequired=False), "specificReservationRequired false", rr.COMPATIBLE),
        (_specific(name="other"), "the reservation read is 'other', not r", rr.COMPATIBLE),
        (_specific(zone=ZONE_URL.replace("us-east5-b", "us-east5-a")), "in zone 'us-east5-a', not the", rr.ZONE),
        (_body({"specificReservation": {"count": "8"}}), "gives no specificReservation.instanceProperties", rr.USABLE),
        (_specific(status="CREATING"), "is CREATING, not READY", rr.USABLE),
        (_body({}), "neither specificReservation nor aggregateReservation", rr.USABLE),
        (_specific(machine="a3-megagpu-8g"), "reserves a3-megagpu-8g, not a3-highgpu-8g", rr.MACHINE),
    ],
)
def test_a_reservation_gke_would_not_use_for_the_pool_is_no_read(body: dict[str, Any], says: str, source: str) -> None:
    """rr.COMPATIBLE (a SPECIFIC pool: specificReservationRequired and its name), rr.ZONE (the pool's own zone),
    rr.USABLE (READY, a shape, instanceProperties), rr.MACHINE (the pool's machine type)."""
    with pytest.raises(RoomUnread, match=says) as raised:
        Room.read(REF, body, GPU)
    assert source in str(raised.value)


@pytest.mark.parametrize(
    ("workload", "shape", "ok"),
    [
        ("BATCH", SHAPE, True),  # a multi-host slice on a BATCH reservation
        ("SERVING", SHAPE, False),  # "requested multihost TPU, reservation has singlehost"
        ("BATCH", SINGLE, False),  # "requested singlehost TPU, reservation has multihost"
        ("SERVING", SINGLE, True),
        ("UNSPECIFIED", SHAPE, True),  # the autoscaler compares only BATCH and SERVING
        ("UNSPECIFIED", SINGLE, True),
    ],
)
def test_an_aggregate_reservation_is_batch_for_a_multi_host_slice_and_serving_for_a_single_host_one(
    workload: str, shape: str, ok: bool
) -> None:
    """rr.AGG_WORKLOAD: MatchAggregateReservationShapeWithReasons."""
    body = _aggregate((CT6E, 32), workload=workload)
    if ok:
        assert Room.read(REF, body, shape).fits
    else:
        with pytest.raises(RoomUnread, match=r"needs a (BATCH|SERVING) one") as raised:
            Room.read(REF, body, shape)
        assert rr.AGG_WORKLOAD in str(raised.value)


def test_an_aggregate_reservation_needs_one_entry_of_the_family_with_at_least_the_slices_chips() -> None:
    """rr.AGG_CHIPS: one reservedResources entry of the pool's machine family holding the topology's chips; two of 8
    do not make a 16-chip slice, nor do another family's chips."""
    assert Room.read(REF, _aggregate((CT6E, 16)), SHAPE).free == 16
    for body in (_aggregate((CT6E, 8), (CT6E, 8)), _aggregate((CT5P, 64))):
        with pytest.raises(RoomUnread, match="holds no entry of 16 ct6e chips or more") as raised:
            Room.read(REF, body, SHAPE)
        assert rr.AGG_CHIPS in str(raised.value)


# ---- planb's policy, beyond the autoscaler -----------------------------------------------------------------------


def test_planb_counts_only_what_is_assured_and_the_aggregate_chips_in_use() -> None:
    """Not the autoscaler's rule (it reads count - inUseCount, and no room of an aggregate reservation): planb's."""
    assured = _specific(count=8, used=2)
    assured["specificReservation"]["assuredCount"] = "5"
    assert Room.read(REF, assured, GPU).free == 3
    room = Room.read(REF, _aggregate((CT6E, 32), (CT5P, 32), used=16), SHAPE)
    assert (room.free, room.need, room.unit, room.fits) == (16, 16, "chips", True)  # the ct5p chips are not the job's
    assert not Room.read(REF, _aggregate((CT6E, 32), used=24), SHAPE).fits


@pytest.mark.parametrize(
    ("body", "shape", "says"),
    [
        (_body({"specificReservation": {"count": "six", "instanceProperties": {"machineType": "a3-highgpu-8g"}}}),
         GPU, "'six' is not a whole number"),
        (_body({"specificReservation": {"count": True, "instanceProperties": {"machineType": "a3-highgpu-8g"}}}),
         GPU, "True is not a whole number"),
        (_specific(count=8, used=-1), GPU, "is negative"),
        (_body({"aggregateReservation": {"reservedResources": {}}}), SHAPE, "reservedResources is not a list"),
        (_aggregate((CT6E, 16)), GPU, "a3-highgpu-8g names no chip count"),
        (_body({"specificReservation": {"instanceProperties": {"machineType": "a3-highgpu-8g"}}}), GPU, "no spec"),
    ],
)  # fmt: skip
def test_a_body_planb_cannot_read_room_from_is_refused_with_what_is_wrong(
    body: dict[str, Any], shape: str, says: str
) -> None:
    with pytest.raises(RoomUnread, match=says):
        Room.read(REF, body, shape)


# ---- the read in the policy --------------------------------------------------------------------------------------


def test_a_reservation_read_with_room_goes_first_and_one_read_full_goes_last_whatever_the_ledger_says() -> None:
    ledger = Ledger()
    ledger.record(EAST, 0.0, GRANTED, 30.0)  # the ledger's last word: east grants, west fails
    ledger.record(WEST, 0.0, FAILED, 20.0)
    candidates = [
        ao.Candidate(EAST, ao.Advice(0.9), _room("east-res", 0)),
        ao.Candidate(WEST, ao.Advice(0.2), _room("west-res", 4)),
        ao.Candidate(WEST_DWS, ao.Advice(0.6)),
    ]
    offer = ao.plan(candidates, JOB, ledger, 60.0)
    assert offer.keys == [WEST, WEST_DWS, EAST]
    scores = {r.key: r.score for r in offer.order}
    assert scores[WEST] == ao.Policy().room_fits and scores[EAST] == 0.0
    assert "reservation east-res: 0 VMs free, the job needs 4 (full for the job)" in offer.reasons()[EAST]
    assert "Compute Engine reservations.get" in offer.reasons()[WEST]


def test_a_reservation_read_full_joins_no_first_offer_and_is_not_asked_while_it_reads_full() -> None:
    candidates = [ao.Candidate(k, ao.Advice(0.05), _room(str(k), 0)) for k in (EAST, WEST)]
    candidates.append(ao.Candidate(WEST_DWS, ao.Advice(0.05)))
    offer = ao.plan(candidates, JOB, Ledger(), 0.0)
    assert offer.keys[0] == WEST_DWS and offer.first == 1  # a p of 0 adds no chance to reach the confidence
    assert offer.due(0.0, [], full={EAST, WEST})[0] == [WEST_DWS]
    # every other pair asked and failed: the full reservations wait for a read with room, looked at again in time
    attempts = [ao.Attempt(WEST_DWS, 0.0, 30.0)]
    assert offer.due(30.0, attempts, full={EAST, WEST}) == ([], 30.0 + offer.retry_after_s)
    asked, _ = offer.due(30.0, attempts, full={WEST})
    assert asked == [EAST]  # east read with room again: asked at once
    # without the reads, as before them: a full reservation is asked when its turn comes
    assert offer.due(30.0, attempts)[0] == [offer.keys[1]]
