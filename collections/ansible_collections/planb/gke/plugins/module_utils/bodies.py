# planb.gke: the GKE v1 request bodies the modules send.
"""Cluster and NodePool bodies (GKE REST v1): a cluster's from its checked request, a node pool's from the validated
module parameters."""

from __future__ import annotations

import json
from typing import Any

from ansible_collections.planb.gke.plugins.module_utils.accelerators import accelerators_body
from ansible_collections.planb.gke.plugins.module_utils.args import TAINT_EFFECTS
from ansible_collections.planb.gke.plugins.module_utils.cluster_request import ClusterRequest
from ansible_collections.planb.gke.plugins.module_utils.validate import duration_seconds

Body = dict[str, Any]
Params = dict[str, Any]

#: The reservation label key that targets a specific reservation by name (GKE v1 NodeConfig.ReservationAffinity).
RESERVATION_KEY = "compute.googleapis.com/reservation-name"


def cluster_body(request: ClusterRequest) -> Body:
    """projects.locations.clusters: the tutorial's cluster (default pool, Ray operator, image streaming)."""
    default_pool: Body = {"machineType": request.default_pool_machine_type}
    body: Body = {
        "name": request.name,
        "initialClusterVersion": request.version,
        "addonsConfig": {"rayOperatorConfig": {"enabled": bool(request.ray_operator)}},
        "nodePoolDefaults": {"nodeConfigDefaults": {"gcfsConfig": {"enabled": bool(request.image_streaming)}}},
        "nodePools": [
            {"name": "default-pool", "initialNodeCount": request.default_pool_node_count, "config": default_pool}
        ],
    }
    # Dataplane V2 enforces NetworkPolicy and needs a VPC-native cluster
    # (https://cloud.google.com/kubernetes-engine/docs/concepts/dataplane-v2).
    dataplane_v2 = request.dataplane_v2
    private_nodes = bool(request.private_nodes)
    body["networkConfig"] = {
        "datapathProvider": "ADVANCED_DATAPATH" if dataplane_v2 else "LEGACY_DATAPATH",
        # Private nodes: NetworkConfig.defaultEnablePrivateNodes, which the container v1 discovery document names
        # in place of the deprecated PrivateClusterConfig.enablePrivateNodes (never both, it says).
        "defaultEnablePrivateNodes": private_nodes,
    }
    if dataplane_v2 or private_nodes:
        # VPC-native (alias IPs): private nodes need it too ("Private clusters must be VPC-native clusters",
        # https://cloud.google.com/kubernetes-engine/docs/how-to/legacy/network-isolation).
        body["ipAllocationPolicy"] = {"useIpAliases": True}
    if request.master_ipv4_cidr:
        # The control plane's /28 (PrivateClusterConfig.masterIpv4CidrBlock, not deprecated).
        body["privateClusterConfig"] = {"masterIpv4CidrBlock": request.master_ipv4_cidr}
    if request.network:
        body["network"] = request.network
    if request.subnetwork:
        body["subnetwork"] = request.subnetwork
    if request.release_channel:
        # Unset, GKE enrolls the cluster in a channel of its choice (container v1 Cluster.releaseChannel).
        body["releaseChannel"] = {"channel": request.release_channel}
    if request.node_service_account:
        # default-pool's nodes run as this service account (NodeConfig.serviceAccount; unset: Compute Engine's default).
        default_pool["serviceAccount"] = request.node_service_account
    if request.labels:
        body["resourceLabels"] = dict(request.labels)
    if request.workload_identity is not None:
        # Workload Identity Federation for GKE: the only pool GKE accepts is PROJECT_ID.svc.id.goog
        # (https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity); "" turns it off.
        pool = f"{request.project}.svc.id.goog" if request.workload_identity else ""
        body["workloadIdentityConfig"] = {"workloadPool": pool}
        if request.workload_identity:
            # default-pool runs the Ray heads: their pods reach Google APIs through the GKE metadata server too.
            default_pool["workloadMetadataConfig"] = {"mode": "GKE_METADATA"}
    return body


