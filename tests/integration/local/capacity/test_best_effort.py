"""Best-effort-atomic ProvisioningRequests on ordinary pools, stepped with a fake clock.

Two on-demand pools of one 4x4 TPU slice each (4 hosts, max 4), as playbooks/cluster.yml makes a plan's pools;
a request asks for one slice's worth of pods (count 4) or more, with the template Kueue writes for the flavor.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from planb.local.capacity import besteffort_facts, dws, nodes
from planb.local.capacity import simulator as sim
from planb.local.capacity.settings import Settings
from tests.support.integration.capacity import ServePools
from tests.support.integration.capacity_fakes import KUBECONFIG, NS, Clock, FakeApi

TPU = {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "4x4"}
SELECTOR = {"planb.dev/plan": "on-demand", **TPU}
TOLERATIONS = [{"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"}]
CONTAINERS = [{"name": "ray-worker", "resources": {"requests": {"cpu": "8", "google.com/tpu": "4"}}}]
POOLS = ("on-demand-pool", "on-demand-pool-2")
NOT_FOUND = ("False", "CapacityIsNotFound", "Capacity is not found, CA will try to find it later.")
ACCEPTED = ("True", "Accepted", "ProvisioningRequest is accepted by ClusterAutoscaler")

Make = Callable[..., tuple[sim.CapacitySimulator, list[str]]]


def _pool(name: str, min_nodes: int = 0) -> dict[str, Any]:
    return {
        "name": name,
        "initialNodeCount": min_nodes,
        "config": {"machineType": "ct6e-standard-4t", "labels": {"planb.dev/plan": "on-demand"}},
        "autoscaling": {"enabled": True, "minNodeCount": min_nodes, "maxNodeCount": 4},
        "placementPolicy": {"tpuTopology": "4x4"},
    }


@pytest.fixture()
def make(tmp_path: Path, api: FakeApi, serve_pools: ServePools) -> Make:
    """A simulator over these pools, and the lines it logs."""

    def build(pools: list[dict[str, Any]] | None = None) -> tuple[sim.CapacitySimulator, list[str]]:
        gke = serve_pools(pools or [_pool(name) for name in POOLS])
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(KUBECONFIG)
        logs: list[str] = []
        simulator = sim.CapacitySimulator(kubeconfig, tmp_path, log=logs.append, gke=gke)
        simulator.kube = api  # type: ignore[assignment]
        return simulator, logs

    return build


def _request(api: FakeApi, clock: Clock, name: str, count: int = 4) -> None:
    """A best-effort-atomic request as Kueue writes it for an on-demand flavor's admission check."""
    template = f"ppt-{name}"
    spec = {"nodeSelector": dict(SELECTOR), "tolerations": TOLERATIONS, "containers": CONTAINERS}
    api.templates[template] = {"template": {"spec": spec}}
    api.requests[f"{NS}/{name}"] = {
        "metadata": {"namespace": NS, "name": name, "generation": 1, "creationTimestamp": dws.iso(clock.now)},
        "spec": {
            "provisioningClassName": besteffort_facts.BEST_EFFORT_CLASS,
            "podSets": [{"podTemplateRef": {"name": template}, "count": count}],
        },
    }


def _worker(name: str, consumes: str | None = None, node: str | None = None) -> dict[str, Any]:
    """A TPU worker pod: pending and unschedulable, or running on `node`; `consumes`: Kueue's annotation."""
    meta: dict[str, Any] = {"name": name, "namespace": NS}
    if consumes:
        meta["annotations"] = {"autoscaling.x-k8s.io/consume-provisioning-request": consumes}
    spec: dict[str, Any] = {"nodeSelector": dict(SELECTOR), "tolerations": TOLERATIONS, "containers": CONTAINERS}
    if node:
        return {"metadata": meta, "spec": {**spec, "nodeName": node}, "status": {"phase": "Running"}}
    unschedulable = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
    return {"metadata": meta, "spec": spec, "status": {"phase": "Pending", "conditions": unschedulable}}


