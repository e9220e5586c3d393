# planb.gke: the GKE v1 request bodies the modules send.
"""Cluster and NodePool bodies (GKE REST v1), each from its module's checked request."""

from __future__ import annotations

import json
from typing import Any

from ansible_collections.planb.gke.plugins.module_utils.args import TAINT_EFFECTS
from ansible_collections.planb.gke.plugins.module_utils.cluster_request import ClusterRequest
from ansible_collections.planb.gke.plugins.module_utils.node_pool_request import NodePoolRequest
from ansible_collections.planb.gke.plugins.module_utils.resource_labels import as_labels
from ansible_collections.planb.gke.plugins.module_utils.validate import duration_seconds

Body = dict[str, Any]

#: The reservation label key that targets a specific reservation by name (GKE v1 NodeConfig.ReservationAffinity).
RESERVATION_KEY = "compute.googleapis.com/reservation-name"
#: Shielded GKE nodes: secure boot is off unless a pool turns it on, integrity monitoring on by default; an organisation
#: that enforces constraints/compute.requireShieldedVm refuses VMs without secure boot.
DOC_SHIELDED = "https://cloud.google.com/kubernetes-engine/docs/how-to/shielded-gke-nodes"


def shielded_instance(secure_boot: bool) -> Body:
    """A pool's ``config.shieldedInstanceConfig`` (container v1 ShieldedInstanceConfig): secure boot as asked, integrity
    monitoring on (GKE's default, sent so the body says it, DOC_SHIELDED)."""
    return {"enableSecureBoot": bool(secure_boot), "enableIntegrityMonitoring": True}


