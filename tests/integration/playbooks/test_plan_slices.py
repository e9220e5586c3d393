"""playbooks/cluster.yml with K slices per plan against the emulator: one node pool per multi-host TPU slice.

plan A with K slices of tpu-v6e-4x4 (4 hosts per slice) is K pools of max 4 nodes
(on-demand-pool, on-demand-pool-2, ...), each labelled planb.dev/plan=on-demand; growing from 1 to 2
slices creates the second pool and sends nothing else; shrinking deletes pools only when confirmed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from planb.local.gke_emulator.emulator import RunningEmulator
from planb.local.gke_emulator.store import list_node_pools
from tests.support.integration.gke.modules import CLUSTER_ARGS, DWS_ARGS, ONDEMAND_ARGS, ModuleRunner, ansible_playbook
from tests.support.integration.gke.refusals import assert_plain_refusal

PROJECT, ZONE, CLUSTER = "planb-local", "us-east5-b", "tpu-cluster"
POOLS = f"/v1/projects/{PROJECT}/locations/{ZONE}/clusters/{CLUSTER}/nodePools"


def _run(emulator: RunningEmulator, tmp_path: Path, *extra: str) -> tuple[int, str]:
    env = {"GKE_API_ENDPOINT": emulator.url, "PLANB_STATE_DIR": str(tmp_path / "state")}
    done = ansible_playbook("playbooks/cluster.yml", "-i", "inventories/local", *extra, env=env)
    return done.returncode, done.stdout + done.stderr


def _pools(emulator: RunningEmulator) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in list_node_pools(emulator.store.root.parent)}


def _writes_since(emulator: RunningEmulator, count: int) -> list[tuple[str, str]]:
    return [(w["method"], w["path"]) for w in emulator.writes()[count:]]


def _changed(output: str) -> int:
    match = re.search(r"localhost\s+: ok=\d+\s+changed=(\d+)", output)
    assert match, output[-3000:]
    return int(match.group(1))


def test_k_slices_per_plan_are_k_pools_labelled_by_plan(emulator: RunningEmulator, tmp_path: Path) -> None:
    rc, out = _run(emulator, tmp_path, "-e", "planb_ondemand_slices=3", "-e", "planb_dws_slices=2")
    assert rc == 0, out[-3000:]
    # No local stack runs for this emulator: the play says so in the emulator's words (planb.gke.emulator_reply).
    assert "No kubeconfig written to" in out and "does not exist yet; start the local stack" in out, out[-3000:]
    pools = _pools(emulator)
    assert sorted(pools) == [
        "default-pool",
        "dws-pool",
        "dws-pool-2",
        "on-demand-pool",
        "on-demand-pool-2",
        "on-demand-pool-3",
    ]
    for name, plan in [("on-demand-pool", "on-demand"), ("on-demand-pool-3", "on-demand"), ("dws-pool-2", "dws")]:
        pool = pools[name]
        # Exactly one 4x4 slice (4 hosts of ct6e-standard-4t) per pool, scaling from zero.
        assert pool["autoscaling"]["maxNodeCount"] == 4 and pool["autoscaling"]["minNodeCount"] == 0
        assert "totalMaxNodeCount" not in pool["autoscaling"]
        assert pool["placementPolicy"]["tpuTopology"] == "4x4"
        assert pool["config"]["labels"]["planb.dev/plan"] == plan
    assert pools["dws-pool-2"]["config"]["flexStart"] is True
    assert pools["dws-pool-2"]["queuedProvisioning"]["enabled"] is True
    writes = len(emulator.writes())
    rc, out = _run(emulator, tmp_path, "-e", "planb_ondemand_slices=3", "-e", "planb_dws_slices=2")
    assert rc == 0 and _changed(out) == 0, out[-3000:]
    assert _writes_since(emulator, writes) == []


def test_scaling_plan_a_up_creates_one_pool_and_down_needs_confirmation(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    rc, out = _run(emulator, tmp_path)
    assert rc == 0, out[-3000:]
    # The seed's single slice keeps the seed's pool name.
    assert sorted(_pools(emulator)) == ["default-pool", "dws-pool", "on-demand-pool"]

    # 1 -> 2 slices, by the README's pool-only run (`--tags gke_node_pool_converge`): the rights, left-over pool and
    # quota checks and the pools run, the cluster's tasks do not; the second pool is created, and nothing else.
    writes = len(emulator.writes())
    rc, out = _run(emulator, tmp_path, "-e", "planb_ondemand_slices=2", "--tags", "gke_node_pool_converge")
    assert rc == 0, out[-3000:]
    assert "Create or update cluster" not in out and "Enable the Kubernetes Engine" not in out, out[-3000:]
    for task in ("Check the caller holds every permission", "Refuse to scale down", "Validate the node pool"):
        assert task in out, f"{task!r} did not run:\n{out[-3000:]}"
    assert _writes_since(emulator, writes) == [("POST", POOLS)]
    assert _pools(emulator)["on-demand-pool-2"]["config"]["labels"]["planb.dev/plan"] == "on-demand"

    # 2 -> 1 slice: refused without the confirmation, before any write; the message gives the exact value.
    target = f"{PROJECT}/{ZONE}/{CLUSTER}/on-demand-pool-2"
    writes = len(emulator.writes())
    for extra in ([], ["-e", f"planb_scale_down_confirm={PROJECT}/{ZONE}/{CLUSTER}/on-demand-pool"]):
        rc, out = _run(emulator, tmp_path, *extra)
        assert rc != 0, out[-3000:]
        assert_plain_refusal(out, "leave node pool(s) on-demand-pool-2 of cluster tpu-cluster over")
        assert f"-e planb_scale_down_confirm={target}" in out
        assert _writes_since(emulator, writes) == []
    assert "on-demand-pool-2" in _pools(emulator)

    # Confirmed: the left-over pool is deleted, and only it.
    rc, out = _run(emulator, tmp_path, "-e", f"planb_scale_down_confirm={target}")
    assert rc == 0, out[-3000:]
    assert _writes_since(emulator, writes) == [("DELETE", f"{POOLS}/on-demand-pool-2")]
    assert sorted(_pools(emulator)) == ["default-pool", "dws-pool", "on-demand-pool"]

    # Plan B grows the same way: one more queued flex-start pool.
    writes = len(emulator.writes())
    rc, out = _run(emulator, tmp_path, "-e", "planb_dws_slices=2")
    assert rc == 0, out[-3000:]
    assert _writes_since(emulator, writes) == [("POST", POOLS)]
    added = _pools(emulator)["dws-pool-2"]
    assert added["config"]["flexStart"] and added["queuedProvisioning"]["enabled"]
    assert added["autoscaling"]["maxNodeCount"] == 4


def test_plan_names_that_overlap_are_refused_before_any_call(emulator: RunningEmulator, tmp_path: Path) -> None:
    rc, out = _run(emulator, tmp_path, "-e", "planb_ondemand_nodepool=pool", "-e", "planb_dws_nodepool=pool-2")
    assert rc != 0, out[-3000:]
    assert_plain_refusal(out, "nodepool 'pool' and 'pool-2' name each other's pools")
    rc, out = _run(emulator, tmp_path, "-e", "planb_ondemand_slices=two")
    assert rc != 0, out[-3000:]
    assert_plain_refusal(
        out,
        "planb_plans[0] (plan 'on-demand'): slices 'two' must be a whole number",
        "from planb_ondemand_slices and planb_dws_slices",
    )
    assert emulator.store.request_log() == []


def test_a_rerun_from_the_one_pool_per_plan_state_keeps_every_pool(
    modules: ModuleRunner, emulator: RunningEmulator, tmp_path: Path
) -> None:
    """Pools made before this layout (same names, no plan label) are kept: no pool is created or deleted."""
    where = {"project": PROJECT, "location": ZONE}
    assert modules.run("gke_cluster", {**CLUSTER_ARGS, **where})["changed"]
    assert modules.run("gke_node_pool", {**ONDEMAND_ARGS, **where})["changed"]
    assert modules.run("gke_node_pool", {**DWS_ARGS, **where})["changed"]
    before = {name: pool["selfLink"] for name, pool in _pools(emulator).items()}
    writes = len(emulator.writes())
    rc, out = _run(emulator, tmp_path)
    assert rc == 0, out[-3000:]
    # The only writes change things in place: the plan label on the two pools (nodePools.update), and the cluster's
    # labels, cost allocation and default-pool autoscaling, which the modules' bare cluster lacked (clusters.update,
    # clusters.setResourceLabels, nodePools.setAutoscaling); none creates or deletes.
    sent = _writes_since(emulator, writes)
    in_place = [(m, p) for m, p in sent if m == "PUT" or (m == "POST" and ":set" in p.rsplit("/", 1)[-1])]
    assert in_place == sent, sent
    assert {name: pool["selfLink"] for name, pool in _pools(emulator).items()} == before
    assert _pools(emulator)["dws-pool"]["config"]["labels"]["planb.dev/plan"] == "dws"
    writes = len(emulator.writes())
    rc, out = _run(emulator, tmp_path)
    assert rc == 0 and _changed(out) == 0 and _writes_since(emulator, writes) == [], out[-3000:]


def test_the_preflight_tag_checks_every_input_and_sends_nothing(emulator: RunningEmulator, tmp_path: Path) -> None:
    """The README's `--tags planb_preflight`: the cluster's and every pool's inputs checked, no API call."""
    rc, out = _run(emulator, tmp_path, "-e", "planb_ondemand_slices=2", "--tags", "planb_preflight")
    assert rc == 0, out[-3000:]
    for pool in ("on-demand-pool", "on-demand-pool-2", "dws-pool"):
        assert f"Validate the node pool and the credentials without any API call - {pool}" in out, out[-3000:]
    assert "Validate the cluster inputs and credentials (no API call)" in out, out[-3000:]
    assert emulator.store.request_log() == []
