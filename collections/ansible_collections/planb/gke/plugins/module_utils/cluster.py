# planb.gke: the gke_cluster module's logic.
"""Converge a GKE cluster: create it, upgrade it to the version floor, update add-ons, image streaming, Workload
Identity and the release channel in place; refuse a change of what GKE (or planb's policy) sets at creation only."""

from __future__ import annotations

from functools import partial
from typing import Any

from ansible_collections.planb.gke.plugins.module_utils._generated.versions import parse_version
from ansible_collections.planb.gke.plugins.module_utils.bodies import cluster_body, default_pool_autoscaling
from ansible_collections.planb.gke.plugins.module_utils.client import GkeClient, api_path
from ansible_collections.planb.gke.plugins.module_utils.cluster_options import DOC_ISOLATION
from ansible_collections.planb.gke.plugins.module_utils.cluster_request import ClusterRequest
from ansible_collections.planb.gke.plugins.module_utils.converge import (
    Body,
    Call,
    Resource,
    converge,
    immutable_error,
    plan_updates,
)
from ansible_collections.planb.gke.plugins.module_utils.diff import dig, merged_labels
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError
from ansible_collections.planb.gke.plugins.module_utils.validate import validate_cluster

#: Fields that cannot change in place: (API path prefix, option name). A node pool's service account is not in
#: container v1 UpdateNodePoolRequest; of PrivateClusterConfig, ClusterUpdate.desiredPrivateClusterConfig changes
#: "master_global_access_config" only.
CLUSTER_IMMUTABLE = [
    ("nodePools.default-pool.config.serviceAccount", "node_service_account"),
    # UpdateNodePoolRequest has no shieldedInstanceConfig either: default-pool's secure boot is set at creation.
    ("nodePools.default-pool.config.shieldedInstanceConfig", "secure_boot"),
    ("nodePools", "default_pool_machine_type / default_pool_node_count"),
    ("networkConfig.datapathProvider", "dataplane_v2"),
    # ClusterUpdate has no field for the pods' and services' secondary ranges (only additional pod ranges).
    ("ipAllocationPolicy.clusterSecondaryRangeName", "cluster_secondary_range_name"),
    ("ipAllocationPolicy.servicesSecondaryRangeName", "services_secondary_range_name"),
    ("ipAllocationPolicy", "dataplane_v2 / private_nodes"),
    ("privateClusterConfig.masterIpv4CidrBlock", "master_ipv4_cidr"),
    ("network", "network"),
    ("subnetwork", "subnetwork"),
]
#: Desired fields that are not compared after creation: the pools are gke_node_pool's, the version a floor.
IGNORED = ("nodePools", "initialClusterVersion")
#: GKE changes networkConfig.defaultEnablePrivateNodes in place (ClusterUpdate.desiredDefaultEnablePrivateNodes),
#: but only for "future created nodes", as the container v1 discovery document says: default-pool and the plans'
#: pools would keep the addresses they have.
PRIVATE_NODES_FIXED = (
    "planb's policy: private_nodes of cluster {name} is not changed in place ({path} differs on GKE), because GKE's "
    "desiredDefaultEnablePrivateNodes applies to nodes created afterwards only, and the nodes of default-pool and "
    "of every plan's pools would keep the addresses they have ({doc}). Fix: delete the cluster and re-run to "
    "recreate it (`playbooks/teardown.yml`), or keep the current value."
)


