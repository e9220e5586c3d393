"""The emulator's aggregate (TPU) reservations, and GKE's autoscaler's match of a TPU slice pool to one.

An aggregate reservation holds TPU chips of one VM family and a workload type; a SPECIFIC_RESERVATION pool consumes
it when it is a TPU pool, of the reserved accelerator's family, with at most the reserved chips in one slice, and
(multi-host) the reservation is BATCH (pkg/reservations/matcher.go). Share types and int64-as-string fields are
Compute Engine's v1 document's. Which pool consumes which reservation, specific ones included, is the table in
tests/support/integration/gke/reservation_cases.py, which planb.gke's matcher passes too
(tests/integration/gke_emulator/test_modules_ladder.py).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from planb.catalog import tpu
from planb.local.gke_emulator import reservation_rules
from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.gke_api import call, create, refused
from tests.support.integration.gke.reservation_cases import (
    BY_ID,
    CASES,
    CT6E,
    Refusal,
    ReservationCase,
    aggregate,
    reserve,
)

PROJECT = "planb-test"
LOCATION = f"projects/{PROJECT}/locations/us-east5-b"
POOLS = f"{LOCATION}/clusters/c/nodePools"
RESERVATIONS = f"/compute/v1/projects/{PROJECT}/zones/us-east5-b/reservations"


def _reserve(emulator: RunningEmulator, body: dict[str, Any]) -> None:
    status, op = call(emulator, "POST", RESERVATIONS, body)
    assert status == 200 and op["status"] == "DONE", op


def _cluster(emulator: RunningEmulator) -> None:
    create(emulator, LOCATION, f"{LOCATION}/clusters", {"cluster": {"name": "c", "initialClusterVersion": "1.34"}})


def test_an_aggregate_reservation_is_stored_as_compute_engine_returns_it(emulator: RunningEmulator) -> None:
    _reserve(emulator, {"name": "tpu-res", **aggregate(32)})
    status, found = call(emulator, "GET", f"{RESERVATIONS}/tpu-res")
    assert status == 200 and "specificReservation" not in found
    assert found["aggregateReservation"] == {
        "vmFamily": CT6E,
        "workloadType": "BATCH",
        "reservedResources": [
            {
                "accelerator": {
                    "acceleratorType": "https://www.googleapis.com/compute/v1/projects/planb-test/zones/us-east5-b/"
                    "acceleratorTypes/ct6e",
                    "acceleratorCount": 32,
                }
            }
        ],
    }
    assert isinstance(found["id"], str) and found["id"].isdigit()
    # Compute Engine's refusals: a vmFamily or workloadType outside the v1 enum (the discovery document's contract,
    # in Google's wording for a bad enum value), both shapes, neither.
    bad_family = {"name": "bad", **aggregate(32, vm_family="VM_FAMILY_CLOUD_TPU_V9")}
    status, answer = call(emulator, "POST", RESERVATIONS, bad_family)
    assert status == 400 and "'resource.aggregate_reservation.vm_family' (TYPE_ENUM)" in answer["error"]["message"]
    bad_workload = {"name": "bad", **aggregate(32, "TRAINING")}
    status, answer = call(emulator, "POST", RESERVATIONS, bad_workload)
    assert status == 400 and "'resource.aggregate_reservation.workload_type' (TYPE_ENUM)" in answer["error"]["message"]
    both = {
        "name": "both",
        **aggregate(32, specificReservation={"count": "1", "instanceProperties": {"machineType": "n2-x-2"}}),
    }
    status, answer = call(emulator, "POST", RESERVATIONS, both)
    assert status == 400 and "exactly one of specificReservation" in str(answer)
    assert call(emulator, "POST", RESERVATIONS, {"name": "neither"})[0] == 400


def test_share_types_are_the_v1_documents(emulator: RunningEmulator) -> None:
    # count as an int64 string is accepted and answered as a string.
    specific: dict[str, Any] = {
        "name": "gpu-res",
        "specificReservation": {"count": "2", "instanceProperties": {"machineType": "a3"}},
    }
    assert call(emulator, "POST", RESERVATIONS, specific)[0] == 400  # not a machine type
    specific["specificReservation"]["instanceProperties"]["machineType"] = "a3-highgpu-8g"
    _reserve(emulator, {**specific, "shareSettings": {"shareType": "ORGANIZATION"}})
    found = call(emulator, "GET", f"{RESERVATIONS}/gpu-res")[1]
    assert found["specificReservation"]["count"] == "2" and found["shareSettings"] == {"shareType": "ORGANIZATION"}
    folder = {**specific, "name": "folder", "shareSettings": {"shareType": "FOLDER"}}
    status, answer = call(emulator, "POST", RESERVATIONS, folder)  # the v1 document lists no folder share type
    assert status == 400 and "'resource.share_settings.share_type' (TYPE_ENUM)" in answer["error"]["message"]
    mapped = {**specific, "name": "mapped", "shareSettings": {"shareType": "LOCAL", "projectMap": {"x": {}}}}
    assert "'resource.shareSettings.projectMap'" in str(call(emulator, "POST", RESERVATIONS, mapped)[1])


#: What the emulator's refusal says for each reason of the table: GKE's autoscaler's reason string where it has one,
#: and the source the rule cites.
_SAYS = {
    Refusal.MISSING: "does not exist; a node pool consumes a reservation of its own zone",
    Refusal.NOT_SHARED: "is not shared with project planb-test",
    Refusal.MACHINE_TYPE: "cannot consume reservation",
    Refusal.NOT_TPU: '"Unable to consume aggregate reservation for non-TPU workloads"',
    Refusal.WORKLOAD: "reservation has ",
    Refusal.FAMILY: "but it's missing from reservation",
    Refusal.CHIPS: "but it's missing from reservation",
}


def _case_pool(case: ReservationCase) -> dict[str, Any]:
    """The pool gcloud sends for the case: 0 to one slice's hosts nodes, consuming the reservation by name."""
    found = tpu.find_machine(case.machine_type)
    hosts = tpu.TpuSlice(found[0], case.machine_type, case.topology).hosts_per_slice if found and case.topology else 1
    pool: dict[str, Any] = {
        "name": "reserved",
        "initialNodeCount": 0,
        "config": {
            "machineType": case.machine_type,
            "reservationAffinity": {
                "consumeReservationType": "SPECIFIC_RESERVATION",
                "key": reservation_rules.RESERVATION_KEY,
                "values": [case.value],
            },
        },
        "autoscaling": {"enabled": True, "minNodeCount": 0, "maxNodeCount": hosts},
    }
    if case.topology:
        pool["placementPolicy"] = {"tpuTopology": case.topology}
    return {"nodePool": pool}


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_the_emulator_matches_every_case_of_the_reservation_table(
    emulator: RunningEmulator, case: ReservationCase
) -> None:
    """Every case of tests/support/integration/gke/reservation_cases.py, as GKE answers nodePools.create."""
    _cluster(emulator)
    reserve(emulator, case)
    if case.refusal is None:
        create(emulator, LOCATION, POOLS, _case_pool(case))
        affinity = call(emulator, "GET", f"/v1/{POOLS}/reserved")[1]["config"]["reservationAffinity"]
        assert affinity == {
            "consumeReservationType": "SPECIFIC_RESERVATION",
            "key": reservation_rules.RESERVATION_KEY,
            "values": [case.value],
        }
        return
    message = refused(emulator, POOLS, _case_pool(case))
    assert _SAYS[case.refusal] in message and case.refusal.source in message, message
    assert call(emulator, "GET", f"/v1/{POOLS}/reserved")[0] == 404


