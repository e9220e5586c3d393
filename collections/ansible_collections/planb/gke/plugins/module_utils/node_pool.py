# planb.gke: the gke_node_pool module's logic.
"""Converge a GKE node pool: autoscaling and management via their own calls, labels/taints/run duration by PUT."""

from __future__ import annotations

from functools import partial
from typing import Any

from ansible_collections.planb.gke.plugins.module_utils._generated.versions import TPU_FLEX_START_MIN, version_at_least
from ansible_collections.planb.gke.plugins.module_utils.accelerators import same_accelerators
from ansible_collections.planb.gke.plugins.module_utils.bodies import node_pool_body
from ansible_collections.planb.gke.plugins.module_utils.client import GkeClient, api_path
from ansible_collections.planb.gke.plugins.module_utils.converge import (
    Body,
    Call,
    Resource,
    converge,
    immutable_error,
    plan_updates,
)
from ansible_collections.planb.gke.plugins.module_utils.diff import dig, merged_labels, merged_taints
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError
from ansible_collections.planb.gke.plugins.module_utils.node_pool_request import NodePoolRequest
from ansible_collections.planb.gke.plugins.module_utils.pool_versions import tpu_version_problem
from ansible_collections.planb.gke.plugins.module_utils.reservation import check_reservation
from ansible_collections.planb.gke.plugins.module_utils.validate import tpu_machine
from ansible_collections.planb.gke.plugins.module_utils.validate_pool import validate_node_pool

#: Fields GKE cannot change in place (container v1 UpdateNodePoolRequest has no field for them):
#: (API path prefix, option name).
NODE_POOL_IMMUTABLE = [
    ("placementPolicy.policyName", "placement_policy"),
    ("placementPolicy", "tpu_topology"),
    ("config.reservationAffinity", "reservation_affinity"),
    ("config.spot", "spot"),
    ("config.serviceAccount", "node_service_account"),
    # Shielded GKE nodes' secure boot (https://cloud.google.com/kubernetes-engine/docs/how-to/shielded-gke-nodes).
    ("config.shieldedInstanceConfig", "secure_boot"),
]
#: Fields GKE can update in place (container v1 UpdateNodePoolRequest: machineType, accelerators, flexStart,
#: queuedProvisioning) that planb does not: (API path prefix, option name, why).
NODE_POOL_PLANB_FIXED = [
    (
        "config.machineType",
        "machine_type",
        "a planb pool's machine type comes from its profile with the slice topology, hosts per slice and the "
        "queues' quotas; GKE would migrate the nodes to the new type and leave all of those stale",
    ),
    (
        "config.accelerators",
        "accelerator_type / accelerator_count / gpu_driver_version",
        "a planb pool's accelerators come from its profile with its machine type and the queues' quotas; GKE "
        "would recreate the nodes with them and leave the quotas stale",
    ),
    (
        "queuedProvisioning",
        "queued_provisioning",
        "it decides whether the pool's nodes come only through ProvisioningRequests (a dws plan) or through "
        "the autoscaler for pending pods (the other plans); the plan's Kueue flavor and admission check name "
        "one of these, so switching in place moves the pool to another plan under the same flavor",
    ),
    (
        "config.flexStart",
        "flex_start",
        "it decides the pool's provisioning model (a dws plan's flex-start VMs, or on-demand/reserved VMs), "
        "which the plan's Kueue flavor stands for; switching in place moves the pool to another plan under "
        "the same flavor",
    ),
]


def _policy_error(name: str, diffs: list[str]) -> GkeError | None:
    """planb's refusal of an in-place change GKE would make (NODE_POOL_PLANB_FIXED)."""
    for path in diffs:
        for prefix, option, why in NODE_POOL_PLANB_FIXED:
            if path.startswith(prefix):
                return GkeError(
                    f"planb's policy: {option} of node pool {name} is not changed in place ({path} differs on "
                    f"GKE), because {why}. Fix: delete the node pool and re-run to recreate it (state=absent "
                    "first, or `playbooks/teardown.yml` for the whole cluster), or keep the current value."
                )
    return None


