"""The capacity simulator with one node pool per multi-host TPU slice (issue 12, item 1).

A plan of K slices is K pools, each of max one slice and labelled planb.dev/plan=<plan>; Kueue's flavor
selects that label, so a request or a pod matches every pool of its plan. As GKE's autoscaler does, the
simulator skips a pool at its max and takes the next: K DWS requests are provisioned at once, one per
pool, and K on-demand slices grow over K pools.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planb.capacity import simulator as sim
from planb.capacity.settings import Settings
from planb.gke.store import Store
from tests.capacity.fakes import KUBECONFIG, NS, Clock, FakeApi

PARENT = "projects/p/locations/us-east5-b/clusters/tpu-cluster"
TPU = {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "4x4"}
TOLERATIONS = [
    {"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "cloud.google.com/gke-queued", "operator": "Exists", "effect": "NoSchedule"},
]


def _pool(name: str, plan: str) -> dict[str, Any]:
    """A pool as playbooks/cluster.yml makes it: one 4x4 slice (4 hosts), labelled with its plan."""
    dws = plan == "dws"
    return {
        "name": name,
        "cluster": PARENT,
        "initialNodeCount": 0,
        "config": {"machineType": "ct6e-standard-4t", "flexStart": dws, "labels": {"planb.dev/plan": plan}},
        "autoscaling": {"enabled": True, "minNodeCount": 0, "maxNodeCount": 4},
        "queuedProvisioning": {"enabled": dws},
        "placementPolicy": {"tpuTopology": "4x4"},
    }


@pytest.fixture()
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(sim, "time", fake)
    return fake


@pytest.fixture()
def api() -> FakeApi:
    return FakeApi()


@pytest.fixture()
def simulator(tmp_path: Path, api: FakeApi) -> sim.CapacitySimulator:
    store = Store(tmp_path)
    for name, plan in [
        ("on-demand-pool", "on-demand"),
        ("on-demand-pool-2", "on-demand"),
        ("dws-pool", "dws"),
        ("dws-pool-2", "dws"),
    ]:
        store.node_pools[f"{PARENT}/nodePools/{name}"] = _pool(name, plan)
    store.save()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    simulator = sim.CapacitySimulator(kubeconfig, tmp_path, log=lambda _: None)
    simulator.kube = api  # type: ignore[assignment]
    return simulator


def _dws_request(api: FakeApi, name: str) -> None:
    """A request as Kueue writes it for the dws flavor: its template selects the plan label, not a pool."""
    template = f"ppt-{name}"
    api.templates[template] = {"template": {"spec": {"nodeSelector": {"planb.dev/plan": "dws", **TPU}}}}
    api.requests[f"{NS}/{name}"] = {
        "metadata": {"namespace": NS, "name": name, "generation": 1, "resourceVersion": "1"},
        "spec": {
            "provisioningClassName": sim.QUEUED_CLASS,
            "podSets": [{"podTemplateRef": {"name": template}, "count": 4}],
            "parameters": {},
        },
    }


def _nodes_by_pool(api: FakeApi) -> dict[str, int]:
    out: dict[str, int] = {}
    for node in api.nodes.values():
        pool = node["metadata"]["labels"]["cloud.google.com/gke-nodepool"]
        out[pool] = out.get(pool, 0) + 1
    return out


def test_k_dws_pools_provision_k_requests_at_once(simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock) -> None:
    for name in ("a-dws-prov-1", "b-dws-prov-1", "c-dws-prov-1"):
        _dws_request(api, name)
    simulator.step(Settings(provisioning_delay_seconds=0))
    states = {n: api.conds(n)["Provisioned"][0] for n in ("a-dws-prov-1", "b-dws-prov-1", "c-dws-prov-1")}
    assert states == {"a-dws-prov-1": "True", "b-dws-prov-1": "True", "c-dws-prov-1": "False"}
    # One request per pool: each pool holds one slice.
    assert _nodes_by_pool(api) == {"dws-pool": 4, "dws-pool-2": 4}
    assert "has 0 of its 4 node(s) free and the request needs 4" in api.conds("c-dws-prov-1")["Provisioned"][2]
    for node in api.nodes.values():
        # The nodes carry the pool's config.labels (the plan label Kueue's flavor selects) and GKE's own.
        assert node["metadata"]["labels"]["planb.dev/plan"] == "dws"
        assert node["metadata"]["labels"]["cloud.google.com/gke-queued"] == "true"
    # When the first request is done (deleted), its pool takes the waiting one.
    freed = next(
        n["metadata"]["labels"]["cloud.google.com/gke-nodepool"]
        for n in api.nodes.values()
        if n["metadata"]["annotations"][sim.REQUEST] == f"{NS}/a-dws-prov-1"
    )
    del api.requests[f"{NS}/a-dws-prov-1"]
    simulator.step(Settings(provisioning_delay_seconds=0))
    simulator.step(Settings(provisioning_delay_seconds=0))
    assert api.conds("c-dws-prov-1")["Provisioned"][0] == "True"
    on_freed = {
        n["metadata"]["annotations"][sim.REQUEST]
        for n in api.nodes.values()
        if n["metadata"]["labels"]["cloud.google.com/gke-nodepool"] == freed
    }
    assert on_freed == {f"{NS}/c-dws-prov-1"}


def _pending_worker(name: str) -> dict[str, Any]:
    """A TPU worker pod of plan A that the scheduler could not place (Kueue injected the flavor's label)."""
    return {
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "nodeSelector": {"planb.dev/plan": "on-demand", **TPU},
            "tolerations": TOLERATIONS,
            "containers": [{"name": "ray-worker", "resources": {"requests": {"cpu": "8", "google.com/tpu": "4"}}}],
        },
        "status": {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
        },
    }


def test_on_demand_slices_grow_over_the_plan_s_pools(
    simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock
) -> None:
    api.pods = [_pending_worker(f"job-{j}-worker-{i}") for j in (1, 2) for i in range(4)]
    simulator.step(Settings())
    # Two jobs of one slice each: one slice in each of plan A's two pools.
    assert _nodes_by_pool(api) == {"on-demand-pool": 4, "on-demand-pool-2": 4}
    assert {n["metadata"]["labels"]["planb.dev/plan"] for n in api.nodes.values()} == {"on-demand"}
    # Before the scheduler binds the pods, the new nodes count as capacity on the way: nothing more is made.
    simulator.step(Settings())
    assert len(api.nodes) == 8
    # A third job finds both pools full: its pods stay pending (plan A's pools are all at their max).
    api.pods += [_pending_worker(f"job-3-worker-{i}") for i in range(4)]
    for node in list(api.nodes):
        api.run_pod_on(node)
    simulator.step(Settings())
    assert len(api.nodes) == 8


def test_a_stockout_of_one_pool_leaves_the_others_of_the_plan(
    simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock
) -> None:
    api.pods = [_pending_worker(f"job-1-worker-{i}") for i in range(4)]
    simulator.step(Settings(stockout=("on-demand-pool",)))
    assert _nodes_by_pool(api) == {"on-demand-pool-2": 4}
    api.nodes.clear()
    simulator.step(Settings(stockout=("on-demand-pool", "on-demand-pool-2")))
    assert api.nodes == {}
