"""A reservation's room read before its rung is offered (planb.regions.reservation_room, advice_order rule 2): the
read sets the pair's state, a reservation read full joins no first offer and is not asked while it reads full."""

from __future__ import annotations

import pytest

from planb.regions import advice_order as ao
from planb.regions.ledger import FAILED, GRANTED, Key, Ledger
from planb.regions.reservation_room import Room, RoomUnread

SHAPE = "ct6e-standard-4t:4"
EAST, WEST = (Key(r, "reservation", SHAPE) for r in ("us-east5", "europe-west4"))
WEST_DWS = Key("europe-west4", "dws", SHAPE)
CT5P = {"acceleratorType": "https://www.googleapis.com/compute/v1/projects/p/zones/us-east5-b/acceleratorTypes/ct5p"}
JOB = ao.Job(checkpoint_interval_s=45 * 60, restore_s=10 * 60)


def _room(name: str, free: int) -> Room:
    return Room(name, free, 4, "VMs")


def test_a_specific_reservation_counts_vms_and_an_aggregate_one_counts_chips() -> None:
    specific = Room.read("r1", {"specificReservation": {"count": "6", "inUseCount": "3"}}, SHAPE)
    assert (specific.free, specific.need, specific.unit, specific.fits) == (3, 4, "VMs", False)
    assert str(specific) == "reservation r1: 3 VMs free, the job needs 4 (full for the job)"
    chips = [{"accelerator": {"acceleratorCount": 32, "acceleratorType": "acceleratorTypes/ct6e"}}]
    used = [{"accelerator": {"acceleratorCount": "16", "acceleratorType": "acceleratorTypes/ct6e"}}]
    aggregate = Room.read("r2", {"aggregateReservation": {"reservedResources": chips, "inUseResources": used}}, SHAPE)
    assert (aggregate.free, aggregate.need, aggregate.unit, aggregate.fits) == (16, 16, "chips", True)
    unused = Room.read("r3", {"aggregateReservation": {"reservedResources": chips}}, SHAPE)
    assert unused.free == 32  # no inUseResources: nothing in use


def test_room_is_what_is_assured_less_what_is_in_use_and_only_the_jobs_chips_count() -> None:
    assured = {"status": "READY", "specificReservation": {"count": "8", "assuredCount": "5", "inUseCount": "2"}}
    assert Room.read("r", assured, SHAPE).free == 3
    mixed = [
        {"accelerator": {"acceleratorCount": 32, **CT5P}},
        {"accelerator": {"acceleratorCount": 16, "acceleratorType": "zones/us-east5-b/acceleratorTypes/ct6e"}},
    ]
    used = [{"accelerator": {"acceleratorCount": 32, **CT5P}}]
    room = Room.read("r", {"aggregateReservation": {"reservedResources": mixed, "inUseResources": used}}, SHAPE)
    assert (room.free, room.fits) == (16, True)  # the ct5p chips, reserved and used, are another job's


@pytest.mark.parametrize(
    ("body", "shape", "says"),
    [
        ({}, SHAPE, "neither specificReservation nor aggregateReservation"),
        ({"specificReservation": {"count": "six"}}, SHAPE, "'six' is not a whole number"),
        ({"specificReservation": {"count": True}}, SHAPE, "True is not a whole number"),
        ({"specificReservation": {"count": "-1"}}, SHAPE, "is negative"),
        ({"aggregateReservation": {"reservedResources": {}}}, SHAPE, "reservedResources is not a list"),
        ({"aggregateReservation": {}}, "a3-highgpu-8g:2", "a3-highgpu-8g names no chip count"),
        ({"status": "CREATING", "specificReservation": {"count": "8"}}, SHAPE, "is CREATING, not READY"),
        ({"specificReservation": {"inUseCount": "0"}}, SHAPE, "gives no specificReservation.count"),
        (
            {"specificReservation": {"count": "8", "instanceProperties": {"machineType": "ct5lp-hightpu-4t"}}},
            SHAPE,
            "reserves ct5lp-hightpu-4t, not the job's ct6e-standard-4t",
        ),
        (
            {"aggregateReservation": {"reservedResources": [{"accelerator": {"acceleratorCount": 32, **CT5P}}]}},
            SHAPE,
            "reserves no ct6e chips",
        ),
    ],
)
def test_a_body_planb_cannot_read_room_from_is_refused_with_what_is_wrong(body: dict, shape: str, says: str) -> None:
    with pytest.raises(RoomUnread, match=says):
        Room.read("r", body, shape)


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