def node_pool_updates(
    request: NodePoolRequest, path: str, desired: Body, current: Body, diffs: list[str], before: Body, after: Body
) -> list[Call]:
    """The node pool's in-place updates (setAutoscaling, setManagement, then one PUT); fails on an immutable change."""
    if "config.accelerators" in diffs and same_accelerators(
        desired["config"]["accelerators"], dig(current, "config.accelerators")
    ):
        diffs.remove("config.accelerators")
    error = immutable_error("node pool", request.name, diffs, NODE_POOL_IMMUTABLE) or _policy_error(request.name, diffs)
    if error:
        raise error
    calls: list[Call] = []
    if any(d.startswith("autoscaling") for d in diffs):
        calls.append(("setAutoscaling", "POST", f"{path}:setAutoscaling", {"autoscaling": desired["autoscaling"]}))
    if any(d.startswith("management") for d in diffs):
        calls.append(("setManagement", "POST", f"{path}:setManagement", {"management": desired["management"]}))
    update: Body = {}
    # GKE replaces the whole label map / taint list: send the pool's others (GKE's own) with the managed ones.
    if "config.labels" in diffs:
        update["labels"] = {"labels": merged_labels(desired["config"]["labels"], dig(current, "config.labels"))}
    if "config.resourceLabels" in diffs:  # UpdateNodePoolRequest.resourceLabels (ResourceLabels), GKE's goog-* kept
        current_labels = dig(current, "config.resourceLabels")
        update["resourceLabels"] = {"labels": merged_labels(desired["config"]["resourceLabels"], current_labels)}
    if "config.taints" in diffs:
        update["taints"] = {"taints": merged_taints(desired["config"]["taints"], dig(current, "config.taints"))}
    if "config.maxRunDuration" in diffs:
        update["maxRunDuration"] = desired["config"]["maxRunDuration"]
    if any(d.startswith("config.workloadMetadataConfig") for d in diffs):
        update["workloadMetadataConfig"] = desired["config"]["workloadMetadataConfig"]
    if "locations" in diffs:
        update["locations"] = desired["locations"]
    if any(d.startswith("maintenancePolicy") for d in diffs):
        update["maintenancePolicy"] = desired["maintenancePolicy"]  # UpdateNodePoolRequest.maintenancePolicy
    if update:
        calls.append(("update", "PUT", path, dict(update, name=path)))
    return calls


def run_node_pool(module: Any) -> Body:
    """gke_node_pool: its options read once into a NodePoolRequest and checked, then converged (unless validate_only),
    the pool's reservation and cluster checked on GKE first (``check_on_gke``)."""
    request = NodePoolRequest.of(module.params, bool(module.check_mode))
    validate_node_pool(request)
    if request.validate_only:
        return {"changed": False, "actions": [], "operations": [], "node_pool": {}}
    desired = node_pool_body(request) if request.state == "present" else {}
    loc = api_path("projects", request.project or "", "locations", request.location)
    cluster_path = f"{loc}/{api_path('clusters', request.cluster)}"
    pool_path = f"{cluster_path}/{api_path('nodePools', request.name)}"
    resource = Resource(
        path=pool_path,
        what=f"node pool {request.name} of cluster {request.cluster}",
        location=loc,
        create_url=f"{cluster_path}/nodePools",
        body_key="nodePool",
        result_key="node_pool",
        # The initial size is not compared after creation: the autoscaler moves it.
        plan=partial(plan_updates, partial(node_pool_updates, request), ("initialNodeCount",), pool_path, desired),
        pools=lambda pool: [pool],
        check=partial(check_on_gke, request, cluster_path),
    )
    return converge(request, GkeClient(request.access), resource, desired)


def check_on_gke(request: NodePoolRequest, cluster_path: str, client: GkeClient, pool: Body | None) -> None:
    """What a pool wanted present needs on GKE (``pool``: as GKE returns it, None when missing): before it is created,
    its reservation (SPECIFIC_RESERVATION); its cluster, which exists (in check mode a missing one leaves the create
    described), runs a version the pool's TPUs take, and has Workload Identity for GKE_METADATA. Raises GkeError
    before anything is sent."""
    if pool is None and request.reservation_affinity == "SPECIFIC_RESERVATION":
        # Also in check mode: the reservation exists in the pool's zone, matches the pool (its machine type; or,
        # aggregate, its TPU family, chips and slice), is shared with the project, is specificReservationRequired
        # (planb's policy).
        check_reservation(request)
    cluster = client.get(cluster_path)
    if cluster is None:
        if request.check_mode:
            return
        raise GkeError(f"Cluster {request.cluster} does not exist in {request.location}; create it first.")
    version = cluster.get("currentMasterVersion", "")
    if (
        request.flex_start
        and tpu_machine(request.machine_type or "")
        and not version_at_least(version, TPU_FLEX_START_MIN)
    ):
        raise GkeError(f"TPU flex_start needs GKE 1.33.0-gke.1712000 or later; cluster runs {version}.")
    # GKE's oldest version for the generation's node pools (TPU7x: 1.34.0-gke.2201000), against the cluster.
    late = tpu_version_problem(request.machine_type, version)
    if late:
        raise GkeError(late + ". Nothing was sent.")
    if (
        request.workload_metadata_mode == "GKE_METADATA"
        and not dig(cluster, "workloadIdentityConfig.workloadPool")
        and not request.check_mode
    ):
        # GKE: GKE_METADATA "can only be enabled if Workload Identity is enabled at the cluster level"
        # (https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodeConfig, WorkloadMetadataConfig.Mode).
        raise GkeError(
            f"workload_metadata_mode GKE_METADATA needs Workload Identity Federation on cluster {request.cluster}, "
            "which has no workload pool: enable it first (planb.gke.gke_cluster workload_identity: true; the "
            "gke_cluster role does by default), or leave workload_metadata_mode unset. Nothing was sent."
        )