def cluster_body(request: ClusterRequest) -> Body:
    """projects.locations.clusters: the tutorial's cluster (default pool, Ray operator, image streaming)."""
    default_pool: Body = {
        "machineType": request.default_pool_machine_type,
        "shieldedInstanceConfig": shielded_instance(request.secure_boot),
    }
    body: Body = {
        "name": request.name,
        "initialClusterVersion": request.version,
        "addonsConfig": {"rayOperatorConfig": {"enabled": bool(request.ray_operator)}},
        "nodePoolDefaults": {"nodeConfigDefaults": {"gcfsConfig": {"enabled": bool(request.image_streaming)}}},
        "nodePools": [
            {"name": "default-pool", "initialNodeCount": request.default_pool_node_count, "config": default_pool}
        ],
        # Cluster.shieldedNodes: every node's identity checked with its vTPM before it joins (DOC_SHIELDED).
        "shieldedNodes": {"enabled": bool(request.shielded_nodes)},
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
    ranges = request.cluster_secondary_range_name or request.services_secondary_range_name
    if dataplane_v2 or private_nodes or ranges:
        # VPC-native (alias IPs): private nodes need it too ("Private clusters must be VPC-native clusters",
        # https://cloud.google.com/kubernetes-engine/docs/how-to/legacy/network-isolation).
        body["ipAllocationPolicy"] = {"useIpAliases": True}
    if ranges:
        # A Shared VPC's subnet holds the pods' and services' ranges by name (IPAllocationPolicy's
        # clusterSecondaryRangeName and servicesSecondaryRangeName: "an existing secondary range associated with the
        # cluster subnetwork", with useIpAliases; https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-shared-vpc).
        body["ipAllocationPolicy"].update(
            clusterSecondaryRangeName=request.cluster_secondary_range_name,
            servicesSecondaryRangeName=request.services_secondary_range_name,
        )
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
    if request.default_pool_min_node_count is not None:
        # The CPU pool autoscaled between its bounds (NodePoolAutoscaling), so it bills for the Ray heads it runs.
        body["nodePools"][0]["autoscaling"] = default_pool_autoscaling(request)
    if request.labels:
        # Cluster.resourceLabels: GKE puts them on every Compute Engine resource of the cluster too (its VMs and
        # disks), so the billing export splits costs by them (https://cloud.google.com/kubernetes-engine/docs/how-to/creating-managing-labels).
        body["resourceLabels"] = as_labels(request.labels)
    if request.cost_allocation is not None:
        # GKE cost allocation: the billing export splits the cluster's costs by namespace and by Kubernetes label
        # (Cluster.costManagementConfig; https://cloud.google.com/kubernetes-engine/docs/how-to/cost-allocations).
        body["costManagementConfig"] = {"enabled": bool(request.cost_allocation)}
    if request.master_authorized_networks is not None:
        # Only these ranges reach the control plane's endpoint (Cluster.masterAuthorizedNetworksConfig;
        # https://cloud.google.com/kubernetes-engine/docs/how-to/authorized-networks); [] turns the restriction off.
        networks = list(request.master_authorized_networks)
        body["masterAuthorizedNetworksConfig"] = {"enabled": bool(networks)}
        if networks:
            body["masterAuthorizedNetworksConfig"]["cidrBlocks"] = [{"cidrBlock": block} for block in networks]
    if request.workload_identity is not None:
        # Workload Identity Federation for GKE: the only pool GKE accepts is PROJECT_ID.svc.id.goog
        # (https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity); "" turns it off.
        pool = f"{request.project}.svc.id.goog" if request.workload_identity else ""
        body["workloadIdentityConfig"] = {"workloadPool": pool}
        if request.workload_identity:
            # default-pool runs the Ray heads: their pods reach Google APIs through the GKE metadata server too.
            default_pool["workloadMetadataConfig"] = {"mode": "GKE_METADATA"}
    return body


def default_pool_autoscaling(request: ClusterRequest) -> Body:
    """default-pool's NodePoolAutoscaling from gke_cluster's bounds."""
    return {
        "enabled": True,
        "minNodeCount": request.default_pool_min_node_count,
        "maxNodeCount": request.default_pool_max_node_count,
    }


def _taints(taints: list[dict[str, Any]]) -> list[dict[str, str]]:
    return sorted(
        ({"key": t["key"], "value": str(t.get("value") or ""), "effect": TAINT_EFFECTS[t["effect"]]} for t in taints),
        key=lambda item: json.dumps(item, sort_keys=True),
    )


def _accelerator(kind: str, count: int | None, driver: str | None) -> Body:
    """One ``config.accelerators`` entry, with GKE's driver installation setting (accelerators.py says why it is always
    sent)."""
    return {
        "acceleratorType": kind,
        # int64 in GKE's JSON is a string (proto3 JSON); GKE answers it so.
        "acceleratorCount": str(count),
        "gpuDriverInstallationConfig": {"gpuDriverVersion": driver or "DEFAULT"},
    }


_AUTOSCALING_FIELDS = (
    ("min_node_count", "minNodeCount"),
    ("max_node_count", "maxNodeCount"),
    ("total_min_node_count", "totalMinNodeCount"),
    ("total_max_node_count", "totalMaxNodeCount"),
    ("location_policy", "locationPolicy"),
)


def node_pool_body(request: NodePoolRequest) -> Body:
    """projects.locations.clusters.nodePools: machine, TPU placement, autoscaling, DWS settings."""
    config: Body = {
        "machineType": request.machine_type,
        "shieldedInstanceConfig": shielded_instance(request.secure_boot),
    }
    if request.reservation_affinity:
        config["reservationAffinity"] = {"consumeReservationType": request.reservation_affinity}
        if request.reservation_affinity == "SPECIFIC_RESERVATION":
            # GKE v1 NodeConfig.reservationAffinity: a reservation by name is the key
            # compute.googleapis.com/reservation-name and the name (or projects/P/reservations/N, shared) as value
            # (https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations).
            config["reservationAffinity"].update(key=RESERVATION_KEY, values=[request.reservation])
    if request.spot is not None:
        config["spot"] = bool(request.spot)
    if request.flex_start is not None:
        config["flexStart"] = bool(request.flex_start)
    if request.labels is not None:
        config["labels"] = {str(k): str(v) for k, v in request.labels.items()}
    if request.resource_labels is not None:
        # NodeConfig.resourceLabels: on the pool's Compute Engine VMs, so the billing export splits costs by them.
        config["resourceLabels"] = as_labels(request.resource_labels)
    if request.taints is not None:
        config["taints"] = _taints(request.taints)
    if request.max_run_duration is not None:
        config["maxRunDuration"] = f"{duration_seconds(request.max_run_duration)}s"
    if request.workload_metadata_mode:
        config["workloadMetadataConfig"] = {"mode": request.workload_metadata_mode}
    if request.node_service_account:
        # The pool's nodes run as this service account (NodeConfig.serviceAccount; unset: Compute Engine's default).
        config["serviceAccount"] = request.node_service_account
    if request.accelerator_type:
        config["accelerators"] = [
            _accelerator(request.accelerator_type, request.accelerator_count, request.gpu_driver_version)
        ]
    body: Body = {
        "name": request.name,
        "initialNodeCount": request.initial_node_count or 0,
        "config": config,
        "management": {"autoRepair": bool(request.auto_repair), "autoUpgrade": bool(request.auto_upgrade)},
        "queuedProvisioning": {"enabled": bool(request.queued_provisioning)},
    }
    auto = request.autoscaling or {}
    if auto:
        scaling: Body = {"enabled": bool(auto.get("enabled", True))}
        for option, field in _AUTOSCALING_FIELDS:
            if auto.get(option) is not None:
                scaling[field] = auto[option]
        body["autoscaling"] = scaling
    if request.tpu_topology:
        body["placementPolicy"] = {"tpuTopology": request.tpu_topology}
    if request.placement_policy:
        # A workload policy (TPU7x multi-host slices: instead of tpuTopology, validate.py checks).
        body.setdefault("placementPolicy", {})["policyName"] = request.placement_policy
    if request.node_locations:
        body["locations"] = list(request.node_locations)
    if request.maintenance_exclusion is not None:
        # container v1 NodePoolMaintenancePolicy: GKE does not upgrade the pool's nodes until the end of support of
        # the control plane's version (https://cloud.google.com/kubernetes-engine/docs/concepts/maintenance-windows-and-exclusions).
        body["maintenancePolicy"] = {"exclusionUntilEndOfSupport": {"enabled": bool(request.maintenance_exclusion)}}
    return body
