"""GKE's node pools in the local GKE API (container/v1 projects.locations.clusters.nodePools): create, get, list,
update, setAutoscaling, setManagement, setSize and delete, each mutation checked by GKE's rules
(``gke_emulator.rules``, ``gke_emulator.reservation_rules``) and returning a long-running operation
(``gke_emulator.operations``); a pool's managed instance groups are ``gke_emulator.instance_groups``. The clusters
they stand in: ``gke_emulator.engine``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from planb.local.gke_emulator import defaults, reservation_rules, resource_policies, rules
from planb.local.gke_emulator.errors import ApiError
from planb.local.gke_emulator.instance_groups import add_instance_group, groups_of, pool_zone
from planb.local.gke_emulator.operations import Operations
from planb.local.gke_emulator.project_setup import org_policies
from planb.local.gke_emulator.store import Store
from planb.local.gke_emulator.upgrades import resolve_version

Body = dict[str, Any]


def cluster_of(store: Store, name: str) -> Body:
    """The stored cluster `name`, or GKE's 404."""
    cluster = store.clusters.get(name)
    if cluster is None:
        raise ApiError(404, f"Not found: {name}.")
    return cluster


class NodePools:
    """The node pools of every cluster in the store, and the API's actions on them."""

    def __init__(self, state: Store, operations: Operations) -> None:
        self.state = state
        self.operations = operations

    def add(self, cluster: str, pool: Body, version: str, policy_topology: str = "") -> Body:
        """`pool` stored under `cluster`, PROVISIONING, with what GKE fills in: a create's candidate or a new
        cluster's pools."""
        name = f"{cluster}/nodePools/{pool['name']}"
        # GKE's defaults for what the body omits, and the taints and labels GKE adds itself (defaults.py).
        defaults.fill_node_pool(pool)
        defaults.add_gke_owned(pool, policy_topology)
        pool.update(
            status="PROVISIONING",
            version=version,
            selfLink=f"https://container.googleapis.com/v1/{name}",
            initialNodeCount=int(pool.get("initialNodeCount") or 0),
            podIpv4CidrSize=24,
        )
        self.state.node_pools[name] = pool
        return pool

    def _pool(self, name: str) -> Body:
        pool = self.state.node_pools.get(name)
        if pool is None:
            raise ApiError(404, f"Not found: {name}.")
        return pool

    def list_in(self, cluster: str) -> Body:
        cluster_of(self.state, cluster)
        return {
            "nodePools": [
                copy.deepcopy(p) for n, p in sorted(self.state.node_pools.items()) if n.startswith(cluster + "/")
            ]
        }

    def get(self, name: str) -> Body:
        return copy.deepcopy(self._pool(name))

    def create(self, project: str, location: str, cluster: str, request: Body) -> Body:
        parent = cluster_of(self.state, cluster)
        pool = copy.deepcopy(request.get("nodePool") or {})
        name = f"{cluster}/nodePools/{pool.get('name', '')}"
        if name in self.state.node_pools:
            raise ApiError(409, f"Already exists: {name}.")
        self.operations.busy(cluster)
        try:
            policy = resource_policies.policy_for_pool(self.state.resource_policies, project, location, pool)
        except resource_policies.ResourcePolicyError as exc:
            raise ApiError(exc.code, exc.message) from exc
        candidate = copy.deepcopy(pool)
        self.add(cluster, candidate, parent["currentMasterVersion"], resource_policies.accelerator_topology(policy))
        self.state.node_pools.pop(name)
        try:
            rules.check_node_pool(candidate, parent["currentMasterVersion"])
            rules.check_workload_metadata(candidate, parent)
            rules.check_shielded_vm(candidate, project, org_policies(self.state))
            reservation_rules.check_reservation_affinity(
                candidate, project, pool_zone(candidate, location), self.state.reservations
            )
        except rules.RuleViolation as exc:
            raise ApiError(400, str(exc)) from exc
        self.state.node_pools[name] = candidate
        add_instance_group(self.state, candidate)
        return self.operations.start(
            project, location, "CREATE_NODE_POOL", name, {"kind": "create_pool", "target": name}
        )

    def _mutate(self, project: str, location: str, name: str, op_type: str, change: Callable[[Body], None]) -> Body:
        pool = self._pool(name)
        cluster = name.rsplit("/nodePools/", 1)[0]
        self.operations.busy(cluster)
        candidate = copy.deepcopy(pool)
        change(candidate)
        try:
            rules.check_node_pool(candidate, cluster_of(self.state, cluster)["currentMasterVersion"])
            rules.check_workload_metadata(candidate, cluster_of(self.state, cluster))
        except rules.RuleViolation as exc:
            raise ApiError(400, str(exc)) from exc
        candidate["status"] = "RECONCILING"
        self.state.node_pools[name] = candidate
        return self.operations.start(project, location, op_type, name, {"kind": "update_pool", "target": name})

    def update(self, project: str, location: str, name: str, request: Body) -> Body:
        def change(pool: Body) -> None:
            # UpdateNodePoolRequest fields GKE applies (migrating or recreating the nodes) that the emulator does not.
            if unapplied := sorted(set(request) & {"machineType", "accelerators", "flexStart", "queuedProvisioning"}):
                fields = ", ".join(unapplied)
                raise ApiError(501, f"nodePools.update of {fields} is not implemented by the emulator", "UNIMPLEMENTED")
            config = pool.setdefault("config", {})
            if "labels" in request:
                config["labels"] = dict((request["labels"] or {}).get("labels") or {})
            if "resourceLabels" in request:  # UpdateNodePoolRequest.resourceLabels replaces the whole map
                config["resourceLabels"] = dict((request["resourceLabels"] or {}).get("labels") or {})
            if "taints" in request:
                config["taints"] = list((request["taints"] or {}).get("taints") or [])
            if "maxRunDuration" in request:
                config["maxRunDuration"] = request["maxRunDuration"]
            if "nodeVersion" in request:
                pool["version"] = resolve_version(request["nodeVersion"])
            if "workloadMetadataConfig" in request:
                config["workloadMetadataConfig"] = dict(request["workloadMetadataConfig"] or {})
            if "locations" in request:
                pool["locations"] = list(request["locations"] or [])
            if "maintenancePolicy" in request:  # UpdateNodePoolRequest.maintenancePolicy (NodePoolMaintenancePolicy)
                pool["maintenancePolicy"] = dict(request["maintenancePolicy"] or {})

        return self._mutate(project, location, name, "UPGRADE_NODES", change)

    def set_autoscaling(self, project: str, location: str, name: str, request: Body) -> Body:
        def change(pool: Body) -> None:
            autoscaling = dict(request.get("autoscaling") or {})
            if autoscaling.get("enabled"):
                autoscaling.setdefault("locationPolicy", "BALANCED")
            pool["autoscaling"] = autoscaling

        return self._mutate(project, location, name, "UPDATE_CLUSTER", change)

    def set_management(self, project: str, location: str, name: str, request: Body) -> Body:
        def change(pool: Body) -> None:
            pool["management"] = dict(request.get("management") or {})

        return self._mutate(project, location, name, "SET_NODE_POOL_MANAGEMENT", change)

    def set_size(self, project: str, location: str, name: str, request: Body) -> Body:
        size = request.get("nodeCount") or 0
        if not isinstance(size, int) or size < 0:
            raise ApiError(400, f"Invalid value for nodeCount: {size!r}.")
        op = self._mutate(project, location, name, "SET_NODE_POOL_SIZE", lambda pool: None)
        for group in groups_of(self.state, name):
            self.state.instance_groups[group]["targetSize"] = size
        self.state.save()
        return op

    def delete(self, project: str, location: str, name: str) -> Body:
        pool = self._pool(name)
        self.operations.busy(name.rsplit("/nodePools/", 1)[0])
        pool["status"] = "STOPPING"
        return self.operations.start(
            project, location, "DELETE_NODE_POOL", name, {"kind": "delete_pool", "target": name}
        )
