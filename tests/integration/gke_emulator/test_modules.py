"""gke_cluster / gke_node_pool against the real emulator: create, idempotence, check mode, diff, updates."""

from __future__ import annotations

from typing import Any

from planb.local.gke_emulator import contract
from planb.local.gke_emulator.emulator import RunningEmulator
from planb.local.gke_emulator.store import list_node_pools
from tests.support.integration.gke.modules import CLUSTER_ARGS, DWS_ARGS, ONDEMAND_ARGS, ModuleRunner


def _create_all(modules: ModuleRunner) -> None:
    assert modules.run("gke_cluster", CLUSTER_ARGS)["changed"]
    assert modules.run("gke_node_pool", ONDEMAND_ARGS)["changed"]
    assert modules.run("gke_node_pool", DWS_ARGS)["changed"]


def test_create_then_idempotent(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    created = modules.run("gke_cluster", CLUSTER_ARGS)
    assert created["changed"] and created["actions"] == ["create"]
    assert created["cluster"]["status"] == "RUNNING"
    assert created["cluster"]["currentMasterVersion"].startswith("1.34.")
    assert created["operations"][0]["operationType"] == "CREATE_CLUSTER"
    assert created["operations"][0]["polls"] >= 1
    assert "waited for GKE operations" in created["msg"]
    pool = modules.run("gke_node_pool", DWS_ARGS)
    assert pool["node_pool"]["config"]["flexStart"] is True
    assert pool["node_pool"]["queuedProvisioning"]["enabled"] is True
    writes = len(emulator.writes())
    again = modules.run("gke_cluster", CLUSTER_ARGS)
    assert not again["changed"] and again["actions"] == []
    assert not modules.run("gke_node_pool", DWS_ARGS)["changed"]
    assert len(emulator.writes()) == writes


def test_check_mode_create_reports_diff_and_writes_nothing(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    result = modules.run("gke_cluster", CLUSTER_ARGS, check_mode=True, diff=True)
    assert result["changed"] and result["actions"] == ["create"]
    assert result["diff"]["before"] == {}
    assert result["diff"]["after"]["addonsConfig"] == {"rayOperatorConfig": {"enabled": True}}
    assert result["diff"]["after"]["nodePoolDefaults"]["nodeConfigDefaults"]["gcfsConfig"] == {"enabled": True}
    pool = modules.run("gke_node_pool", DWS_ARGS, check_mode=True, diff=True)
    assert pool["changed"] and pool["diff"]["after"]["config"]["flexStart"] is True
    assert emulator.writes() == []
    assert emulator.store.clusters == {}


def test_check_mode_update_diff_ignores_server_fields(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    _create_all(modules)
    writes = len(emulator.writes())
    # A multi-host slice pool's size is 0 or one slice (max = 4 hosts); its minimum may be either.
    changed: dict[str, Any] = {**ONDEMAND_ARGS, "autoscaling": {"min_node_count": 4, "max_node_count": 4}}
    changed["labels"] = {"team": "ml"}
    result = modules.run("gke_node_pool", changed, check_mode=True, diff=True)
    assert result["changed"]
    assert result["actions"] == ["setAutoscaling", "update"]
    before, after = result["diff"]["before"], result["diff"]["after"]
    assert before["autoscaling"]["minNodeCount"] == 0 and after["autoscaling"]["minNodeCount"] == 4
    assert before["config"]["labels"] == {} and after["config"]["labels"] == {"team": "ml"}
    for server_only in ("status", "selfLink", "version", "podIpv4CidrSize"):
        assert server_only not in before and server_only not in after
    assert "diskSizeGb" not in before["config"]
    assert len(emulator.writes()) == writes
    pool = next(p for p in list_node_pools(emulator.store.root.parent) if p["name"] == "on-demand-pool")
    assert pool["autoscaling"]["maxNodeCount"] == 4


def test_update_in_place(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    _create_all(modules)
    # A single-host pool (2x4 on 8-chip VMs) autoscales by nodes: its max grows in place.
    single = {**ONDEMAND_ARGS, "name": "single-pool", "machine_type": "ct6e-standard-8t", "tpu_topology": "2x4"}
    assert modules.run("gke_node_pool", single)["changed"]
    grown = modules.run("gke_node_pool", {**single, "autoscaling": {"min_node_count": 0, "max_node_count": 3}})
    assert grown["actions"] == ["setAutoscaling"] and grown["node_pool"]["autoscaling"]["maxNodeCount"] == 3
    changed: dict[str, Any] = {
        **DWS_ARGS,
        "taints": [{"key": "team", "value": "ml", "effect": "NoSchedule"}],
        "max_run_duration": "24h",
    }
    result = modules.run("gke_node_pool", changed, diff=True)
    assert result["changed"] and result["actions"] == ["update"]
    pool = result["node_pool"]
    # The managed taint is added; GKE's own (google.com/tpu, cloud.google.com/gke-queued) stay.
    assert sorted(t["key"] for t in pool["config"]["taints"]) == [
        "cloud.google.com/gke-queued",
        "google.com/tpu",
        "team",
    ]
    assert {"key": "team", "value": "ml", "effect": "NO_SCHEDULE"} in pool["config"]["taints"]
    assert pool["config"]["maxRunDuration"] == "86400s"
    assert not modules.run("gke_node_pool", changed)["changed"]
    cluster = modules.run("gke_cluster", {**CLUSTER_ARGS, "ray_operator": False}, diff=True)
    assert cluster["actions"] == ["desiredAddonsConfig"]
    assert cluster["cluster"]["addonsConfig"]["rayOperatorConfig"]["enabled"] is False
    upgraded = modules.run("gke_cluster", {**CLUSTER_ARGS, "ray_operator": False, "version": "1.35"})
    assert upgraded["actions"] == ["desiredMasterVersion"]
    assert upgraded["cluster"]["currentMasterVersion"].startswith("1.35.")


def test_immutable_field_names_field_and_fix(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    _create_all(modules)
    writes = len(emulator.writes())
    failed = modules.fail(
        "gke_node_pool",
        {
            **ONDEMAND_ARGS,
            "machine_type": "ct6e-standard-8t",
            "tpu_topology": "2x4",
            "autoscaling": {"min_node_count": 0, "max_node_count": 1},
        },
    )
    # The slice's topology is GKE's to refuse first (UpdateNodePoolRequest has no placementPolicy).
    assert "tpu_topology" in failed["msg"] and "cannot be changed in place" in failed["msg"], failed["msg"]
    assert "delete" in failed["msg"]
    failed = modules.fail(
        "gke_node_pool",
        {**ONDEMAND_ARGS, "tpu_topology": "2x4", "autoscaling": {"min_node_count": 0, "max_node_count": 2}},
    )
    assert "tpu_topology" in failed["msg"] and "recreate" in failed["msg"]
    failed = modules.fail("gke_cluster", {**CLUSTER_ARGS, "default_pool_machine_type": "n2-standard-8"})
    assert "default_pool_machine_type" in failed["msg"]
    assert len(emulator.writes()) == writes


def test_delete_and_check_mode_delete(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    _create_all(modules)
    absent = {**DWS_ARGS, "state": "absent"}
    assert modules.run("gke_node_pool", absent, check_mode=True)["changed"]
    assert len(list_node_pools(emulator.store.root.parent)) == 3
    assert modules.run("gke_node_pool", absent)["changed"]
    assert not modules.run("gke_node_pool", absent)["changed"]
    assert modules.run("gke_cluster", {**CLUSTER_ARGS, "state": "absent"})["changed"]
    assert list_node_pools(emulator.store.root.parent) == []


def test_info_modules(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    _create_all(modules)
    writes = len(emulator.writes())
    info = modules.run("gke_node_pool_info", {"cluster": "tpu-cluster"})
    assert (info["changed"], [p["name"] for p in info["node_pools"]]) == (
        False,
        ["default-pool", "dws-pool", "on-demand-pool"],
    )
    one = modules.run("gke_cluster_info", {"name": "tpu-cluster"}, check_mode=True)
    assert (one["exists"], [c["status"] for c in one["clusters"]]) == (True, ["RUNNING"])
    named = modules.run("gke_node_pool_info", {"cluster": "tpu-cluster", "name": "dws-pool"})
    assert (named["exists"], [p["config"]["flexStart"] for p in named["node_pools"]]) == (True, [True])
    missing = modules.run("gke_node_pool_info", {"cluster": "tpu-cluster", "name": "nope"})
    assert missing == {"changed": False, "exists": False, "node_pools": []}
    assert len(emulator.writes()) == writes  # info modules only read


def test_a_cluster_is_created_with_dataplane_v2_and_the_network_given(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    """Dataplane V2 by default (the chart's NetworkPolicies are enforced only with it), the organisation's network and
    subnetwork when given; each is create-only, and a change is refused naming the option before any write."""
    args = {**CLUSTER_ARGS, "network": "planb-vpc", "subnetwork": "planb-subnet"}
    created = modules.run("gke_cluster", args)["cluster"]
    assert created["networkConfig"]["datapathProvider"] == "ADVANCED_DATAPATH"
    assert created["ipAllocationPolicy"]["useIpAliases"] is True  # Dataplane V2 needs a VPC-native cluster
    assert (created["network"], created["subnetwork"]) == ("planb-vpc", "planb-subnet")
    stored = next(iter(emulator.store.clusters.values()))
    assert stored["networkConfig"]["datapathProvider"] == "ADVANCED_DATAPATH" and stored["network"] == "planb-vpc"
    assert not modules.run("gke_cluster", args)["changed"]
    writes = len(emulator.writes())
    for change, option in (
        ({"network": "other-vpc"}, "network"),
        ({"subnetwork": "other-subnet"}, "subnetwork"),
        ({"dataplane_v2": False}, "dataplane_v2"),
    ):
        failed = modules.fail("gke_cluster", {**args, **change})
        assert failed["msg"].startswith(f"{option} of cluster") and "cannot be changed in place" in failed["msg"], (
            failed
        )
    assert len(emulator.writes()) == writes


def test_a_cluster_is_created_with_private_nodes_its_service_account_and_a_release_channel(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    """Private nodes (networkConfig.defaultEnablePrivateNodes, VPC-native even with the legacy datapath), the control
    plane's /28, the nodes' service account on default-pool and on the plans' pools, a release channel: every body
    validates against the container v1 discovery document; the channel changes in place, the rest is create-only and
    a change is refused naming the option before any write."""
    account = "planb-nodes@planb-test.iam.gserviceaccount.com"
    args = {
        **CLUSTER_ARGS,
        "dataplane_v2": False,
        "private_nodes": True,
        "master_ipv4_cidr": "172.16.0.32/28",
        "node_service_account": account,
        "release_channel": "REGULAR",
    }
    planned = modules.run("gke_cluster", args, check_mode=True)["cluster"]
    assert contract.conform("container", "CreateClusterRequest", {"cluster": planned})[1] == []
    created = modules.run("gke_cluster", args)["cluster"]
    assert created["networkConfig"] == {"datapathProvider": "LEGACY_DATAPATH", "defaultEnablePrivateNodes": True}
    assert created["ipAllocationPolicy"]["useIpAliases"] is True  # private nodes need a VPC-native cluster
    assert created["privateClusterConfig"]["masterIpv4CidrBlock"] == "172.16.0.32/28"
    assert created["releaseChannel"] == {"channel": "REGULAR"}
    assert [p["config"]["serviceAccount"] for p in created["nodePools"]] == [account]
    pool = modules.run("gke_node_pool", {**ONDEMAND_ARGS, "node_service_account": account})["node_pool"]
    assert pool["config"]["serviceAccount"] == account
    assert not modules.run("gke_cluster", args)["changed"]
    moved = modules.run("gke_cluster", {**args, "release_channel": "RAPID"})
    assert moved["actions"] == ["desiredReleaseChannel"] and moved["cluster"]["releaseChannel"] == {"channel": "RAPID"}
    writes = len(emulator.writes())
    for module, change, start in (
        ("gke_cluster", {"private_nodes": False, "master_ipv4_cidr": None}, "planb's policy: private_nodes of cluster"),
        ("gke_cluster", {"master_ipv4_cidr": "172.16.0.48/28"}, "master_ipv4_cidr of cluster"),
        (
            "gke_cluster",
            {"node_service_account": "other-nodes@planb-test.iam.gserviceaccount.com"},
            "node_service_account of cluster",
        ),
        (
            "gke_node_pool",
            {"node_service_account": "other-nodes@planb-test.iam.gserviceaccount.com"},
            "node_service_account of node pool",
        ),
    ):
        base = (
            {**args, "release_channel": "RAPID"}
            if module == "gke_cluster"
            else {**ONDEMAND_ARGS, "node_service_account": account}
        )
        failed = modules.fail(module, {**base, **change})
        assert failed["msg"].startswith(start), failed["msg"]
    assert len(emulator.writes()) == writes