def cluster_updates(
    request: ClusterRequest, path: str, desired: Body, current: Body, diffs: list[str], before: Body, after: Body
) -> list[Call]:
    """The cluster's in-place updates, one desired* field per PUT; fails on an immutable change."""
    default_pool = next((p for p in current.get("nodePools") or [] if p.get("name") == "default-pool"), None)
    if default_pool is not None and dig(default_pool, "config.machineType") != request.default_pool_machine_type:
        diffs.append("nodePools.default-pool.config.machineType")
    secure_boot = dig(default_pool or {}, "config.shieldedInstanceConfig.enableSecureBoot", False)
    if default_pool is not None and bool(secure_boot) != bool(request.secure_boot):
        diffs.append("nodePools.default-pool.config.shieldedInstanceConfig.enableSecureBoot")
    account = request.node_service_account
    if default_pool is not None and account and dig(default_pool, "config.serviceAccount") != account:
        diffs.append("nodePools.default-pool.config.serviceAccount")
    private = next((d for d in diffs if d.startswith("networkConfig.defaultEnablePrivateNodes")), None)
    if private:
        raise GkeError(PRIVATE_NODES_FIXED.format(name=request.name, path=private, doc=DOC_ISOLATION))
    # The version is a floor, not a pin: GKE upgrades a cluster on a release channel by itself, control plane and
    # nodes (https://cloud.google.com/kubernetes-engine/docs/concepts/release-channels,
    # https://cloud.google.com/kubernetes-engine/docs/concepts/cluster-upgrades), so a cluster at or above it is left
    # as it is; only one below it is upgraded (clusters.update, desiredMasterVersion).
    version_wanted = request.version
    version_have = current.get("currentMasterVersion", "")
    have_parsed, want_parsed = parse_version(version_have), parse_version(version_wanted)
    upgrade = bool(have_parsed and want_parsed and have_parsed[: len(want_parsed)] < want_parsed)
    if upgrade:
        before["currentMasterVersion"], after["currentMasterVersion"] = version_have, version_wanted
    error = immutable_error("cluster", request.name, diffs, CLUSTER_IMMUTABLE)
    if error:
        raise error
    updates: list[tuple[str, Any]] = []
    if any(d.startswith("addonsConfig") for d in diffs):
        updates.append(("desiredAddonsConfig", desired["addonsConfig"]))
    if any(d.startswith("nodePoolDefaults") for d in diffs):
        updates.append(("desiredGcfsConfig", desired["nodePoolDefaults"]["nodeConfigDefaults"]["gcfsConfig"]))
    if any(d.startswith("shieldedNodes") for d in diffs):
        # ClusterUpdate.desiredShieldedNodes (https://cloud.google.com/kubernetes-engine/docs/how-to/shielded-gke-nodes).
        updates.append(("desiredShieldedNodes", desired["shieldedNodes"]))
    if any(d.startswith("workloadIdentityConfig") for d in diffs):
        updates.append(("desiredWorkloadIdentityConfig", desired["workloadIdentityConfig"]))
    if any(d.startswith("costManagementConfig") for d in diffs):
        # ClusterUpdate.desiredCostManagementConfig (https://cloud.google.com/kubernetes-engine/docs/how-to/cost-allocations).
        updates.append(("desiredCostManagementConfig", desired["costManagementConfig"]))
    if any(d.startswith("masterAuthorizedNetworksConfig") for d in diffs):
        # ClusterUpdate.desiredMasterAuthorizedNetworksConfig (cluster_options.DOC_AUTHORIZED_NETWORKS).
        updates.append(("desiredMasterAuthorizedNetworksConfig", desired["masterAuthorizedNetworksConfig"]))
    if any(d.startswith("releaseChannel") for d in diffs):
        # clusters.update with ClusterUpdate.desiredReleaseChannel; whether the cluster's version may move to that
        # channel is GKE's check (https://cloud.google.com/kubernetes-engine/docs/concepts/release-channels).
        updates.append(("desiredReleaseChannel", desired["releaseChannel"]))
    if upgrade:
        updates.append(("desiredMasterVersion", version_wanted))
    calls: list[Call] = [(field, "PUT", path, {"update": {field: value}}) for field, value in updates]
    if "resourceLabels" in diffs:
        # clusters.setResourceLabels (SetLabelsRequest): the whole map, the keys planb does not manage kept, with the
        # fingerprint of the labels read, which GKE compares to detect a concurrent change.
        labels = merged_labels(desired["resourceLabels"], current.get("resourceLabels"))
        fingerprint = current.get("labelFingerprint", "")
        body = {"resourceLabels": labels, "labelFingerprint": fingerprint}
        calls.append(("setResourceLabels", "POST", f"{path}:setResourceLabels", body))
    autoscaling = dig(default_pool or {}, "autoscaling") or {}
    if default_pool is not None and request.default_pool_min_node_count is not None:
        wanted = default_pool_autoscaling(request)
        counts = ("minNodeCount", "maxNodeCount")
        if not autoscaling.get("enabled") or any(str(autoscaling.get(k, "")) != str(wanted[k]) for k in counts):
            before["defaultPoolAutoscaling"], after["defaultPoolAutoscaling"] = autoscaling, wanted
            # nodePools.setAutoscaling on default-pool (SetNodePoolAutoscalingRequest).
            url = f"{path}/nodePools/default-pool:setAutoscaling"
            calls.append(("setAutoscaling default-pool", "POST", url, {"autoscaling": wanted}))
    return calls


def run_cluster(module: Any) -> Body:
    """gke_cluster: its options read once into a ClusterRequest and checked, then converged (unless validate_only)."""
    request = ClusterRequest.of(module.params, bool(module.check_mode))
    validate_cluster(request)
    if request.validate_only:
        return {"changed": False, "actions": [], "operations": [], "cluster": {}}
    desired = cluster_body(request)
    loc = api_path("projects", request.project, "locations", request.location)
    path = f"{loc}/{api_path('clusters', request.name)}"
    resource = Resource(
        path=path,
        what=f"cluster {request.name}",
        location=loc,
        create_url=f"{loc}/clusters",
        body_key="cluster",
        result_key="cluster",
        plan=partial(plan_updates, partial(cluster_updates, request), IGNORED, path, desired),
        pools=lambda cluster: list(cluster.get("nodePools") or []),
    )
    return converge(request, GkeClient(request.access), resource, desired)
