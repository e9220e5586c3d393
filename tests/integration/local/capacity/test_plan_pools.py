"""The capacity simulator with one node pool per multi-host TPU slice.

A plan of K slices is K pools, each of max one slice and labelled planb.dev/plan=<plan>; Kueue's flavor
selects that label, so a request or a pod matches every pool of its plan. As GKE's autoscaler does, the
simulator skips a pool at its max and takes the next: K DWS requests are provisioned at once, one per
pool, and K on-demand slices grow over K pools. A request of two slices fits no pool and fails as GKE fails it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planb.local.capacity import dws, nodes
from planb.local.capacity import simulator as sim
from planb.local.capacity.settings import Settings
from tests.support.integration.capacity import ServePools
from tests.support.integration.capacity_fakes import KUBECONFIG, NS, Clock, FakeApi

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
        "initialNodeCount": 0,
        "config": {"machineType": "ct6e-standard-4t", "flexStart": dws, "labels": {"planb.dev/plan": plan}},
        "autoscaling": {"enabled": True, "minNodeCount": 0, "maxNodeCount": 4},
        "queuedProvisioning": {"enabled": dws},
        "placementPolicy": {"tpuTopology": "4x4"},
    }


@pytest.fixture()
def simulator(tmp_path: Path, api: FakeApi, serve_pools: ServePools) -> sim.CapacitySimulator:
    plans = [
        ("on-demand-pool", "on-demand"),
        ("on-demand-pool-2", "on-demand"),
        ("dws-pool", "dws"),
        ("dws-pool-2", "dws"),
    ]
    gke = serve_pools([_pool(name, plan) for name, plan in plans])
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    simulator = sim.CapacitySimulator(kubeconfig, tmp_path, log=lambda _: None, gke=gke)
    simulator.kube = api  # type: ignore[assignment]
    return simulator


def _dws_request(api: FakeApi, name: str, slices: int = 1) -> None:
    """A request as Kueue writes it for the dws flavor: its template selects the plan label, not a pool, and its
    one PodSet asks for every host of the job's slices (controller.go syncOwnedProvisionRequest: count =
    replicas x numOfHosts of the worker group)."""
    template = f"ppt-{name}"
    api.templates[template] = {"template": {"spec": {"nodeSelector": {"planb.dev/plan": "dws", **TPU}}}}
    api.requests[f"{NS}/{name}"] = {
        "metadata": {"namespace": NS, "name": name, "generation": 1, "resourceVersion": "1"},
        "spec": {
            "provisioningClassName": dws.QUEUED_CLASS,
            "podSets": [{"podTemplateRef": {"name": template}, "count": 4 * slices}],
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
    assert api.conds("a-dws-prov-1")["Provisioned"][0] == api.conds("b-dws-prov-1")["Provisioned"][0] == "True"
    # One request per pool: each pool holds one slice. No pool is left for the third, so no node group is
    # chosen for it: GKE skips pools at their max and says so on Accepted.
    assert _nodes_by_pool(api) == {"dws-pool": 4, "dws-pool-2": 4}
    assert api.conds("c-dws-prov-1") == {
        "Accepted": (
            "False",
            "NodepoolSizeReached",
            "Max nodepool size reached, affected nodepools: dws-pool, dws-pool-2",
        )
    }
    for node in api.nodes.values():
        # The nodes carry the pool's config.labels (the plan label Kueue's flavor selects) and GKE's own.
        assert node["metadata"]["labels"]["planb.dev/plan"] == "dws"
        assert node["metadata"]["labels"]["cloud.google.com/gke-queued"] == "true"
    # planb's difference: a request that one free pool could hold waits past GKE's two-minute retry period.
    clock.sleep(120)
    simulator.step(Settings(provisioning_delay_seconds=0))
    assert api.conds("c-dws-prov-1")["Accepted"][:2] == ("False", "NodepoolSizeReached")
    assert "Failed" not in api.conds("c-dws-prov-1")
    # When the first request is done (deleted), its pool takes the waiting one.
    freed = next(
        n["metadata"]["labels"]["cloud.google.com/gke-nodepool"]
        for n in api.nodes.values()
        if n["metadata"]["annotations"][nodes.REQUEST] == f"{NS}/a-dws-prov-1"
    )
    del api.requests[f"{NS}/a-dws-prov-1"]
    simulator.step(Settings(provisioning_delay_seconds=0))
    simulator.step(Settings(provisioning_delay_seconds=0))
    assert api.conds("c-dws-prov-1")["Provisioned"][0] == "True"
    on_freed = {
        n["metadata"]["annotations"][nodes.REQUEST]
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
    # GKE's autoscaler tells each of its pods why: both pools the pods fit are at their max.
    told = {(e["involvedObject"]["name"], e["message"]) for e in api.events}
    assert {(name, message) for name, message in told if name.startswith("job-3-")} == {
        (f"job-3-worker-{i}", "Pod didn't trigger scale-up: 2 max node group size reached") for i in range(4)
    }


#: Both plan A pools stocked out; the plan B pools are queued (GKE's queued provisioning, not the autoscaler's).
_NOT_TRIGGERED = "Pod didn't trigger scale-up: 2 in backoff after failed scale-up"


def test_a_stockout_of_one_pool_leaves_the_others_of_the_plan(
    simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock
) -> None:
    api.pods = [_pending_worker(f"job-1-worker-{i}") for i in range(4)]
    simulator.step(Settings(stockout=("on-demand-pool",)))
    assert _nodes_by_pool(api) == {"on-demand-pool-2": 4}
    assert api.events == []  # a pool took them
    api.nodes.clear()
    simulator.step(Settings(stockout=("on-demand-pool", "on-demand-pool-2")))
    assert api.nodes == {}
    # Every pool the pods fit is stocked out: each pod gets GKE's autoscaler's Event, once.
    simulator.step(Settings(stockout=("on-demand-pool", "on-demand-pool-2")))
    assert sorted(e["involvedObject"]["name"] for e in api.events) == [f"job-1-worker-{i}" for i in range(4)]
    assert {(e["reason"], e["message"], e["source"]["component"]) for e in api.events} == {
        ("NotTriggerScaleUp", _NOT_TRIGGERED, "cluster-autoscaler")
    }


def test_a_two_slice_request_fits_no_one_slice_pool_and_fails_as_gke_fails_it(
    simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock
) -> None:
    """8 pods, pools of 4: GKE gives no node group the request, then fails it when its retry period is over."""
    _dws_request(api, "two-dws-prov-1", slices=2)
    simulator.step(Settings(provisioning_delay_seconds=0))
    first = api.writes[0]
    assert first == ("two-dws-prov-1", [{**first[1][0], "status": "False", "reason": "NotAccepted"}])
    assert first[1][0]["message"] == "Provisioning Request wasn't accepted."
    # Both pools are too small, which GKE's orchestrator does not name while the request is young.
    assert api.conds("two-dws-prov-1") == {
        "Accepted": (
            "False",
            "NoQueuedNodepoolAvailable",
            "No nodepool with QueuedProvisioning enabled is available for scale up",
        )
    }
    assert simulator.next_deadline == clock.now + 120
    clock.sleep(119)
    simulator.step(Settings(provisioning_delay_seconds=0))
    assert "Failed" not in api.conds("two-dws-prov-1")
    clock.sleep(1)
    simulator.step(Settings(provisioning_delay_seconds=0))
    assert api.conds("two-dws-prov-1")["Failed"] == (
        "True",
        "NodepoolSizeReached",
        "Max nodepool size reached, affected nodepools: dws-pool, dws-pool-2",
    )
    assert api.nodes == {}  # nothing was provisioned, not even one slice


def test_a_request_no_queued_pool_matches_is_refused_with_the_scheduler_s_predicate(
    simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock
) -> None:
    _dws_request(api, "odd-dws-prov-1")
    api.templates["ppt-odd-dws-prov-1"]["template"]["spec"]["nodeSelector"]["planb.dev/plan"] = "flex"
    simulator.step(Settings(provisioning_delay_seconds=0))
    message = (
        "Provisioning Request's pods cannot be scheduled in the nodepool. Predicate checking errors: "
        "dws-pool (node(s) didn't match Pod's node affinity/selector), "
        "dws-pool-2 (node(s) didn't match Pod's node affinity/selector)"
    )
    assert api.conds("odd-dws-prov-1") == {
        "Accepted": ("False", "ProvisioningRequestNotSchedulableInNodepool", message)
    }
    clock.sleep(120)
    simulator.step(Settings(provisioning_delay_seconds=0))
    assert api.conds("odd-dws-prov-1")["Failed"] == ("True", "ProvisioningRequestNotSchedulableInNodepool", message)
