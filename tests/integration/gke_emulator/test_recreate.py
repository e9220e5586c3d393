"""Resources in status ERROR: left alone by default; with recreate_on_error only deleted while they have no nodes."""

from __future__ import annotations

from typing import Any

from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.gke_api import call, wait_done
from tests.support.integration.gke.modules import CLUSTER, CLUSTER_ARGS, LOCATION, ONDEMAND_ARGS, PROJECT, ModuleRunner

POOL = f"projects/{PROJECT}/locations/{LOCATION}/clusters/{CLUSTER}/nodePools/on-demand-pool"


def _fail_next(emulator: RunningEmulator, operation_type: str) -> None:
    emulator.engine.add_fault({"operationType": operation_type, "message": "ZONE_RESOURCE_POOL_EXHAUSTED (test)"})


def _deletes(emulator: RunningEmulator) -> list[str]:
    return [r["path"] for r in emulator.writes() if r["method"] == "DELETE"]


def _pool_in_error(modules: ModuleRunner, emulator: RunningEmulator, **args: Any) -> None:
    modules.run("gke_cluster", CLUSTER_ARGS)
    _fail_next(emulator, "CREATE_NODE_POOL")
    failed = modules.fail("gke_node_pool", {**ONDEMAND_ARGS, **args})
    assert "ZONE_RESOURCE_POOL_EXHAUSTED (test)" in failed["msg"]
    assert "recreate_on_error=true" in failed["msg"] and "no nodes" in failed["msg"], failed["msg"]
    assert emulator.store.node_pools[POOL]["status"] == "ERROR"


def test_a_pool_in_error_is_left_alone_by_default(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    _pool_in_error(modules, emulator)
    failed = modules.fail("gke_node_pool", ONDEMAND_ARGS)
    assert "status ERROR" in failed["msg"] and "recreate_on_error" in failed["msg"], failed["msg"]
    assert _deletes(emulator) == []
    assert emulator.store.node_pools[POOL]["status"] == "ERROR"


def test_opted_in_a_pool_in_error_without_nodes_is_recreated(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    _pool_in_error(modules, emulator)
    result = modules.run("gke_node_pool", {**ONDEMAND_ARGS, "recreate_on_error": True})
    assert result["changed"] and result["actions"] == ["delete (status ERROR, no nodes)", "create"]
    assert result["node_pool"]["status"] == "RUNNING"


def test_opted_in_a_pool_in_error_with_nodes_is_refused(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    # The failed create left 4 nodes (one 4x4 slice) in the pool's managed instance group.
    _pool_in_error(modules, emulator, initial_node_count=4)
    for check_mode in (True, False):
        failed = modules.fail("gke_node_pool", {**ONDEMAND_ARGS, "recreate_on_error": True}, check_mode=check_mode)
        assert "still has 4 nodes" in failed["msg"] and "planb's policy" in failed["msg"], failed["msg"]
    assert _deletes(emulator) == []


def test_opted_in_a_cluster_in_error_is_recreated_only_without_nodes(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    _fail_next(emulator, "CREATE_CLUSTER")
    modules.fail("gke_cluster", CLUSTER_ARGS)
    cluster = f"projects/{PROJECT}/locations/{LOCATION}/clusters/{CLUSTER}"
    assert emulator.store.clusters[cluster]["status"] == "ERROR"
    failed = modules.fail("gke_cluster", CLUSTER_ARGS)
    assert "status ERROR" in failed["msg"] and _deletes(emulator) == []
    # Its default pool has its node: refused even when opted in.
    failed = modules.fail("gke_cluster", {**CLUSTER_ARGS, "recreate_on_error": True})
    assert "default-pool: 1" in failed["msg"] and "planb's policy" in failed["msg"], failed["msg"]
    assert _deletes(emulator) == []
    # Once the node is gone (setSize 0), opting in deletes and recreates it.
    status, resize = call(emulator, "POST", f"/v1/{cluster}/nodePools/default-pool:setSize", {"nodeCount": 0})
    assert status == 200, resize
    # GKE refuses a delete while another operation runs on the cluster: the resize finishes first.
    assert wait_done(emulator, f"projects/{PROJECT}/locations/{LOCATION}", resize)["status"] == "DONE"
    result = modules.run("gke_cluster", {**CLUSTER_ARGS, "recreate_on_error": True})
    assert result["actions"] == ["delete (status ERROR, no nodes)", "create"]
    assert result["cluster"]["status"] == "RUNNING"


def test_a_node_count_that_cannot_be_read_refuses_and_sends_no_token_elsewhere(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    _pool_in_error(modules, emulator)
    emulator.store.node_pools[POOL]["instanceGroupUrls"] = [
        "https://attacker.example/compute/v1/projects/p/zones/z/instanceGroupManagers/g"
    ]
    failed = modules.fail("gke_node_pool", {**ONDEMAND_ARGS, "recreate_on_error": True})
    assert "Cannot tell how many nodes" in failed["msg"] and "attacker.example" in failed["msg"], failed["msg"]
    assert "planb's policy" in failed["msg"]
    assert _deletes(emulator) == []
