# planb.gke: the gke_cluster_info and gke_node_pool_info modules' logic.
"""Read-only look-ups: the clusters or node pools as GKE has them."""

from __future__ import annotations

from typing import Any

from ansible_collections.planb.gke.plugins.module_utils.client import GkeClient, api_path
from ansible_collections.planb.gke.plugins.module_utils.converge import Body, location_path
from ansible_collections.planb.gke.plugins.module_utils.credentials import check_auth


def run_info(module: Any, kind: str) -> Body:
    """``kind`` cluster or node_pool: the named resource (with ``exists``) or every one in the location."""
    params = module.params
    check_auth(params)
    client = GkeClient(params)
    loc = location_path(params)
    if kind == "cluster":
        if params.get("name"):
            found = client.get(f"{loc}/{api_path('clusters', params['name'])}")
            return {"changed": False, "exists": found is not None, "clusters": [found] if found else []}
        return {"changed": False, "clusters": client.request("GET", f"{loc}/clusters").get("clusters", [])}
    cluster_path = f"{loc}/{api_path('clusters', params['cluster'])}"
    if params.get("name"):
        found = client.get(f"{cluster_path}/{api_path('nodePools', params['name'])}")
        return {"changed": False, "exists": found is not None, "node_pools": [found] if found else []}
    listed = client.get(f"{cluster_path}/nodePools") or {}
    return {"changed": False, "node_pools": listed.get("nodePools", [])}
