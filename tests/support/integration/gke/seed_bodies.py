"""The REST bodies the real gcloud sends for the seed's commands (the tests that send them import them from here).

Captured from Google Cloud SDK 528.0.0 against a loopback server with ``CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER``;
flag -> field mapping in gcloud's ``lib/googlecloudsdk/api_lib/container/api_adapter.py``, ``CreateNodePoolCommon``.
"""

from __future__ import annotations

from typing import Any

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