def _taints(taints: list[dict[str, Any]]) -> list[dict[str, str]]:
    return sorted(
        ({"key": t["key"], "value": str(t.get("value") or ""), "effect": TAINT_EFFECTS[t["effect"]]} for t in taints),
        key=lambda item: json.dumps(item, sort_keys=True),
    )


_AUTOSCALING_FIELDS = (
    ("min_node_count", "minNodeCount"),
    ("max_node_count", "maxNodeCount"),
    ("total_min_node_count", "totalMinNodeCount"),
    ("total_max_node_count", "totalMaxNodeCount"),
    ("location_policy", "locationPolicy"),
)


def node_pool_body(params: Params) -> Body:
    """projects.locations.clusters.nodePools: machine, TPU placement, autoscaling, DWS settings."""
    config: Body = {"machineType": params["machine_type"]}
    if params.get("reservation_affinity"):
        config["reservationAffinity"] = {"consumeReservationType": params["reservation_affinity"]}
        if params["reservation_affinity"] == "SPECIFIC_RESERVATION":
            # GKE v1 NodeConfig.reservationAffinity: a reservation by name is the key
            # compute.googleapis.com/reservation-name and the name (or projects/P/reservations/N, shared) as value
            # (https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations).
            config["reservationAffinity"].update(key=RESERVATION_KEY, values=[params["reservation"]])
    if params.get("spot") is not None:
        config["spot"] = bool(params["spot"])
    if params.get("flex_start") is not None:
        config["flexStart"] = bool(params["flex_start"])
    if params.get("labels") is not None:
        config["labels"] = {str(k): str(v) for k, v in params["labels"].items()}
    if params.get("taints") is not None:
        config["taints"] = _taints(params["taints"])
    if params.get("max_run_duration") is not None:
        config["maxRunDuration"] = f"{duration_seconds(params['max_run_duration'])}s"
    if params.get("workload_metadata_mode"):
        config["workloadMetadataConfig"] = {"mode": params["workload_metadata_mode"]}
    if params.get("node_service_account"):
        # The pool's nodes run as this service account (NodeConfig.serviceAccount; unset: Compute Engine's default).
        config["serviceAccount"] = params["node_service_account"]
    accelerators = accelerators_body(params)
    if accelerators is not None:
        config["accelerators"] = accelerators
    body: Body = {
        "name": params["name"],
        "initialNodeCount": params.get("initial_node_count") or 0,
        "config": config,
        "management": {"autoRepair": bool(params["auto_repair"]), "autoUpgrade": bool(params["auto_upgrade"])},
        "queuedProvisioning": {"enabled": bool(params.get("queued_provisioning"))},
    }
    auto = params.get("autoscaling") or {}
    if auto:
        scaling: Body = {"enabled": bool(auto.get("enabled", True))}
        for option, field in _AUTOSCALING_FIELDS:
            if auto.get(option) is not None:
                scaling[field] = auto[option]
        body["autoscaling"] = scaling
    if params.get("tpu_topology"):
        body["placementPolicy"] = {"tpuTopology": params["tpu_topology"]}
    if params.get("placement_policy"):
        # A workload policy (TPU7x multi-host slices: instead of tpuTopology, validate.py checks).
        body.setdefault("placementPolicy", {})["policyName"] = params["placement_policy"]
    if params.get("node_locations"):
        body["locations"] = list(params["node_locations"])
    if params.get("maintenance_exclusion") is not None:
        # container v1 NodePoolMaintenancePolicy: GKE does not upgrade the pool's nodes until the end of support of
        # the control plane's version (https://cloud.google.com/kubernetes-engine/docs/concepts/maintenance-windows-and-exclusions).
        body["maintenancePolicy"] = {"exclusionUntilEndOfSupport": {"enabled": bool(params["maintenance_exclusion"])}}
    return body
