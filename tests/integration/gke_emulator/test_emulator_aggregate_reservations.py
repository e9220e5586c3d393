"""The emulator's aggregate (TPU) reservations, and GKE's autoscaler's match of a TPU slice pool to one.

An aggregate reservation holds TPU chips of one VM family and a workload type; a SPECIFIC_RESERVATION pool consumes
it when it is a TPU pool, of the reserved accelerator's family, with at most the reserved chips in one slice, and
(multi-host) the reservation is BATCH (pkg/reservations/matcher.go). Share types and int64-as-string fields are
Compute Engine's v1 document's.
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

from planb.local.gke_emulator import reservation_rules
from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.gke.gke_api import call, create, refused

PROJECT = "planb-test"
LOCATION = f"projects/{PROJECT}/locations/us-east5-b"
POOLS = f"{LOCATION}/clusters/c/nodePools"
RESERVATIONS = f"/compute/v1/projects/{PROJECT}/zones/us-east5-b/reservations"
CT6E = "VM_FAMILY_CLOUD_TPU_LITE_POD_SLICE_CT6E"


def _aggregate(name: str, chips: int = 32, workload: str = "BATCH", **extra: Any) -> dict[str, Any]:
    # What gcloud's future-reservations --tpu-version=V6E --chip-count --workload-type sends: no acceleratorType.
    return {
        "name": name,
        "specificReservationRequired": True,
        "aggregateReservation": {
            "vmFamily": extra.pop("vm_family", CT6E),
            "workloadType": workload,
            "reservedResources": [{"accelerator": {"acceleratorCount": chips, **extra.pop("accelerator", {})}}],
        },
        **extra,
    }


def _reserve(emulator: RunningEmulator, body: dict[str, Any], project: str = PROJECT) -> None:
    status, op = call(emulator, "POST", RESERVATIONS.replace(PROJECT, project), body)
    assert status == 200 and op["status"] == "DONE", op


def _pool(reservation: str, topology: str | None = "4x4", machine: str = "ct6e-standard-4t") -> dict[str, Any]:
    pool: dict[str, Any] = {
        "name": "reserved",
        "initialNodeCount": 0,
        "config": {
            "machineType": machine,
            "reservationAffinity": {
                "consumeReservationType": "SPECIFIC_RESERVATION",
                "key": reservation_rules.RESERVATION_KEY,
                "values": [reservation],
            },
        },
        "autoscaling": {"enabled": True, "minNodeCount": 0, "maxNodeCount": 4 if topology == "4x4" else 1},
    }
    if topology:
        pool["placementPolicy"] = {"tpuTopology": topology}
    return {"nodePool": pool}


def _cluster(emulator: RunningEmulator) -> None:
    create(emulator, LOCATION, f"{LOCATION}/clusters", {"cluster": {"name": "c", "initialClusterVersion": "1.34"}})


def test_an_aggregate_reservation_is_stored_as_compute_engine_returns_it(emulator: RunningEmulator) -> None:
    _reserve(emulator, _aggregate("tpu-res"))
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
    bad_family = _aggregate("bad", vm_family="VM_FAMILY_CLOUD_TPU_V9")
    status, answer = call(emulator, "POST", RESERVATIONS, bad_family)
    assert status == 400 and "'resource.aggregate_reservation.vm_family' (TYPE_ENUM)" in answer["error"]["message"]
    bad_workload = _aggregate("bad", workload="TRAINING")
    status, answer = call(emulator, "POST", RESERVATIONS, bad_workload)
    assert status == 400 and "'resource.aggregate_reservation.workload_type' (TYPE_ENUM)" in answer["error"]["message"]
    both = _aggregate("both", specificReservation={"count": "1", "instanceProperties": {"machineType": "n2-x-2"}})
    status, answer = call(emulator, "POST", RESERVATIONS, both)
    assert status == 400 and "exactly one of specificReservation" in str(answer)
    assert call(emulator, "POST", RESERVATIONS, {"name": "neither"})[0] == 400


def test_share_types_are_the_v1_documents(emulator: RunningEmulator) -> None:
    # count as an int64 string is accepted and answered as a string.
    specific = {"name": "gpu-res", "specificReservation": {"count": "2", "instanceProperties": {"machineType": "a3"}}}
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


def test_a_tpu_slice_pool_consumes_a_batch_aggregate_reservation_of_its_family(emulator: RunningEmulator) -> None:
    _cluster(emulator)
    _reserve(emulator, _aggregate("tpu-res"))
    create(emulator, LOCATION, POOLS, _pool("tpu-res"))
    assert call(emulator, "GET", f"/v1/{POOLS}/reserved")[1]["config"]["reservationAffinity"]["values"] == ["tpu-res"]


def test_an_aggregate_reservation_of_another_family_or_too_few_chips_is_refused(emulator: RunningEmulator) -> None:
    _cluster(emulator)
    _reserve(emulator, _aggregate("v5e-res", vm_family="VM_FAMILY_CLOUD_TPU_LITE_POD_SLICE_CT5LP"))
    message = refused(emulator, POOLS, _pool("v5e-res"))
    assert "needs 16 ct6e chips for one slice" in message and "reserves 32 x ct5lp" in message, message
    assert "requested TPU accelerator {tpu-v6e-slice, 4x4, 4}, but it's missing from reservation" in message
    assert reservation_rules.AGGREGATE_CHIPS in message
    _reserve(emulator, _aggregate("small", chips=8))
    assert "reserves 8 x ct6e" in refused(emulator, POOLS, _pool("small"))
    # An explicit acceleratorType names the family, whatever vmFamily says.
    _reserve(emulator, _aggregate("typed", accelerator={"acceleratorType": "projects/p/zones/z/acceleratorTypes/ct5p"}))
    assert "reserves 32 x ct5p" in refused(emulator, POOLS, _pool("typed"))
    assert call(emulator, "GET", f"/v1/{POOLS}/reserved")[0] == 404


def test_the_workload_type_must_fit_the_slice(emulator: RunningEmulator) -> None:
    _cluster(emulator)
    _reserve(emulator, _aggregate("serving", workload="SERVING"))
    message = refused(emulator, POOLS, _pool("serving"))
    assert "multi-host TPU slice (4x4)" in message and "needs a BATCH reservation" in message, message
    assert reservation_rules.AGGREGATE_WORKLOAD in message
    _reserve(emulator, _aggregate("batch"))
    single = _pool("batch", topology="2x2")
    assert '"requested singlehost TPU, reservation has multihost"' in refused(emulator, POOLS, single)
    # UNSPECIFIED serves both; a single-host pool consumes a SERVING reservation.
    _reserve(emulator, _aggregate("any", workload="UNSPECIFIED"))
    create(emulator, LOCATION, POOLS, _pool("any"))
    single = _pool("serving", topology="2x2")
    single["nodePool"]["name"] = "single"
    create(emulator, LOCATION, POOLS, single)


def test_a_gpu_pool_cannot_consume_an_aggregate_reservation(emulator: RunningEmulator) -> None:
    _cluster(emulator)
    _reserve(emulator, _aggregate("tpu-res"))
    gpu = _pool("tpu-res", topology=None, machine="a3-highgpu-8g")
    gpu["nodePool"]["config"]["accelerators"] = [{"acceleratorType": "nvidia-h100-80gb", "acceleratorCount": "8"}]
    message = refused(emulator, POOLS, gpu)
    assert "Unable to consume aggregate reservation for non-TPU workloads" in message, message


def test_an_organization_reservation_of_another_project_is_shared(emulator: RunningEmulator) -> None:
    _cluster(emulator)
    _reserve(emulator, _aggregate("org", shareSettings={"shareType": "ORGANIZATION"}), project="owner-project")
    create(emulator, LOCATION, POOLS, _pool("projects/owner-project/reservations/org"))
    local = copy.deepcopy(_pool("projects/owner-project/reservations/local"))
    local["nodePool"]["name"] = "local"
    _reserve(emulator, _aggregate("local"), project="owner-project")
    assert "is not shared with project planb-test" in refused(emulator, POOLS, local)


def _planb(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "planb.cli", "gke-emulator", *args], env=env, capture_output=True, text=True, timeout=60
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
