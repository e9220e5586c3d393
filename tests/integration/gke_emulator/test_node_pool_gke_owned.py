"""gke_node_pool against what GKE owns: its taints and labels are no diff, planb's policy is planb's, TPU7x pools.

GKE adds taints (google.com/tpu, cloud.google.com/gke-queued) and labels to the pools it creates; the module
compares only the label and taint keys it was asked to manage and keeps GKE's when it updates its own.
"""

from __future__ import annotations

from typing import Any

import pytest

from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.gke_api import workload_policy
from tests.support.integration.gke.modules import CLUSTER_ARGS, DWS_ARGS, ONDEMAND_ARGS, PROJECT, ModuleRunner

TPU_TAINT = {"key": "google.com/tpu", "value": "present", "effect": "NO_SCHEDULE"}
QUEUED_TAINT = {"key": "cloud.google.com/gke-queued", "value": "true", "effect": "NO_SCHEDULE"}
DOC_IRONWOOD = "https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood"


def _pool(emulator: RunningEmulator, name: str) -> dict[str, Any]:
    return next(p for p in emulator.store.node_pools.values() if p["name"] == name)


def test_gke_own_taints_and_labels_are_no_diff(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    """As the role calls it: labels {} and taints [] (nothing of its own), then again; the second run writes nothing."""
    modules.run("gke_cluster", CLUSTER_ARGS)
    args = {**DWS_ARGS, "labels": {}, "taints": []}
    assert modules.run("gke_node_pool", args)["changed"]
    config = _pool(emulator, "dws-pool")["config"]
    assert TPU_TAINT in config["taints"] and QUEUED_TAINT in config["taints"]
    assert config["labels"]["cloud.google.com/gke-tpu-accelerator"] == "tpu-v6e-slice"
    writes = len(emulator.writes())
    again = modules.run("gke_node_pool", args, diff=True)
    assert again["changed"] is False and again["actions"] == [], again.get("diff")
    checked = modules.run("gke_node_pool", args, check_mode=True)
    assert checked["changed"] is False
    assert len(emulator.writes()) == writes


def test_update_of_own_labels_and_taints_keeps_gke_ones(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    modules.run("gke_cluster", CLUSTER_ARGS)
    mine = {"key": "planb.dev/plan", "value": "b", "effect": "NoSchedule"}
    modules.run("gke_node_pool", {**DWS_ARGS, "labels": {"planb.dev/plan": "b"}, "taints": [mine]})
    assert (
        modules.run("gke_node_pool", {**DWS_ARGS, "labels": {"planb.dev/plan": "b"}, "taints": [mine]})["changed"]
        is False
    )
    changed = {**mine, "value": "dws"}
    result = modules.run(
        "gke_node_pool", {**DWS_ARGS, "labels": {"planb.dev/plan": "dws"}, "taints": [changed]}, diff=True
    )
    assert result["changed"] and result["actions"] == ["update"]
    # The diff names only the managed keys, not GKE's.
    assert result["diff"]["after"]["config"]["labels"] == {"planb.dev/plan": "dws"}
    config = _pool(emulator, "dws-pool")["config"]
    assert config["labels"]["planb.dev/plan"] == "dws"
    assert config["labels"]["cloud.google.com/gke-flex-start"] == "true"
    taints = config["taints"]
    assert {"key": "planb.dev/plan", "value": "dws", "effect": "NO_SCHEDULE"} in taints
    assert {"key": "planb.dev/plan", "value": "b", "effect": "NO_SCHEDULE"} not in taints
    assert TPU_TAINT in taints and QUEUED_TAINT in taints
    again = modules.run("gke_node_pool", {**DWS_ARGS, "labels": {"planb.dev/plan": "dws"}, "taints": [changed]})
    assert again["changed"] is False


# ---- planb's policy on top of GKE's rules ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("changes", "fragments"),
    [
        ({"auto_repair": True}, ["auto_repair false", "repair"]),
        (
            {"autoscaling": {"min_node_count": 0, "max_node_count": 4, "location_policy": "BALANCED"}},
            ["location_policy ANY", "zone"],
        ),
        ({"reservation_affinity": "ANY_RESERVATION"}, ["reservation_affinity NO_RESERVATION", "reservation"]),
    ],
    ids=["auto-repair", "location policy", "reservation affinity"],
)
def test_planb_policy_on_flex_start_says_it_is_planb_policy_and_why(
    modules: ModuleRunner, emulator: RunningEmulator, changes: dict[str, Any], fragments: list[str]
) -> None:
    message = modules.fail("gke_node_pool", {**DWS_ARGS, **changes})["msg"]
    assert "planb's policy" in message and "because" in message, message
    for fragment in fragments:
        assert fragment in message, message
    assert emulator.store.request_log() == []


def test_gke_rules_on_flex_start_are_not_called_planb_policy(modules: ModuleRunner) -> None:
    message = modules.fail("gke_node_pool", {**DWS_ARGS, "spot": True})["msg"]
    assert "cannot use Spot" in message and "planb's policy" not in message


# ---- TPU7x: a workload policy instead of tpu_topology ----------------------------------------------------
#: TPU7x is offered in us-central1-c (https://cloud.google.com/tpu/docs/regions-zones), not in the seed's zone.
TPU7X_ZONE = "us-central1-c"
TPU7X_CLUSTER = {**CLUSTER_ARGS, "location": TPU7X_ZONE}
TPU7X_ARGS: dict[str, Any] = {
    "location": TPU7X_ZONE,
    "name": "ironwood-pool",
    "cluster": "tpu-cluster",
    "machine_type": "tpu7x-standard-4t",
    "placement_policy": "wp-2x2x2",
    "autoscaling": {"min_node_count": 0, "max_node_count": 2},
    "reservation_affinity": "NO_RESERVATION",
}


def test_tpu7x_pool_with_a_workload_policy(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    modules.run("gke_cluster", TPU7X_CLUSTER)
    workload_policy(emulator, PROJECT, "us-central1", "wp-2x2x2", "2x2x2")
    created = modules.run("gke_node_pool", TPU7X_ARGS)
    assert created["changed"] and created["node_pool"]["placementPolicy"] == {"policyName": "wp-2x2x2"}
    assert created["node_pool"]["config"]["labels"]["cloud.google.com/gke-tpu-topology"] == "2x2x2"
    assert modules.run("gke_node_pool", TPU7X_ARGS)["changed"] is False
    other = modules.fail("gke_node_pool", {**TPU7X_ARGS, "placement_policy": "wp-other"})["msg"]
    assert "placement_policy of node pool ironwood-pool cannot be changed in place" in other


@pytest.mark.parametrize(
    ("changes", "fragments"),
    [
        ({"placement_policy": None, "tpu_topology": "2x2x2"}, ["placement_policy", "workload policy", DOC_IRONWOOD]),
        ({"tpu_topology": "2x2x2"}, ["not both"]),
        (
            {"flex_start": True, "queued_provisioning": True, "auto_repair": False},
            ["flex_start is not available for TPU tpu7x", "not document"],
        ),
        ({"queued_provisioning": True, "auto_repair": False}, ["queued_provisioning is not available for TPU tpu7x"]),
        ({"cluster_version": "1.34.0-gke.1000000"}, ["1.34.0-gke.2201000", DOC_IRONWOOD]),
    ],
    ids=["tpu_topology of a multi-host slice", "both", "flex-start", "queued provisioning", "GKE version"],
)
def test_tpu7x_refusals_before_any_api_call(
    modules: ModuleRunner, emulator: RunningEmulator, changes: dict[str, Any], fragments: list[str]
) -> None:
    args = {**TPU7X_ARGS, **changes}
    if args["placement_policy"] is None:
        del args["placement_policy"]
    if args.get("queued_provisioning"):
        args["autoscaling"] = {**args["autoscaling"], "location_policy": "ANY"}
    message = modules.fail("gke_node_pool", args)["msg"]
    for fragment in fragments:
        assert fragment in message, message
    assert emulator.store.request_log() == []


def test_tpu7x_single_host_pool_keeps_tpu_topology(modules: ModuleRunner) -> None:
    modules.run("gke_cluster", TPU7X_CLUSTER)
    args = {**ONDEMAND_ARGS, "location": TPU7X_ZONE, "name": "ironwood-1", "machine_type": "tpu7x-standard-4t"}
    args["tpu_topology"] = "2x2x1"
    args["autoscaling"] = {"min_node_count": 0, "max_node_count": 1}
    assert modules.run("gke_node_pool", args)["node_pool"]["placementPolicy"] == {"tpuTopology": "2x2x1"}
