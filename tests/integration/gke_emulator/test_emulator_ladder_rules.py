"""The emulator's Compute Engine reservations and GKE's rules for the ladder's kinds.

A reservation pool (SPECIFIC_RESERVATION) names a reservation that exists in its zone, of its machine type and,
when another project's, shared with its project (every case in tests/support/integration/gke/reservation_cases.py,
run by tests/integration/gke_emulator/test_emulator_aggregate_reservations.py); a Spot pool is never queued or
flex-start and gets GKE's Spot node labels. Each refusal carries the Google page it follows.
"""

from __future__ import annotations

import copy
import json
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

from planb.local.gke_emulator import reservation_rules, rules
from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.gke_api import call, create, refused

PROJECT = "planb-test"
LOCATION = f"projects/{PROJECT}/locations/us-east5-b"
CLUSTER = f"{LOCATION}/clusters/c"
POOLS = f"{CLUSTER}/nodePools"
RESERVATIONS = f"/compute/v1/projects/{PROJECT}/zones/us-east5-b/reservations"
KEY = "compute.googleapis.com/reservation-name"

ON_DEMAND: dict[str, Any] = {
    "name": "pool",
    "initialNodeCount": 0,
    "config": {"machineType": "ct6e-standard-4t"},
    "autoscaling": {"enabled": True, "minNodeCount": 0, "maxNodeCount": 4},
    "placementPolicy": {"tpuTopology": "4x4"},
}


def _cluster(emulator: RunningEmulator) -> None:
    create(emulator, LOCATION, f"{LOCATION}/clusters", {"cluster": {"name": "c", "initialClusterVersion": "1.34"}})


def _reserve(
    emulator: RunningEmulator, name: str, machine: str = "ct6e-standard-4t", count: int = 8, **extra: Any
) -> dict[str, Any]:
    body = {
        "name": name,
        "specificReservationRequired": True,
        "specificReservation": {"count": count, "instanceProperties": {"machineType": machine}},
        **extra,
    }
    status, op = call(emulator, "POST", RESERVATIONS, body)
    assert status == 200 and op["status"] == "DONE", op
    return op


def _reserved_pool(value: str, name: str = "reserved") -> dict[str, Any]:
    pool = copy.deepcopy(ON_DEMAND)
    pool["name"] = name
    pool["config"]["reservationAffinity"] = {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": KEY,
        "values": [value],
    }
    return {"nodePool": pool}


def test_a_reservation_is_read_back_as_compute_engine_returns_it(emulator: RunningEmulator) -> None:
    op = _reserve(emulator, "tpu-res")
    assert op["kind"] == "compute#operation" and op["targetLink"].endswith(f"{RESERVATIONS[12:]}/tpu-res")
    status, found = call(emulator, "GET", f"{RESERVATIONS}/tpu-res")
    assert status == 200
    assert found["status"] == "READY" and found["specificReservationRequired"] is True
    # int64 fields are JSON strings, as Compute Engine writes them.
    assert found["specificReservation"] == {
        "count": "8",
        "inUseCount": "0",
        "instanceProperties": {"machineType": "ct6e-standard-4t"},
    }
    assert found["zone"].endswith("/zones/us-east5-b") and found["shareSettings"] == {"shareType": "LOCAL"}
    assert [r["name"] for r in call(emulator, "GET", RESERVATIONS)[1]["items"]] == ["tpu-res"]
    # Compute Engine's answers: 404 naming the resource, 409 for a second insert, 400 for a bad count.
    status, missing = call(emulator, "GET", f"{RESERVATIONS}/nope")
    assert status == 404 and "projects/planb-test/zones/us-east5-b/reservations/nope' was not found" in str(missing)
    assert call(emulator, "POST", RESERVATIONS, {"name": "tpu-res", "specificReservation": {}})[0] == 400
    again = {"name": "tpu-res", "specificReservation": {"count": 1, "instanceProperties": {"machineType": "n2-x-2"}}}
    assert call(emulator, "POST", RESERVATIONS, again)[0] == 409


def test_a_reservation_pool_names_its_reservation_by_gke_s_key(emulator: RunningEmulator) -> None:
    """Which reservation a pool may consume is the table in tests/support/integration/gke/reservation_cases.py; the
    affinity itself needs GKE's key and one value."""
    _cluster(emulator)
    _reserve(emulator, "tpu-res")
    bad_key = _reserved_pool("tpu-res")
    bad_key["nodePool"]["config"]["reservationAffinity"]["key"] = "reservation-name"
    assert f"needs key {KEY} and one value" in refused(emulator, POOLS, bad_key)
    two = _reserved_pool("tpu-res")
    two["nodePool"]["config"]["reservationAffinity"]["values"] = ["tpu-res", "other"]
    message = refused(emulator, POOLS, two)
    assert f"needs key {KEY} and one value" in message and reservation_rules.DOC_RESERVATIONS in message
    assert call(emulator, "GET", f"/v1/{POOLS}/reserved")[0] == 404


def test_a_spot_pool_gets_gke_spot_labels_and_is_never_queued_or_flex_start(emulator: RunningEmulator) -> None:
    _cluster(emulator)
    spot = copy.deepcopy(ON_DEMAND)
    spot.update(name="spot")
    spot["config"]["spot"] = True
    create(emulator, LOCATION, POOLS, {"nodePool": spot})
    pool = call(emulator, "GET", f"/v1/{POOLS}/spot")[1]
    assert pool["config"]["labels"]["cloud.google.com/gke-spot"] == "true"
    assert pool["config"]["labels"]["cloud.google.com/gke-provisioning"] == "spot"
    # GKE adds no Spot taint to a Standard pool (only the TPU one); planb's spot plans send their own.
    assert [t["key"] for t in pool["config"]["taints"]] == ["google.com/tpu"]
    queued = copy.deepcopy(spot)
    queued.update(name="queued-spot", queuedProvisioning={"enabled": True})
    message = refused(emulator, POOLS, {"nodePool": queued})
    assert "Queued provisioning node pools cannot use Spot VMs" in message and rules.DOC_PROVISIONING_MODELS in message
    flex = copy.deepcopy(spot)
    flex["name"] = "flex-spot"
    flex["config"]["flexStart"] = True
    assert "Flex-start VMs cannot be Spot" in refused(emulator, POOLS, {"nodePool": flex})


def _planb(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "planb.cli", "local", "gke-emulator", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_cli_creates_a_reservation_in_the_running_emulator(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PLANB_STATE_DIR": str(tmp_path), "PLANB_GKE_EMULATOR_PORT": str(port)}
    create_args = ["reservation", "create", "tpu-res", "--machine-type", "ct6e-standard-4t", "--zone", "us-east5-b"]
    try:
        started = _planb("start", "--op-seconds", "0", env=env)
        assert started.returncode == 0, started.stderr
        made = _planb(*create_args, "--count", "8", "--project", PROJECT, env=env)
        assert made.returncode == 0, made.stderr
        assert made.stdout.startswith(
            "reservation projects/planb-test/zones/us-east5-b/reservations/tpu-res: 8 x ct6e-standard-4t, consumed "
            "only by name"
        ), made.stdout
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{RESERVATIONS}/tpu-res") as response:
            assert json.loads(response.read())["specificReservation"]["count"] == "8"
        again = _planb(*create_args, "--count", "8", "--project", PROJECT, env=env)
        assert again.returncode != 0 and "already exists" in again.stderr, again.stderr
    finally:
        _planb("stop", "--purge", env=env)