def _by_pool(api: FakeApi) -> dict[str, int]:
    out: dict[str, int] = {}
    for node in api.nodes.values():
        pool = node["metadata"]["labels"]["cloud.google.com/gke-nodepool"]
        out[pool] = out.get(pool, 0) + 1
    return out


def test_one_all_or_nothing_scale_up_then_the_booking_holds_the_nodes_until_it_expires(
    make: Make, api: FakeApi, clock: Clock
) -> None:
    simulator, logs = make()
    _request(api, clock, "job-a")
    simulator.step(Settings())
    assert api.conds("job-a") == {
        "Accepted": ACCEPTED,
        "Provisioned": ("True", "CapacityIsProvisioned", "Capacity is found in the cluster"),
    }
    assert _by_pool(api) == {"on-demand-pool": 4}
    for node in api.nodes.values():
        # Ordinary autoscaled nodes of the pool: no queued request's annotation or label, which the DWS
        # lifecycle would delete them with.
        assert nodes.REQUEST not in node["metadata"]["annotations"]
        assert "autoscaling.gke.io/provisioning-request" not in node["metadata"]["labels"]
        assert node["metadata"]["labels"][nodes.MANAGED] == "true"
    # Booked: no pod runs on them, yet the scale-down leaves them past its idle time.
    for _ in range(3):
        clock.sleep(200)
        simulator.step(Settings())
    assert _by_pool(api) == {"on-demand-pool": 4}
    assert "BookingExpired" not in api.conds("job-a")
    clock.sleep(1)  # 601 s after Provisioned=True
    simulator.step(Settings())
    assert api.conds("job-a")["BookingExpired"] == (
        "True",
        "CapacityReservationTimeExpired",
        "Capacity reservation time is expired",
    )
    # Then they are ordinary idle nodes: gone after the scale-down's idle time.
    clock.sleep(31)
    simulator.step(Settings())
    assert api.nodes == {}
    assert any("job-a: Provisioned, CapacityIsProvisioned (+4 node(s) on on-demand-pool)" in line for line in logs)


def test_the_booking_is_consumed_once_all_the_request_s_pods_run(make: Make, api: FakeApi, clock: Clock) -> None:
    simulator, _ = make()
    _request(api, clock, "job-a")
    simulator.step(Settings())
    names = sorted(api.nodes)
    api.pods = [_worker(f"w-{i}", consumes="job-a", node=name) for i, name in enumerate(names[:3])]
    simulator.step(Settings())
    assert "BookingExpired" not in api.conds("job-a")  # 3 of 4 pods scheduled
    api.pods.append(_worker("w-3", consumes="job-a", node=names[3]))
    simulator.step(Settings())
    assert api.conds("job-a")["BookingExpired"] == (
        "True",
        "CapacityBookingConsumed",
        "Capacity booking consumed: all pods scheduled",
    )


def test_booked_nodes_are_not_free_for_other_pods_nor_do_the_request_s_pods_scale_up(
    make: Make, api: FakeApi, clock: Clock
) -> None:
    simulator, _ = make()
    _request(api, clock, "job-a")
    simulator.step(Settings())
    assert _by_pool(api) == {"on-demand-pool": 4}
    # The request's own pods, pending before the scheduler binds them, trigger no scale-up of their own.
    api.pods = [_worker(f"a-{i}", consumes="job-a") for i in range(4)]
    simulator.step(Settings())
    assert _by_pool(api) == {"on-demand-pool": 4}
    assert api.events == []
    # Another job's pods find the booked nodes taken: the autoscaler grows the plan's other pool for them.
    api.pods += [_worker(f"b-{i}") for i in range(4)]
    simulator.step(Settings())
    assert _by_pool(api) == {"on-demand-pool": 4, "on-demand-pool-2": 4}