@pytest.mark.parametrize(
    ("case_id", "says"),
    [
        (
            "another-family",
            [
                "needs 16 ct6e chips for one slice and reservation "
                "projects/planb-test/zones/us-east5-b/reservations/res reserves 32 x ct5lp",
                "requested TPU accelerator {tpu-v6e-slice, 4x4, 4}, but it's missing from reservation",
            ],
        ),
        (
            "serving-refuses-a-multi-host-slice",
            [
                "is a multi-host TPU slice (4x4)",
                '"requested multihost TPU, reservation has singlehost"; a multi-host slice needs a BATCH reservation',
            ],
        ),
    ],
)
def test_an_aggregate_refusal_names_the_slice_and_quotes_the_autoscaler(
    emulator: RunningEmulator, case_id: str, says: list[str]
) -> None:
    _cluster(emulator)
    reserve(emulator, BY_ID[case_id])
    message = refused(emulator, POOLS, _case_pool(BY_ID[case_id]))
    assert all(words in message for words in says), message


def _planb(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "planb.cli", "local", "gke-emulator", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_cli_creates_the_reservation_google_makes_for_a_profile(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PLANB_STATE_DIR": str(tmp_path), "PLANB_GKE_EMULATOR_PORT": str(port)}
    where = ["--zone", "us-east5-b", "--project", PROJECT]
    try:
        assert _planb("start", "--op-seconds", "0", env=env).returncode == 0
        made = _planb(
            "reservation", "create", "tpu-res", "--for-profile", "tpu-v6e-4x4", "--slices", "2", *where, env=env
        )
        assert made.returncode == 0, made.stderr
        assert "32 chips of VM_FAMILY_CLOUD_TPU_LITE_POD_SLICE_CT6E, workload type BATCH" in made.stdout, made.stdout
        flags = ["--tpu-version", "v6e", "--chip-count", "4", "--workload-type", "serving", "--share-setting"]
        shared = _planb("reservation", "create", "v6e-serving", *flags, "organization", *where, env=env)
        assert shared.returncode == 0, shared.stderr
        gpu = _planb("reservation", "create", "gpu-res", "--for-profile", "gpu-a3-h100-8", *where, env=env)
        assert gpu.returncode == 0 and "1 x a3-highgpu-8g" in gpu.stdout, gpu.stderr
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{RESERVATIONS}") as response:
            items = {r["name"]: r for r in json.loads(response.read())["items"]}
        assert items["tpu-res"]["aggregateReservation"]["reservedResources"][0]["accelerator"]["acceleratorCount"] == 32
        assert items["v6e-serving"]["aggregateReservation"]["workloadType"] == "SERVING"
        assert items["v6e-serving"]["shareSettings"] == {"shareType": "ORGANIZATION"}
        assert items["gpu-res"]["specificReservation"]["count"] == "1"
        both = _planb(
            "reservation", "create", "x", "--machine-type", "a3-highgpu-8g", "--chip-count", "4", *where, env=env
        )
        assert both.returncode != 0 and "give either --machine-type and --vm-count" in both.stderr, both.stderr
    finally:
        _planb("stop", "--purge", env=env)
