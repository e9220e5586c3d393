"""planb.gke modules for the ladder's kinds: a reservation pool (SPECIFIC_RESERVATION, read before any write),
a Spot pool, and gcp_reservation_info; their inputs checked before any call."""

from __future__ import annotations

from typing import Any

import pytest

from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.gke.gke_api import call
from tests.support.gke.modules import CLUSTER_ARGS, LOCATION, ONDEMAND_ARGS, PROJECT, ModuleRunner

RESERVATIONS = f"/compute/v1/projects/{PROJECT}/zones/{LOCATION}/reservations"
RESERVED: dict[str, Any] = {
    **ONDEMAND_ARGS,
    "name": "reserved-pool",
    "reservation_affinity": "SPECIFIC_RESERVATION",
    "reservation": "tpu-res",
}
SPOT: dict[str, Any] = {
    **ONDEMAND_ARGS,
    "name": "spot-pool",
    "spot": True,
    "taints": [{"key": "cloud.google.com/gke-spot", "value": "true", "effect": "NoSchedule"}],
}


def _reserve(emulator: RunningEmulator, name: str = "tpu-res", project: str = PROJECT, **body: Any) -> None:
    request = {
        "name": name,
        "specificReservationRequired": True,
        "specificReservation": {"count": 4, "instanceProperties": {"machineType": "ct6e-standard-4t"}},
        **body,
    }
    status, answer = call(emulator, "POST", RESERVATIONS.replace(PROJECT, project), request)
    assert status == 200, answer


