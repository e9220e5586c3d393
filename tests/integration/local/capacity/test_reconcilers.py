"""The simulator as reconcilers: each owns its state, they share one context, and the nodes reconciler is the one
place nodes are made and removed (so scale-down's idle timers forget a node whoever removed it)."""

from __future__ import annotations

from pathlib import Path

from planb.local.capacity import simulator as sim
from planb.local.capacity.settings import Settings
from tests.support.integration.capacity import ServePools
from tests.support.integration.capacity_fakes import KUBECONFIG, Clock, FakeApi

SPOT_POOL = {
    "name": "spot-pool",
    "initialNodeCount": 4,
    "config": {"machineType": "ct6e-standard-4t", "spot": True},
    "autoscaling": {"enabled": True, "minNodeCount": 0, "maxNodeCount": 4},
    "placementPolicy": {"tpuTopology": "4x4"},
}
PENDING = {
    "metadata": {"name": "worker", "namespace": "default", "uid": "u1"},
    "spec": {
        "tolerations": [{"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"}],
        "containers": [{"name": "w", "resources": {"requests": {"cpu": "8", "google.com/tpu": "4"}}}],
    },
    "status": {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
    },
}


def _simulator(tmp_path: Path, api: FakeApi, serve_pools: ServePools) -> sim.CapacitySimulator:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    simulator = sim.CapacitySimulator(kubeconfig, tmp_path, log=lambda _: None, gke=serve_pools([SPOT_POOL]))
    simulator.kube = api  # type: ignore[assignment]
    return simulator


def test_the_reconcilers_share_the_simulator_s_context(tmp_path: Path, api: FakeApi, serve_pools: ServePools) -> None:
    simulator = _simulator(tmp_path, api, serve_pools)
    reconcilers = [simulator.nodes, simulator.spot, simulator.queued, simulator.best_effort, simulator.autoscaler]
    assert all(r.ctx is simulator.ctx for r in reconcilers)
    assert simulator.queued.booking.ctx is simulator.ctx
    assert simulator.ctx.kube is api  # an API set on the simulator is the one every reconciler calls
    simulator.next_deadline = 5.0
    simulator.ctx.deadline(3.0)
    assert simulator.next_deadline == 3.0


def test_a_node_removed_is_forgotten_by_the_idle_timers(
    tmp_path: Path, api: FakeApi, serve_pools: ServePools, clock: Clock
) -> None:
    simulator = _simulator(tmp_path, api, serve_pools)
    api.pods.append(PENDING)
    simulator.step(Settings(scale_down_after_seconds=60))  # one slice for the pending pod
    api.pods.clear()
    simulator.step(Settings(scale_down_after_seconds=60))  # its nodes run nothing: idle since now
    names = sorted(api.nodes)
    assert len(names) == 4 and set(simulator.nodes.idle_since) == set(names)
    simulator.nodes.delete(names[0], "test")
    assert names[0] not in simulator.nodes.idle_since and names[0] not in api.nodes
    clock.now += 60
    simulator.step(Settings(scale_down_after_seconds=60))
    assert api.nodes == {} and simulator.nodes.idle_since == {}