def test_free_nodes_that_fit_give_capacity_is_found_without_a_scale_up(make: Make, api: FakeApi, clock: Clock) -> None:
    simulator, logs = make([_pool("on-demand-pool", min_nodes=4), _pool("on-demand-pool-2")])
    simulator.step(Settings())
    assert _by_pool(api) == {"on-demand-pool": 4}  # the pool's minimum, idle
    _request(api, clock, "job-a")
    simulator.step(Settings())
    assert api.conds("job-a")["Provisioned"] == ("True", "CapacityIsFound", "Capacity is found in the cluster")
    assert _by_pool(api) == {"on-demand-pool": 4}
    # The found nodes are booked: a second request finds none free and scales the other pool.
    _request(api, clock, "job-b")
    simulator.step(Settings())
    assert api.conds("job-b")["Provisioned"][1] == "CapacityIsProvisioned"
    assert _by_pool(api) == {"on-demand-pool": 4, "on-demand-pool-2": 4}
    assert any("job-a: Provisioned, CapacityIsFound (4 free node(s) fit)" in line for line in logs)


def test_no_partial_scale_up_a_request_no_single_pool_holds_is_not_found(
    make: Make, api: FakeApi, clock: Clock
) -> None:
    """8 pods: the two pools could hold 4 each, but one all-or-nothing scale-up is one node group."""
    simulator, _ = make()
    _request(api, clock, "two-slices", count=8)
    simulator.step(Settings())
    assert api.conds("two-slices") == {"Accepted": ACCEPTED, "Provisioned": NOT_FOUND}
    assert api.nodes == {}


def test_a_stockout_leaves_it_not_found_and_it_is_retried_after_a_doubling_backoff(
    make: Make, api: FakeApi, clock: Clock
) -> None:
    simulator, logs = make()
    _request(api, clock, "job-a")
    out = Settings(stockout=POOLS)
    simulator.step(out)
    assert api.conds("job-a") == {"Accepted": ACCEPTED, "Provisioned": NOT_FOUND}
    assert api.nodes == {}
    # Retried after 60 s, then 120, 240, 480, and at most every 600 s.
    for wait in (60, 120, 240, 480, 600, 600):
        tries = sum("job-a: CapacityIsNotFound" in line for line in logs)
        clock.sleep(wait - 1)
        simulator.step(out)
        assert sum("job-a: CapacityIsNotFound" in line for line in logs) == tries  # still in its backoff
        clock.sleep(2)
        simulator.step(out)
        assert logs[-1].endswith(f"retry in {min(2 * wait, 600)} s"), logs[-1]
    assert "Failed" not in api.conds("job-a")  # never failed for want of capacity
    # Capacity back: the next retry provisions it.
    clock.sleep(601)
    simulator.step(Settings())
    assert api.conds("job-a")["Provisioned"][:2] == ("True", "CapacityIsProvisioned")
    assert _by_pool(api) == {"on-demand-pool": 4}


def test_a_request_never_provisioned_fails_expired_after_seven_days(make: Make, api: FakeApi, clock: Clock) -> None:
    simulator, _ = make()
    _request(api, clock, "job-a")
    out = Settings(stockout=POOLS)
    simulator.step(out)
    clock.sleep(7 * 24 * 3600 - 10)
    simulator.step(out)
    assert "Failed" not in api.conds("job-a")
    clock.sleep(11)
    simulator.step(out)
    assert api.conds("job-a")["Failed"] == ("True", "Expired", "ProvisioningRequest is expired")
    clock.sleep(3600)
    simulator.step(Settings())
    assert api.nodes == {}  # a failed request is not provisioned again


def test_one_request_is_taken_per_pass(make: Make, api: FakeApi, clock: Clock) -> None:
    simulator, _ = make()
    _request(api, clock, "job-a")
    _request(api, clock, "job-b")
    simulator.step(Settings())
    assert "Provisioned" in api.conds("job-a")
    assert api.conds("job-b") == {}
    assert simulator.next_deadline <= clock.now  # the next pass comes at once
    simulator.step(Settings())
    assert api.conds("job-b")["Provisioned"][:2] == ("True", "CapacityIsProvisioned")
    assert _by_pool(api) == {"on-demand-pool": 4, "on-demand-pool-2": 4}
