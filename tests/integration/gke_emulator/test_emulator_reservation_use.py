"""What of a reservation is in use, as the emulator's Compute Engine answers it (gke_emulator.reservation_use):
``specificReservation.inUseCount`` and ``aggregateReservation.inUseResources`` (compute v1, output only), counted at
each read from the node pools that consume the reservation by name, their size as ``setSize`` leaves it."""

from __future__ import annotations

from typing import Any

from planb.local.gke_emulator import reservation_rules
from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.gke_api import call, create, wait_done
from tests.support.integration.gke.reservation_cases import aggregate, specific

PROJECT, ZONE = "planb-test", "us-east5-b"
LOCATION = f"projects/{PROJECT}/locations/{ZONE}"
POOLS = f"{LOCATION}/clusters/c/nodePools"
RESERVATIONS = f"/compute/v1/projects/{PROJECT}/zones/{ZONE}/reservations"


def _pool(name: str, machine: str, nodes: int, affinity: dict[str, Any], topology: str = "") -> dict[str, Any]:
    pool: dict[str, Any] = {"name": name, "initialNodeCount": nodes, "config": {"machineType": machine}}
    pool["config"]["reservationAffinity"] = affinity
    if topology:
        pool["placementPolicy"] = {"tpuTopology": topology}
    return {"nodePool": pool}


def _named(reservation: str) -> dict[str, Any]:
    key = reservation_rules.RESERVATION_KEY
    return {"consumeReservationType": "SPECIFIC_RESERVATION", "key": key, "values": [reservation]}


def test_the_vms_and_chips_of_the_pools_consuming_a_reservation_by_name_are_in_use(emulator: RunningEmulator) -> None:
    create(emulator, LOCATION, f"{LOCATION}/clusters", {"cluster": {"name": "c", "initialClusterVersion": "1.34"}})
    for name, body in (("gpu-res", specific("a3-highgpu-8g", 4)), ("tpu-res", aggregate(32))):
        assert call(emulator, "POST", RESERVATIONS, {"name": name, **body})[0] == 200
    fresh = call(emulator, "GET", f"{RESERVATIONS}/tpu-res")[1]["aggregateReservation"]
    assert "inUseResources" not in fresh
    create(emulator, LOCATION, POOLS, _pool("gpus", "a3-highgpu-8g", 1, _named("gpu-res")))
    create(emulator, LOCATION, POOLS, _pool("any", "a3-highgpu-8g", 2, {"consumeReservationType": "ANY_RESERVATION"}))
    shared = _named(f"projects/{PROJECT}/reservations/tpu-res")
    create(emulator, LOCATION, POOLS, _pool("slice", "ct6e-standard-4t", 4, shared, "4x4"))
    found = call(emulator, "GET", f"{RESERVATIONS}/gpu-res")[1]["specificReservation"]
    assert (found["count"], found["inUseCount"]) == ("4", "1")  # the ANY_RESERVATION pool is not counted
    used = call(emulator, "GET", f"{RESERVATIONS}/tpu-res")[1]["aggregateReservation"]["inUseResources"]
    assert [
        (u["accelerator"]["acceleratorType"].rsplit("/", 1)[-1], u["accelerator"]["acceleratorCount"]) for u in used
    ] == [("ct6e", 16)]
    # setSize changes what is in use at the next read; list answers the same counts.
    status, op = call(emulator, "POST", f"/v1/{POOLS}/gpus:setSize", {"nodeCount": 4})
    assert status == 200 and wait_done(emulator, LOCATION, op)["status"] == "DONE", op
    listed = {r["name"]: r for r in call(emulator, "GET", RESERVATIONS)[1]["items"]}
    assert listed["gpu-res"]["specificReservation"]["inUseCount"] == "4"
    assert listed["tpu-res"]["aggregateReservation"]["inUseResources"][0]["accelerator"]["acceleratorCount"] == 16
