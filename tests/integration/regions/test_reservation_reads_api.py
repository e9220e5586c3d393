"""The keeper's reservation reads (planb.regions.dispatcher.reservation_reads) against the GKE emulator's Compute
Engine ``reservations.get`` over HTTP: the reservation the manager names, read in the zone of its pools, its room for
the job's shape less what the emulator's node pools consuming it use (``inUseCount``, ``inUseResources``), so a
reservation filled by its pools reads full; and a reservation that is not there, or not usable as GKE uses one, not
read."""

from __future__ import annotations

from typing import Any

import pytest

from planb.local.gke_emulator import reservation_rules
from planb.local.gke_emulator.emulator import RunningEmulator
from planb.regions.dispatcher.google_advice import http_get
from planb.regions.dispatcher.ledger import Key
from planb.regions.dispatcher.reservation_reads import google_read, parse_reservation
from planb.regions.dispatcher.reservation_room import ReservationRef, RoomUnread
from tests.support.integration.gke.gke_api import call, create
from tests.support.integration.gke.reservation_cases import aggregate, specific

PROJECT, ZONE = "planb-test", "us-east5-b"
LOCATION = f"projects/{PROJECT}/locations/{ZONE}"
RESERVATIONS = f"/compute/v1/projects/{PROJECT}/zones/{ZONE}/reservations"
SLICE = Key("us-east5", "reserved", "ct6e-standard-4t:4")  # a 4x4 slice: 4 VMs, 16 chips


def _reserve(emulator: RunningEmulator, name: str, body: dict[str, Any]) -> ReservationRef:
    status, op = call(emulator, "POST", RESERVATIONS, {"name": name, **body})
    assert status == 200 and op["status"] == "DONE", op
    return parse_reservation(f"us-east5/reserved=zones/{ZONE}/reservations/{name}", PROJECT)[1]


def _pool(emulator: RunningEmulator, name: str, machine: str, nodes: int, reservation: str, topology: str = "") -> None:
    """A pool of ``nodes`` nodes consuming ``reservation`` by name, as planb's gke_node_pool role makes one."""
    pool: dict[str, Any] = {
        "name": name,
        "initialNodeCount": nodes,
        "config": {
            "machineType": machine,
            "reservationAffinity": {
                "consumeReservationType": "SPECIFIC_RESERVATION",
                "key": reservation_rules.RESERVATION_KEY,
                "values": [reservation],
            },
        },
    }
    if topology:
        pool["placementPolicy"] = {"tpuTopology": topology}
    create(emulator, LOCATION, f"{LOCATION}/clusters/c/nodePools", {"nodePool": pool})


def test_a_tpu_reservation_reads_its_chips_less_those_its_pools_use_until_full(emulator: RunningEmulator) -> None:
    create(emulator, LOCATION, f"{LOCATION}/clusters", {"cluster": {"name": "c", "initialClusterVersion": "1.34"}})
    ref = _reserve(emulator, "tpu-res", aggregate(32))
    read = google_read(http_get(emulator.url), PROJECT)
    room = read(SLICE, ref)
    assert (room.reservation, room.free, room.need, room.unit, room.fits) == ("tpu-res", 32, 16, "chips", True)
    _pool(emulator, "slice-1", "ct6e-standard-4t", 4, "tpu-res", "4x4")
    found = call(emulator, "GET", f"{RESERVATIONS}/tpu-res")[1]["aggregateReservation"]
    assert [r["accelerator"]["acceleratorCount"] for r in found["inUseResources"]] == [16]
    assert read(SLICE, ref).free == 16 and read(SLICE, ref).fits
    _pool(emulator, "slice-2", "ct6e-standard-4t", 4, "tpu-res", "4x4")
    full = read(SLICE, ref)
    assert (full.free, full.fits) == (0, False)  # the reservation its pools fill reads full, as on Google


def test_a_gpu_reservation_reads_count_less_in_use_count(emulator: RunningEmulator) -> None:
    create(emulator, LOCATION, f"{LOCATION}/clusters", {"cluster": {"name": "c", "initialClusterVersion": "1.34"}})
    ref = _reserve(emulator, "gpu-res", specific("a3-highgpu-8g", 3))
    read = google_read(http_get(emulator.url), PROJECT)
    job = Key("us-east5", "reserved", "a3-highgpu-8g:2")
    assert read(job, ref).free == 3
    _pool(emulator, "gpus", "a3-highgpu-8g", 2, "gpu-res")
    listed = call(emulator, "GET", RESERVATIONS)[1]["items"]
    assert [r["specificReservation"]["inUseCount"] for r in listed] == ["2"]
    assert (read(job, ref).free, read(job, ref).fits) == (1, False)


@pytest.mark.parametrize(
    ("body", "ref", "says"),
    [
        (aggregate(32), ReservationRef(PROJECT, "us-east5-a", "tpu-res"), "is not there: a pool consumes a"),
        (aggregate(32, specificReservationRequired=False), None, "specificReservationRequired false"),
        (aggregate(32, "SERVING"), None, "is SERVING: a multi-host slice needs a BATCH one"),
        (aggregate(8), None, "holds no entry of 16 ct6e chips or more"),
    ],
)
def test_a_reservation_that_cannot_be_read_says_why(
    emulator: RunningEmulator, body: dict[str, Any], ref: ReservationRef | None, says: str
) -> None:
    named = _reserve(emulator, "tpu-res", body)
    with pytest.raises(RoomUnread, match=says):
        google_read(http_get(emulator.url), PROJECT)(SLICE, ref or named)
