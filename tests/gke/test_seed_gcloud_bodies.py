"""The seed's own gcloud commands, as the REST bodies gcloud sends, are accepted by the emulator as GKE accepts them.

The bodies are what Google Cloud SDK 528.0.0 sends for the seed's commands (captured against a loopback
server with ``CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER``; flag -> field mapping in gcloud's
``lib/googlecloudsdk/api_lib/container/api_adapter.py``, ``CreateNodePoolCommon``). The seed is Google's
tutorial https://cloud.google.com/kubernetes-engine/docs/tutorials/ray-kueue-dws, so GKE accepts them: the
emulator must too, and must fill what they omit (``autoscaling.locationPolicy``, GKE's taints) as GKE does.
"""

from __future__ import annotations

from typing import Any

from planb.gke.emulator import RunningEmulator
from tests.gke.gke_api import call, create

PROJECT, ZONE, CLUSTER = "planb-seed", "us-east5-b", "tpu-cluster"
LOCATION = f"projects/{PROJECT}/locations/{ZONE}"
CLUSTER_PATH = f"{LOCATION}/clusters/{CLUSTER}"

#: gcloud's ``gke-default`` scopes, sent in every pool's config (NodeIdentityOptionsToNodeConfig).
GKE_DEFAULT_SCOPES = [
    "https://www.googleapis.com/auth/devstorage.read_only",
    "https://www.googleapis.com/auth/logging.write",
    "https://www.googleapis.com/auth/monitoring",
    "https://www.googleapis.com/auth/service.management.readonly",
    "https://www.googleapis.com/auth/servicecontrol",
    "https://www.googleapis.com/auth/trace.append",
]

#: gcloud container clusters create tpu-cluster --cluster-version=1.34 --machine-type=n2-standard-16
#: --location=us-east5-b --enable-image-streaming --addons=RayOperator --project=planb-seed
#: (--addons enables the add-ons it names and disables the others; image streaming goes to nodePoolDefaults)
SEED_CLUSTER: dict[str, Any] = {
    "cluster": {
        "name": CLUSTER,
        "initialClusterVersion": "1.34",
        "addonsConfig": {
            "horizontalPodAutoscaling": {"disabled": True},
            "httpLoadBalancing": {"disabled": True},
            "kubernetesDashboard": {"disabled": True},
            "networkPolicyConfig": {"disabled": True},
            "rayOperatorConfig": {"enabled": True},
        },
        "nodePoolDefaults": {"nodeConfigDefaults": {"gcfsConfig": {"enabled": True}}},
        "nodePools": [
            {
                "name": "default-pool",
                "initialNodeCount": 3,
                "config": {"machineType": "n2-standard-16", "oauthScopes": GKE_DEFAULT_SCOPES},
                "management": {"autoRepair": True, "autoUpgrade": True},
                "upgradeSettings": {"maxSurge": 1},
            }
        ],
    },
    "parent": LOCATION,
}

#: gcloud container node-pools create on-demand-pool --cluster=tpu-cluster --location=us-east5-b
#: --machine-type=ct6e-standard-4t --tpu-topology=4x4 --reservation-affinity=none --enable-autoscaling
#: --num-nodes=0 --min-nodes=0 --max-nodes=4
SEED_ONDEMAND_POOL: dict[str, Any] = {
    "nodePool": {
        "name": "on-demand-pool",
        "initialNodeCount": 0,
        "autoscaling": {"enabled": True, "minNodeCount": 0, "maxNodeCount": 4},
        "config": {
            "machineType": "ct6e-standard-4t",
            "oauthScopes": GKE_DEFAULT_SCOPES,
            "reservationAffinity": {"consumeReservationType": "NO_RESERVATION"},
        },
        "management": {"autoRepair": True, "autoUpgrade": True},
        "placementPolicy": {"tpuTopology": "4x4"},
        "upgradeSettings": {"maxSurge": 1},
    },
    "parent": CLUSTER_PATH,
}

#: The same plus --enable-queued-provisioning --flex-start: gcloud still sends autoRepair true (its default
#: for COS images) and no locationPolicy.
SEED_DWS_POOL: dict[str, Any] = {
    "nodePool": {
        **SEED_ONDEMAND_POOL["nodePool"],
        "name": "dws-pool",
        "config": {**SEED_ONDEMAND_POOL["nodePool"]["config"], "flexStart": True},
        "queuedProvisioning": {"enabled": True},
    },
    "parent": CLUSTER_PATH,
}


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
