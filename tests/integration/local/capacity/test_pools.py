"""How the simulator reads GKE node pools and matches pods to them (pure logic, no stack)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planb.local.capacity.autoscaler import tolerates
from planb.local.capacity.pools import from_gke
from planb.local.capacity.settings import Settings, SettingsError, load, save, update
from planb.local.capacity.simulator import CapacitySimulator
from tests.support.integration.capacity import ServePools

DWS_POOL = {
    "name": "dws-pool",
    "cluster": "projects/p/locations/us-east5-b/clusters/tpu-cluster",
    "initialNodeCount": 0,
    "config": {"machineType": "ct6e-standard-4t", "flexStart": True, "labels": {"team": "ml"}},
    "autoscaling": {"enabled": True, "totalMinNodeCount": 0, "totalMaxNodeCount": 4, "locationPolicy": "ANY"},
    "queuedProvisioning": {"enabled": True},
    "placementPolicy": {"tpuTopology": "4x4"},
}


def test_dws_pool_nodes_carry_gke_labels_and_taints() -> None:
    pool = from_gke(DWS_POOL)
    assert (pool.cluster, pool.max_nodes, pool.hosts_per_slice, pool.queued_provisioning) == (
        "tpu-cluster",
        4,
        4,
        True,
    )
    assert pool.node_labels() == {
        "team": "ml",
        "cloud.google.com/gke-nodepool": "dws-pool",
        "node.kubernetes.io/instance-type": "ct6e-standard-4t",
        "cloud.google.com/machine-family": "ct6e",
        "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
        "cloud.google.com/gke-tpu-topology": "4x4",
        "cloud.google.com/gke-flex-start": "true",
        "cloud.google.com/gke-provisioning": "flex-start",
        "cloud.google.com/gke-queued": "true",
    }
    assert pool.node_taints() == [
        {"key": "google.com/tpu", "value": "present", "effect": "NoSchedule"},
        {"key": "cloud.google.com/gke-queued", "value": "true", "effect": "NoSchedule"},
    ]


def test_pool_matches_selector_only_on_its_labels() -> None:
    pool = from_gke(DWS_POOL)
    assert pool.matches({"cloud.google.com/gke-nodepool": "dws-pool", "cloud.google.com/gke-tpu-topology": "4x4"})
    assert not pool.matches({"cloud.google.com/gke-nodepool": "on-demand-pool"})
    assert not pool.matches({"cloud.google.com/gke-tpu-topology": "2x4"})


@pytest.mark.parametrize(
    ("tolerations", "expected"),
    [
        ([], False),
        ([{"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"}], False),
        (
            [
                {"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"},
                {"key": "cloud.google.com/gke-queued", "operator": "Exists", "effect": "NoSchedule"},
            ],
            True,
        ),
        ([{"operator": "Exists"}], True),
        (
            [
                {"key": "google.com/tpu", "operator": "Equal", "value": "present"},
                {"key": "cloud.google.com/gke-queued", "operator": "Equal", "value": "false"},
            ],
            False,
        ),
    ],
)
def test_tolerations_against_dws_taints(tolerations: list[dict[str, str]], expected: bool) -> None:
    assert tolerates(tolerations, from_gke(DWS_POOL).node_taints()) is expected


def test_settings_round_trip_and_validation(tmp_path: Path) -> None:
    state = tmp_path
    assert load(state) == Settings()
    update(state, fail_next=2, stockout=("on-demand-pool",))
    assert load(state).fail_next == 2
    assert load(state).stockout == ("on-demand-pool",)
    with pytest.raises(SettingsError, match="fail_next must be >= 0, got -1"):
        save(Settings(fail_next=-1), state)


class FakeKube:
    """An API server without pods or ProvisioningRequests whose nodes are the ones created."""

    def __init__(self) -> None:
        self.created: list[dict[str, Any]] = []

    def items(self, path: str, query: dict[str, str] | None = None) -> list[dict[str, Any]]:
        return list(self.created) if path == "/api/v1/nodes" else []

    def get(self, path: str, query: dict[str, str] | None = None) -> dict[str, Any] | None:
        return {"items": []}

    def create(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.created.append(body)
        return body


def test_simulator_reports_a_pool_with_an_unknown_machine_type_and_serves_the_others(
    tmp_path: Path, serve_pools: ServePools
) -> None:
    gke = serve_pools(
        [
            {"name": "default-pool", "initialNodeCount": 1, "config": {"machineType": "n2-standard-16"}},
            {"name": "odd-pool", "initialNodeCount": 1, "config": {"machineType": "a3-highgpu-3g"}},
        ]
    )
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
        "clusters: [{name: x, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "contexts: [{name: x, context: {cluster: x, user: x}}]\nusers: [{name: x, user: {token: t}}]\n"
    )
    logs: list[str] = []
    simulator = CapacitySimulator(kubeconfig, tmp_path, log=logs.append, gke=gke)
    fake = FakeKube()
    simulator.kube = fake  # type: ignore[assignment]
    simulator.step(Settings())
    simulator.step(Settings())
    broken = [line for line in logs if line.startswith("pool odd-pool: no nodes: ")]
    assert len(broken) == 1, logs  # said once, not on every pass
    assert "machine type 'a3-highgpu-3g' is not in the planb catalog; known machine types: " in broken[0]
    assert "a3-highgpu-1g" in broken[0]
    # The default pool still gets its node, sized by the catalog's n2-standard-16 (16 vCPUs, 64 GiB).
    assert [node["status"]["capacity"] for node in fake.created] == [{"cpu": "16", "memory": "64Gi", "pods": "110"}]
