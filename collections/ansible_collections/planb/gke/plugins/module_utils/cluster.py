# planb.gke: the gke_cluster module's logic.
"""Converge a GKE cluster: create it, upgrade its version, update add-ons and image streaming in place."""

from __future__ import annotations

from typing import Any

from ansible_collections.planb.gke.plugins.module_utils.bodies import cluster_body
from ansible_collections.planb.gke.plugins.module_utils.client import GkeClient, api_path
from ansible_collections.planb.gke.plugins.module_utils.converge import (
    Body,
    Call,
    Params,
    Resource,
    converge,
    immutable_error,
    location_path,
)
from ansible_collections.planb.gke.plugins.module_utils.credentials import check_auth
from ansible_collections.planb.gke.plugins.module_utils.diff import dig
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError
from ansible_collections.planb.gke.plugins.module_utils.validate import validate_cluster
from ansible_collections.planb.gke.plugins.module_utils.versions import parse_version

#: Fields that cannot change in place: (API path prefix, option name).
CLUSTER_IMMUTABLE = [
    ("nodePools", "default_pool_machine_type / default_pool_node_count"),
    ("networkConfig.datapathProvider", "dataplane_v2"),
    ("ipAllocationPolicy", "dataplane_v2"),
    ("network", "network"),
    ("subnetwork", "subnetwork"),
]


def _cluster_updates(
    params: Params, path: str, desired: Body, current: Body, diffs: list[str], before: Body, after: Body
) -> list[Call]:
    """The cluster's in-place updates, one desired* field per PUT; fails on an immutable change or a downgrade."""
    default_pool = next((p for p in current.get("nodePools") or [] if p.get("name") == "default-pool"), None)
    if default_pool is not None and dig(default_pool, "config.machineType") != params["default_pool_machine_type"]:
        diffs.append("nodePools.default-pool.config.machineType")
    version_wanted = params["version"]
    version_have = current.get("currentMasterVersion", "")
    have_parsed, want_parsed = parse_version(version_have), parse_version(version_wanted)
    upgrade = False
    if have_parsed and want_parsed and have_parsed[: len(want_parsed)] != want_parsed:
        if have_parsed[: len(want_parsed)] > want_parsed:
            raise GkeError(
                f"version {version_wanted} is older than the cluster's {version_have}; GKE cannot downgrade "
                "(set version to the current one or newer)."
            )
        upgrade = True
        before["currentMasterVersion"], after["currentMasterVersion"] = version_have, version_wanted
    error = immutable_error("cluster", params["name"], diffs, CLUSTER_IMMUTABLE)
    if error:
        raise error
    updates: list[tuple[str, Any]] = []
    if any(d.startswith("addonsConfig") for d in diffs):
        updates.append(("desiredAddonsConfig", desired["addonsConfig"]))
    if any(d.startswith("nodePoolDefaults") for d in diffs):
        updates.append(("desiredGcfsConfig", desired["nodePoolDefaults"]["nodeConfigDefaults"]["gcfsConfig"]))
    if any(d.startswith("workloadIdentityConfig") for d in diffs):
        updates.append(("desiredWorkloadIdentityConfig", desired["workloadIdentityConfig"]))
    if any(d.startswith("resourceLabels") for d in diffs):
        raise GkeError("labels of a cluster are not managed in place by planb yet; set them at creation")
    if upgrade:
        updates.append(("desiredMasterVersion", version_wanted))
    return [(field, "PUT", path, {"update": {field: value}}) for field, value in updates]


def run_cluster(module: Any) -> Body:
    params = module.params
    validate_cluster(params)
    check_auth(params)
    if params.get("validate_only"):
        return {"changed": False, "actions": [], "operations": [], "cluster": {}}
    client = GkeClient(params)
    loc = location_path(params)
    resource = Resource(
        path=f"{loc}/{api_path('clusters', params['name'])}",
        what=f"cluster {params['name']}",
        create_url=f"{loc}/clusters",
        body_key="cluster",
        result_key="cluster",
        ignored=("nodePools", "initialClusterVersion"),
        plan_updates=_cluster_updates,
        pools=lambda cluster: list(cluster.get("nodePools") or []),
    )
    return converge(module, client, loc, resource, cluster_body(params))
