"""planb.gke modules for the ladder's kinds: a reservation pool (SPECIFIC_RESERVATION, read before any write),
a Spot pool, and gcp_reservation_info; their inputs checked before any call. Which pool GKE lets consume which
reservation is the table in tests/support/integration/gke/reservation_cases.py, which the emulator's matcher passes
too."""

from __future__ import annotations

from typing import Any

import pytest

from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.gke_api import call
from tests.support.integration.gke.modules import CLUSTER_ARGS, LOCATION, ONDEMAND_ARGS, PROJECT, ModuleRunner
from tests.support.integration.gke.reservation_cases import BY_ID, CASES, NAME, Refusal, ReservationCase, reserve

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


def test_a_reservation_any_vm_may_consume_is_refused_unless_opted_out(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    _reserve(emulator, "any-res", specificReservationRequired=False)
    modules.run("gke_cluster", CLUSTER_ARGS)
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


#: The argument spec's relations refuse in AnsibleModule's words, planb's rules in its own ("nothing was sent").
NO_RESERVATION_NAMED = {key: value for key, value in RESERVED.items() if key != "reservation"}
NO_AFFINITY = {key: value for key, value in RESERVED.items() if key != "reservation_affinity"}


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (NO_RESERVATION_NAMED, "reservation_affinity is SPECIFIC_RESERVATION but all of the following are missing"),
        (NO_AFFINITY, "missing parameter(s) required by 'reservation': reservation_affinity"),
        ({**RESERVED, "reservation": None}, "must be a reservation name"),
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
    assert needle in failed["msg"], failed["msg"]
    assert "missing" in needle or "nothing was sent to GKE" in failed["msg"], failed["msg"]
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


#: What planb.gke's refusal says for each reason of the table, with the fix it names.
_SAYS = {
    Refusal.MISSING: "does not exist in project planb-test, zone us-east5-b",
    Refusal.NOT_SHARED: f"is not shared with project {PROJECT} (shareSettings",
    Refusal.MACHINE_TYPE: "GKE creates the pool's VMs only from a reservation of their machine type",
    Refusal.NOT_TPU: "GKE does not consume an aggregate reservation for non-TPU workloads",
    Refusal.WORKLOAD: "use a reservation created with --workload-type=",
    Refusal.FAMILY: "GKE's autoscaler matches a reserved accelerator of the pool's family only",
    Refusal.CHIPS: "GKE's autoscaler matches only a reservation with at least one slice's chips",
}
#: The fix each refusal names, where it is a command.
_FIX = {
    Refusal.MISSING: "--require-specific-reservation",
    Refusal.NOT_SHARED: f"--add-share-with={PROJECT}",
}


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_reservation_info_matches_every_case_of_the_reservation_table(
    modules: ModuleRunner, emulator: RunningEmulator, case: ReservationCase
) -> None:
    """tests/support/integration/gke/reservation_cases.py, which the emulator's matcher passes too; no vm_count, so
    planb's policy on what the reservation holds is off."""
    reserve(emulator, case)
    args = {"name": case.value, "location": LOCATION, "machine_type": case.machine_type}
    if case.topology:
        args["tpu_topology"] = case.topology
    if case.refusal is None:
        assert modules.run("gcp_reservation_info", args)["checked"]
        return
    message = modules.fail("gcp_reservation_info", args)["msg"]
    assert message.startswith("Reservation check failed (nothing was changed): "), message
    assert _SAYS[case.refusal] in message and _FIX.get(case.refusal, "") in message, message
    # planb.gke cites the autoscaler's matcher.go as a whole, not its lines.
    assert case.refusal.source.split("#L")[0] in message, message


def test_an_aggregate_reservation_holds_the_chips_of_the_plan_s_slices(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    """planb's policy on top of GKE's match: a reservation of one 4x4 slice's chips does not serve two slices."""
    reserve(emulator, BY_ID["one-slice-of-chips-is-enough"])
    slice_4x4 = {"location": LOCATION, "machine_type": "ct6e-standard-4t", "tpu_topology": "4x4", "vm_count": 4}
    assert modules.run("gcp_reservation_info", {"name": NAME, **slice_4x4})["checked"]
    two = modules.fail("gcp_reservation_info", {"name": NAME, **slice_4x4, "vm_count": 8})
    assert "holds 16 ct6e chips and the plan's slices need 32: planb's policy" in two["msg"], two["msg"]


def test_a_missing_gpu_reservation_is_created_with_its_machine_type(modules: ModuleRunner) -> None:
    gpu = {"location": LOCATION, "machine_type": "a3-highgpu-8g", "vm_count": 2}
    missing = modules.fail("gcp_reservation_info", {"name": "gpu-res", **gpu})
    assert (
        "gcloud compute reservations create gpu-res" in missing["msg"]
        and "--machine-type=a3-highgpu-8g" in missing["msg"]
    )