def test_a_reservation_pool_is_created_consuming_its_reservation_and_is_idempotent(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    _reserve(emulator)
    modules.run("gke_cluster", CLUSTER_ARGS)
    created = modules.run("gke_node_pool", RESERVED)
    assert created["changed"] and created["actions"] == ["create"]
    assert created["node_pool"]["config"]["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["tpu-res"],
    }
    writes = len(emulator.writes())
    again = modules.run("gke_node_pool", RESERVED)
    assert not again["changed"] and len(emulator.writes()) == writes


@pytest.mark.parametrize("check_mode", [False, True])
def test_a_missing_reservation_fails_before_any_write(
    modules: ModuleRunner, emulator: RunningEmulator, check_mode: bool
) -> None:
    modules.run("gke_cluster", CLUSTER_ARGS)
    writes = len(emulator.writes())
    failed = modules.fail("gke_node_pool", RESERVED, check_mode=check_mode)
    assert "Reservation check failed (nothing was changed)" in failed["msg"]
    assert f"reservation tpu-res does not exist in project {PROJECT}, zone {LOCATION}" in failed["msg"]
    assert "--require-specific-reservation" in failed["msg"]
    assert len(emulator.writes()) == writes


def test_a_reservation_of_another_machine_type_or_any_vm_is_refused(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    _reserve(emulator, specificReservation={"count": 4, "instanceProperties": {"machineType": "ct5lp-hightpu-4t"}})
    _reserve(emulator, "any-res", specificReservationRequired=False)
    modules.run("gke_cluster", CLUSTER_ARGS)
    failed = modules.fail("gke_node_pool", RESERVED)
    assert "reserves machine type ct5lp-hightpu-4t, the pool is ct6e-standard-4t" in failed["msg"]
    failed = modules.fail("gke_node_pool", {**RESERVED, "reservation": "any-res"})
    assert "specificReservationRequired false: planb's policy refuses it" in failed["msg"]
    # Opted out of planb's policy, the same reservation is consumed.
    assert modules.run("gke_node_pool", {**RESERVED, "reservation": "any-res", "reservation_require_specific": False})[
        "changed"
    ]


def test_a_spot_pool_sends_spot_and_its_taint_and_keeps_gke_labels_on_rerun(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    modules.run("gke_cluster", CLUSTER_ARGS)
    created = modules.run("gke_node_pool", SPOT)
    config = created["node_pool"]["config"]
    assert config["spot"] is True and config["labels"]["cloud.google.com/gke-spot"] == "true"
    assert {"key": "cloud.google.com/gke-spot", "value": "true", "effect": "NO_SCHEDULE"} in config["taints"]
    assert not modules.run("gke_node_pool", SPOT)["changed"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ({**RESERVED, "reservation": None}, "SPECIFIC_RESERVATION needs reservation"),
        ({**RESERVED, "reservation": "projects/x/reservations/y"}, "must be a reservation name"),
        ({**ONDEMAND_ARGS, "reservation": "tpu-res"}, "only consumed with reservation_affinity SPECIFIC_RESERVATION"),
        (
            {**SPOT, "queued_provisioning": True, "flex_start": True, "auto_repair": False},
            "flex_start cannot use Spot VMs: its nodes are flex-start VMs",
        ),
    ],
)
def test_ladder_inputs_are_refused_before_any_call(
    modules: ModuleRunner, emulator: RunningEmulator, args: dict[str, Any], needle: str
) -> None:
    failed = modules.fail("gke_node_pool", args)
    assert needle in failed["msg"] and "nothing was sent to GKE" in failed["msg"], failed["msg"]
    assert emulator.store.request_log() == []


def test_reservation_info_reads_and_checks(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    assert modules.run("gcp_reservation_info", {"name": "tpu-res", "location": LOCATION}) == {
        "changed": False,
        "exists": False,
        "reservation": {},
        "checked": False,
    }
    _reserve(emulator)
    read = modules.run("gcp_reservation_info", {"name": "tpu-res", "location": LOCATION})
    # count is an int64: a JSON string, as Compute Engine answers it.
    assert read["exists"] and read["reservation"]["specificReservation"]["count"] == "4" and not read["checked"]
    checked = modules.run(
        "gcp_reservation_info",
        {"name": "tpu-res", "location": LOCATION, "machine_type": "ct6e-standard-4t", "vm_count": 4},
    )
    assert checked["checked"]
    short = modules.fail(
        "gcp_reservation_info",
        {"name": "tpu-res", "location": LOCATION, "machine_type": "ct6e-standard-4t", "vm_count": 8},
    )
    assert "holds 4 VM(s) and the plan's slices need 8: planb's policy" in short["msg"]


def test_a_shared_reservation_is_read_from_its_owner_and_must_be_shared(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    _reserve(emulator, "shared", project="owner-project")
    args = {
        "name": "projects/owner-project/reservations/shared",
        "location": LOCATION,
        "machine_type": "ct6e-standard-4t",
    }
    failed = modules.fail("gcp_reservation_info", args)
    assert f"reservation shared of project owner-project is not shared with project {PROJECT}" in failed["msg"]
    assert "--add-share-with=planb-test" in failed["msg"]


def _aggregate(emulator: RunningEmulator, name: str, vm_family: str, workload: str, chips: int = 16) -> None:
    request = {
        "name": name,
        "specificReservationRequired": True,
        "aggregateReservation": {
            "vmFamily": vm_family,
            "workloadType": workload,
            "reservedResources": [{"accelerator": {"acceleratorCount": chips}}],
        },
    }
    status, answer = call(emulator, "POST", RESERVATIONS, request)
    assert status == 200, answer


def test_reservation_info_matches_an_aggregate_reservation_as_gke_does(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    _aggregate(emulator, "tpu-res", "VM_FAMILY_CLOUD_TPU_LITE_POD_SLICE_CT6E", "BATCH")
    slice_4x4 = {"location": LOCATION, "machine_type": "ct6e-standard-4t", "tpu_topology": "4x4", "vm_count": 4}
    assert modules.run("gcp_reservation_info", {"name": "tpu-res", **slice_4x4})["checked"]
    # Two slices need 32 chips (planb's policy); a single-host pool cannot take a BATCH reservation (GKE's matcher).
    two = modules.fail("gcp_reservation_info", {"name": "tpu-res", **slice_4x4, "vm_count": 8})
    assert "holds 16 ct6e chips and the plan's slices need 32: planb's policy" in two["msg"], two["msg"]
    single = modules.fail("gcp_reservation_info", {"name": "tpu-res", **slice_4x4, "tpu_topology": "2x2"})
    assert "workloadType BATCH and the pool is a single-host TPU pool" in single["msg"]
    assert "--workload-type=SERVING, or a multi-host profile" in single["msg"]
    gpu = modules.fail(
        "gcp_reservation_info", {"name": "tpu-res", "location": LOCATION, "machine_type": "a3-highgpu-8g"}
    )
    assert "GKE does not consume an aggregate reservation for non-TPU workloads" in gpu["msg"], gpu["msg"]
    _aggregate(emulator, "v5p-res", "VM_FAMILY_CLOUD_TPU_POD_SLICE_CT5P", "BATCH", chips=64)
    other = modules.fail("gcp_reservation_info", {"name": "v5p-res", **slice_4x4})
    assert "reserves TPU chips 64 ct5p, the pool's machine type ct6e-standard-4t is of family ct6e" in other["msg"]


def test_a_gpu_pool_consumes_a_specific_reservation_of_its_machine_type(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    gpu = {"location": LOCATION, "machine_type": "a3-highgpu-8g", "vm_count": 2}
    missing = modules.fail("gcp_reservation_info", {"name": "gpu-res", **gpu})
    assert (
        "gcloud compute reservations create gpu-res" in missing["msg"]
        and "--machine-type=a3-highgpu-8g" in missing["msg"]
    )
    _reserve(
        emulator, "gpu-res", specificReservation={"count": "2", "instanceProperties": {"machineType": "a3-highgpu-8g"}}
    )
    assert modules.run("gcp_reservation_info", {"name": "gpu-res", **gpu})["checked"]
