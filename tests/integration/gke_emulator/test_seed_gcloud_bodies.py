"""The seed's own gcloud commands, as the REST bodies gcloud sends, are accepted by the emulator as GKE accepts them.

The bodies (``tests/support/integration/gke/seed_bodies.py``) are what Google Cloud SDK 528.0.0 sends for the seed's
commands (captured against a loopback server with ``CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER``; flag -> field mapping
in gcloud's ``lib/googlecloudsdk/api_lib/container/api_adapter.py``, ``CreateNodePoolCommon``). The seed is Google's
tutorial https://cloud.google.com/kubernetes-engine/docs/tutorials/ray-kueue-dws, so GKE accepts them: the
emulator must too, and must fill what they omit (``autoscaling.locationPolicy``, GKE's taints) as GKE does.
"""

from __future__ import annotations

from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.gke_api import call, create
from tests.support.integration.gke.seed_bodies import (
    CLUSTER_PATH,
    LOCATION,
    SEED_CLUSTER,
    SEED_DWS_POOL,
    SEED_ONDEMAND_POOL,
)


def _seed_cluster(emulator: RunningEmulator) -> None:
    create(emulator, LOCATION, f"{LOCATION}/clusters", SEED_CLUSTER)


def test_seed_clusters_create_body_is_accepted(emulator: RunningEmulator) -> None:
    _seed_cluster(emulator)
    status, cluster = call(emulator, "GET", f"/v1/{CLUSTER_PATH}")
    assert status == 200 and cluster["status"] == "RUNNING", cluster
    assert cluster["currentMasterVersion"].startswith("1.34.")
    assert cluster["addonsConfig"]["rayOperatorConfig"] == {"enabled": True}
    assert cluster["nodePoolDefaults"]["nodeConfigDefaults"]["gcfsConfig"] == {"enabled": True}
    (default_pool,) = cluster["nodePools"]
    assert default_pool["config"]["machineType"] == "n2-standard-16"
    # A CPU pool gets none of the accelerator taints.
    assert not default_pool["config"].get("taints")


def test_seed_on_demand_node_pools_create_body_is_accepted(emulator: RunningEmulator) -> None:
    _seed_cluster(emulator)
    create(emulator, LOCATION, f"{CLUSTER_PATH}/nodePools", SEED_ONDEMAND_POOL)
    pool = call(emulator, "GET", f"/v1/{CLUSTER_PATH}/nodePools/on-demand-pool")[1]
    assert pool["status"] == "RUNNING"
    assert pool["placementPolicy"] == {"tpuTopology": "4x4"}
    # What the body omits, GKE fills: the autoscaler's location policy defaults to BALANCED.
    assert pool["autoscaling"]["locationPolicy"] == "BALANCED"
    # GKE taints TPU nodes itself (About TPUs in GKE), in the pool's config.taints.
    assert {"key": "google.com/tpu", "value": "present", "effect": "NO_SCHEDULE"} in pool["config"]["taints"]


def test_seed_dws_node_pools_create_body_is_accepted(emulator: RunningEmulator) -> None:
    """The seed's plan B: flex-start + queued provisioning with auto-repair on and no location policy."""
    _seed_cluster(emulator)
    create(emulator, LOCATION, f"{CLUSTER_PATH}/nodePools", SEED_DWS_POOL)
    pool = call(emulator, "GET", f"/v1/{CLUSTER_PATH}/nodePools/dws-pool")[1]
    # Seed step 6: gcloud container node-pools describe dws-pool --format="get(config.flexStart)" -> True
    assert pool["config"]["flexStart"] is True
    assert pool["queuedProvisioning"] == {"enabled": True}
    assert pool["management"] == {"autoRepair": True, "autoUpgrade": True}
    assert pool["autoscaling"]["locationPolicy"] == "BALANCED"
    taints = pool["config"]["taints"]
    assert {"key": "google.com/tpu", "value": "present", "effect": "NO_SCHEDULE"} in taints
    assert {"key": "cloud.google.com/gke-queued", "value": "true", "effect": "NO_SCHEDULE"} in taints
