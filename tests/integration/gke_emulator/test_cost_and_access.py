"""Costs and access on the cluster, its pools and the bucket, against the real emulator.

Resource labels (the cluster's ``resourceLabels``, a pool's ``config.resourceLabels``, the bucket's ``labels``), GKE
cost allocation (``costManagementConfig``), default-pool autoscaled, and the control plane's authorized networks
(``masterAuthorizedNetworksConfig``): every body the modules send is served by the emulator only after its
discovery document's request schema accepted it (``gke_emulator.conformance``), the planned create body is checked
here against ``CreateClusterRequest`` too, and what the emulator keeps is asserted from its state. Each refusal names
the input and the fix, before any write.
"""

from __future__ import annotations

from unittest import mock

from ansible.module_utils import basic

from planb.local.gke_emulator import contract
from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.modules import CLUSTER_ARGS, ONDEMAND_ARGS, ModuleRunner

LABELS = {"team": "research", "cost-center": "ml-42"}
COSTS = {
    **CLUSTER_ARGS,
    "labels": LABELS,
    "cost_allocation": True,
    "default_pool_min_node_count": 1,
    "default_pool_max_node_count": 3,
    "master_authorized_networks": ["203.0.113.0/24"],
}


def _stored_cluster(emulator: RunningEmulator) -> dict[str, object]:
    return dict(next(iter(emulator.store.clusters.values())))


def test_the_cluster_is_created_labelled_with_cost_allocation_an_autoscaled_cpu_pool_and_authorized_networks(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    planned = modules.run("gke_cluster", COSTS, check_mode=True)["cluster"]
    assert contract.conform("container", "CreateClusterRequest", {"cluster": planned})[1] == []
    assert modules.run("gke_cluster", COSTS)["actions"] == ["create"]
    stored = _stored_cluster(emulator)
    assert stored["resourceLabels"] == LABELS and stored["costManagementConfig"] == {"enabled": True}
    assert stored["masterAuthorizedNetworksConfig"] == {
        "enabled": True,
        "cidrBlocks": [{"cidrBlock": "203.0.113.0/24"}],
    }
    pool = emulator.store.node_pools[f"{next(iter(emulator.store.clusters))}/nodePools/default-pool"]
    assert {k: pool["autoscaling"][k] for k in ("enabled", "minNodeCount", "maxNodeCount")} == {
        "enabled": True,
        "minNodeCount": 1,
        "maxNodeCount": 3,
    }
    assert not modules.run("gke_cluster", COSTS)["changed"]

    # In place: a label set outside planb is kept, the fingerprint read is the one sent (SetLabelsRequest).
    name = next(iter(emulator.store.clusters))
    emulator.store.clusters[name]["resourceLabels"]["owner"] = "ops"
    changed = {
        **COSTS,
        "labels": {**LABELS, "team": "serving"},
        "cost_allocation": False,
        "default_pool_max_node_count": 5,
        "master_authorized_networks": [],
    }
    moved = modules.run("gke_cluster", changed)
    assert moved["actions"] == [
        "desiredCostManagementConfig",
        "desiredMasterAuthorizedNetworksConfig",
        "setResourceLabels",
        "setAutoscaling default-pool",
    ], moved["actions"]
    stored = _stored_cluster(emulator)
    assert stored["resourceLabels"] == {**LABELS, "team": "serving", "owner": "ops"}
    assert stored["costManagementConfig"] == {"enabled": False}
    assert stored["masterAuthorizedNetworksConfig"] == {"enabled": False}
    assert emulator.store.node_pools[f"{name}/nodePools/default-pool"]["autoscaling"]["maxNodeCount"] == 5
    assert not modules.run("gke_cluster", changed)["changed"]


def test_a_pools_resource_labels_are_set_and_changed_by_key_gkes_own_kept(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    modules.run("gke_cluster", CLUSTER_ARGS)
    args = {**ONDEMAND_ARGS, "resource_labels": LABELS}
    assert modules.run("gke_node_pool", args)["actions"] == ["create"]
    name = next(n for n in emulator.store.node_pools if n.endswith("/on-demand-pool"))
    labels = emulator.store.node_pools[name]["config"]["resourceLabels"]
    assert labels["team"] == "research" and labels["goog-gke-accelerator-type"] == "tpu-v6e-slice", labels
    assert not modules.run("gke_node_pool", args)["changed"]
    assert modules.run("gke_node_pool", {**args, "resource_labels": {"team": "serving"}})["actions"] == ["update"]
    labels = emulator.store.node_pools[name]["config"]["resourceLabels"]
    assert labels["team"] == "serving" and labels["cost-center"] == "ml-42" and "goog-gke-accelerator-type" in labels


def test_the_bucket_is_created_with_the_labels_and_an_existing_one_without_them_is_named_with_the_fix(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    args = {"name": "planb-test-ckpt", "create": True, "labels": LABELS}
    assert modules.run("gcp_storage_bucket", args)["bucket"]["labels"] == LABELS
    assert emulator.store.buckets["planb-test-ckpt"]["labels"] == LABELS
    # The module's own warnings (module.warn), not the process's list of them, which other tests' in-worker runs
    # may have taken over by then.
    warned: list[str] = []
    with mock.patch.object(basic.AnsibleModule, "warn", lambda _module, message: warned.append(message)):
        modules.run("gcp_storage_bucket", {**args, "labels": {"team": "serving"}})
    assert any("--update-labels=team=serving" in w for w in warned), warned


def test_bad_labels_networks_and_cpu_pool_bounds_are_refused_naming_the_input_and_the_fix_before_any_write(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    for change, words in (
        ({"labels": {"Team": "x"}}, "labels key 'Team' is not a resource label key"),
        ({"labels": {"goog-team": "x"}}, "Google reserves the prefix goog-"),
        ({"labels": {"team": "A B"}}, "labels value 'A B' of 'team' is not a resource label value"),
        ({"master_authorized_networks": ["203.0.113.7/24"]}, "has host bits set: write 203.0.113.0/24"),
        ({"master_authorized_networks": ["office"]}, "entry 'office' is not an IPv4 CIDR block"),
        ({"default_pool_min_node_count": 0}, "planb's policy is a floor of at least 1"),
        ({"default_pool_max_node_count": 0}, "default_pool_max_node_count 0 is below default_pool_min_node_count 1"),
    ):
        msg = modules.fail("gke_cluster", {**COSTS, **change})["msg"]
        assert words in msg, msg
    msg = modules.fail("gke_node_pool", {**ONDEMAND_ARGS, "resource_labels": {"cost center": "x"}})["msg"]
    assert "resource_labels key 'cost center'" in msg and "for example cost-center" in msg, msg
    msg = modules.fail("gcp_storage_bucket", {"name": "planb-test-ckpt", "create": True, "labels": {"a": "B"}})["msg"]
    assert "labels value 'B' of 'a'" in msg, msg
    assert emulator.writes() == []
