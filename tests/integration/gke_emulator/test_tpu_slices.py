"""One node pool per multi-host TPU slice: what the emulator refuses, as GKE does.

GKE's "About TPUs in GKE" (https://cloud.google.com/kubernetes-engine/docs/concepts/tpus): a multi-host
TPU slice node pool is atomic and immutable, always 0 or the slice's hosts nodes; a further slice is a
further pool. The emulator answers any other size with GKE's wording, ``Maximum node count N is not a
valid size of TPU pod slice with topology "AxB"``, and the page's URL.
"""

from __future__ import annotations

from typing import Any

import pytest

from planb.local.gke_emulator import rules
from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.gke_api import call

BASE = "/v1/projects/p/locations/us-east5-b/clusters"


def _seed_pool(name: str = "on-demand-pool", **autoscaling: Any) -> dict[str, Any]:
    """The body gcloud sends for the seed's on-demand pool (ct6e-standard-4t, 4x4: 4 hosts)."""
    scaling = {"enabled": True, "minNodeCount": 0, "maxNodeCount": 4, **autoscaling}
    return {
        "nodePool": {
            "name": name,
            "initialNodeCount": 0,
            "autoscaling": {k: v for k, v in scaling.items() if v is not None},
            "config": {
                "machineType": "ct6e-standard-4t",
                "reservationAffinity": {"consumeReservationType": "NO_RESERVATION"},
            },
            "management": {"autoRepair": True, "autoUpgrade": True},
            "placementPolicy": {"tpuTopology": "4x4"},
        }
    }


@pytest.fixture
def cluster(instant_emulator: RunningEmulator) -> RunningEmulator:
    """The emulator with cluster c."""
    assert call(instant_emulator, "POST", BASE, {"cluster": {"name": "c", "initialClusterVersion": "1.34"}})[0] == 200
    return instant_emulator


@pytest.mark.parametrize(
    ("autoscaling", "message"),
    [
        ({"maxNodeCount": 8}, 'Maximum node count 8 is not a valid size of TPU pod slice with topology "4x4"'),
        ({"maxNodeCount": 2}, 'Maximum node count 2 is not a valid size of TPU pod slice with topology "4x4"'),
        # GKE validates the per-zone maximum: sized by its total max, the per-zone one is 0.
        (
            {"maxNodeCount": None, "totalMaxNodeCount": 4},
            'Maximum node count 0 is not a valid size of TPU pod slice with topology "4x4"',
        ),
        ({"minNodeCount": 2}, 'Minimum node count 2 is not a valid size of TPU pod slice with topology "4x4"'),
    ],
)
def test_a_multi_host_pool_of_other_than_one_slice_is_refused(
    cluster: RunningEmulator, autoscaling: dict[str, Any], message: str
) -> None:
    status, answer = call(cluster, "POST", f"{BASE}/c/nodePools", _seed_pool(**autoscaling))
    assert status == 400 and answer["error"]["status"] == "INVALID_ARGUMENT", answer
    assert message in answer["error"]["message"]
    assert f"(see {rules.DOC_TPUS})" in answer["error"]["message"]
    assert call(cluster, "GET", f"{BASE}/c/nodePools/on-demand-pool")[0] == 404


def test_one_slice_per_pool_is_accepted_and_cannot_grow(cluster: RunningEmulator) -> None:
    """The seed's pool (0..4 nodes of a 4-host slice) is accepted; a second slice is a second pool."""
    assert call(cluster, "POST", f"{BASE}/c/nodePools", _seed_pool())[0] == 200
    assert call(cluster, "POST", f"{BASE}/c/nodePools", _seed_pool("on-demand-pool-2"))[0] == 200
    status, answer = call(
        cluster,
        "POST",
        f"{BASE}/c/nodePools/on-demand-pool:setAutoscaling",
        {"autoscaling": {"enabled": True, "minNodeCount": 0, "maxNodeCount": 8}},
    )
    assert status == 400 and "Maximum node count 8 is not a valid size" in answer["error"]["message"]
    assert call(cluster, "GET", f"{BASE}/c/nodePools/on-demand-pool")[1]["autoscaling"]["maxNodeCount"] == 4


def test_a_single_host_pool_autoscales_by_nodes(cluster: RunningEmulator) -> None:
    body = _seed_pool("single", maxNodeCount=3)
    body["nodePool"]["config"]["machineType"] = "ct6e-standard-8t"
    body["nodePool"]["placementPolicy"] = {"tpuTopology": "2x4"}
    status, answer = call(cluster, "POST", f"{BASE}/c/nodePools", body)
    assert status == 200, answer


def test_the_rule_names_gke_s_autoscaler_code_for_queued_pools() -> None:
    """Plan B: one ProvisioningRequest per multi-host queued pool; the rule carries its sources."""
    doc = rules.check_one_slice.__doc__ or ""
    assert "GKE_AUTOSCALER_MAX_REACHED" in doc and "K concurrent DWS slices" in doc
    assert rules.GKE_AUTOSCALER_MAX_REACHED.startswith("https://github.com/GoogleCloudPlatform/cluster-autoscaler/")
    assert "orchestrator.go#L535-L545" in rules.GKE_AUTOSCALER_MAX_REACHED
