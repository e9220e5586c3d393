"""How the simulator reads GKE node pools and matches pods to them (pure logic, no stack)."""

from __future__ import annotations

from pathlib import Path

import pytest

from planb.capacity.pools import from_gke
from planb.capacity.settings import Settings, SettingsError, load, save, update
from planb.capacity.simulator import tolerates

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
