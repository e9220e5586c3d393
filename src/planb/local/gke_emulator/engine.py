"""The local GKE API's behaviour, independent of HTTP: clusters, node pools and what they stand on.

``Engine`` holds the container/v1 resources (clusters, node pools and their actions), GKE's validation
(``gke_emulator.rules``) and defaults (``gke_emulator.defaults``), cluster versions and GKE's own upgrade
(``gke_emulator.upgrades``), the managed instance groups behind pools (``gke_emulator.instance_groups``), Compute
Engine reservations (``gke_emulator.reservations``), the project-level APIs (``gke_emulator.project``), Cloud
Storage buckets (``gke_emulator.buckets``), the endpoint and CA a cluster reads (``gke_emulator.access``), and the
emulator-only switches: injected operation and HTTP faults and the kubeconfig a cluster hands out. Mutations
return long-running operations (``gke_emulator.operations``); ``gke_emulator.routes`` maps REST paths onto these
methods.
"""

from __future__ import annotations

import copy
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from planb.local.gke_emulator import (
    cluster_rules,
    cluster_updates,
    defaults,
    reservation_rules,
    reservations,
    resource_policies,
    rules,
    upgrades,
)
from planb.local.gke_emulator.access import cluster_access
from planb.local.gke_emulator.buckets import Buckets
from planb.local.gke_emulator.errors import ApiError
from planb.local.gke_emulator.instance_groups import add_instance_group, get_instance_group, groups_of, pool_zone
from planb.local.gke_emulator.operations import DEFAULT_OP_SECONDS, Operations, now
from planb.local.gke_emulator.project import ProjectApis
from planb.local.gke_emulator.project_setup import org_policies, project_number, subnet_ranges
from planb.local.gke_emulator.reservation_use import with_use
from planb.local.gke_emulator.store import Store
from planb.local.gke_emulator.upgrades import resolve_version
from planb.local.gke_emulator.vpc_peering import peering_refusal
from planb.paths import local_kubeconfig

Body = dict[str, Any]


class Engine:
    """The API's behaviour, independent of HTTP (the handler maps requests onto it)."""

    def __init__(self, store: Store, op_seconds: float = DEFAULT_OP_SECONDS, kubeconfig: Path | None = None) -> None:
        self.store = store
        self.operations = Operations(store, op_seconds)
        self.kubeconfig = kubeconfig or local_kubeconfig()
        #: Service Usage and Cloud Quotas, the project-level APIs the roles call before the cluster exists.
        self.project_apis = ProjectApis(store, op_seconds)
        #: Cloud Storage buckets.get and buckets.insert (the checkpoint bucket).
        self.buckets = Buckets(store)

    @property
    def op_seconds(self) -> float:
        """How long a new operation runs before it is DONE."""
        return self.operations.op_seconds

    @op_seconds.setter
    def op_seconds(self, seconds: float) -> None:
        self.operations.op_seconds = seconds

    # ---- operations -------------------------------------------------------------------
    def advance(self) -> None:
        """Finish every operation whose time has come and apply its effect."""
        self.operations.advance()

    def get_operation(self, name: str) -> Body:
        return self.operations.get(name)

    def add_fault(self, request: Body) -> Body:
        return self.operations.add_fault(request)

    # ---- clusters ---------------------------------------------------------------------
    def _cluster(self, name: str) -> Body:
        cluster = self.store.clusters.get(name)
        if cluster is None:
            raise ApiError(404, f"Not found: {name}.")
        return cluster

    def _cluster_view(self, name: str) -> Body:
        body = copy.deepcopy(self._cluster(name))
        # A RUNNING cluster's endpoint and CA (gke_emulator.access: the local stack's, or the emulator's own).
        access = cluster_access(self.kubeconfig, self.store.root)
        body["endpoint"] = access.endpoint
        body["masterAuth"] = {"clusterCaCertificate": access.ca_data}
        body["nodePools"] = [
            copy.deepcopy(pool) for key, pool in sorted(self.store.node_pools.items()) if key.startswith(name + "/")
        ]
        # Deprecated in v1 but still returned: the nodes of all the cluster's pools.
        body["currentNodeCount"] = sum(
            self.store.instance_groups[group]["targetSize"]
            for key in self.store.node_pools
            if key.startswith(name + "/")
            for group in groups_of(self.store, key)
        )
        return body

    def list_clusters(self, project: str, location: str) -> Body:
        """The project's clusters in `location`; location "-" matches all zones and all regions, as on GKE.

        GKE's reference for projects.locations.clusters.list: the parent "projects/*/locations/*", where
        'Location "-" matches all zones and all regions'
        (https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters/list).
        """
        prefix = f"projects/{project}/locations/" + ("" if location == "-" else f"{location}/clusters/")
        return {"clusters": [self._cluster_view(n) for n in sorted(self.store.clusters) if n.startswith(prefix)]}

    def get_cluster(self, name: str) -> Body:
        return self._cluster_view(name)

    def create_cluster(self, project: str, location: str, request: Body) -> Body:
        body = copy.deepcopy(request.get("cluster") or {})
        try:
            cluster_rules.check_cluster(body)
            for default_pool in body.get("nodePools") or []:
                rules.check_workload_metadata(default_pool, body)
                rules.check_shielded_vm(default_pool, project, org_policies(self.store))
            cluster_rules.check_secondary_ranges(body, subnet_ranges(self.store, project, location, body))
        except rules.RuleViolation as exc:
            raise ApiError(400, str(exc)) from exc
        name = f"projects/{project}/locations/{location}/clusters/{body['name']}"
        if name in self.store.clusters:
            raise ApiError(409, f"Already exists: {name}.")
        version = resolve_version(body.get("initialClusterVersion"))
        defaults.fill_cluster(body)
        body["labelFingerprint"] = cluster_updates.label_fingerprint(body.get("resourceLabels"))
        if "releaseChannel" not in body:
            # GKE enrolls a cluster created without one in a channel (defaults.DOC_RELEASE_CHANNEL_DEFAULT).
            body["releaseChannel"] = defaults.release_channel(body.get("initialClusterVersion"), version)
        pools = body.pop("nodePools", None) or [
            {
                "name": "default-pool",
                "initialNodeCount": body.pop("initialNodeCount", 3),
                "config": body.get("nodeConfig", {}),
            }
        ]
        body.update(
            location=location,
            zone=location,
            status="PROVISIONING",
            currentMasterVersion=version,
            currentNodeVersion=version,
            selfLink=f"https://container.googleapis.com/v1/{name}",
            createTime=now(),
            id=secrets.token_hex(16),
        )
        self.store.clusters[name] = body
        for pool in pools:
            add_instance_group(self.store, self._store_pool(name, pool, version))
        # An organisation policy against VPC peering fails the peering form's create operation, not the call.
        refusal = peering_refusal(body, project, project_number(project), location, org_policies(self.store))
        return self.operations.start(
            project, location, "CREATE_CLUSTER", name, {"kind": "create_cluster", "target": name}, refusal
        )

    def update_cluster(self, project: str, location: str, name: str, request: Body) -> Body:
        cluster = self._cluster(name)
        self.operations.busy(name)
        op_type = cluster_updates.apply_update(cluster, request.get("update") or {})
        cluster["status"] = "RECONCILING"
        return self.operations.start(project, location, op_type, name, {"kind": "update_cluster", "target": name})

    def set_resource_labels(self, project: str, location: str, name: str, request: Body) -> Body:
        cluster = self._cluster(name)
        self.operations.busy(name)
        cluster_updates.set_resource_labels(cluster, request)
        return self.operations.start(project, location, "SET_LABELS", name, {"kind": "update_cluster", "target": name})

    def auto_upgrade(self, request: Body) -> Body:
        """GKE's own upgrade of a cluster on a release channel (``gke_emulator.upgrades.auto_upgrade``)."""
        return upgrades.auto_upgrade(self.store, request)

    def delete_cluster(self, project: str, location: str, name: str) -> Body:
        cluster = self._cluster(name)
        self.operations.busy(name)
        cluster["status"] = "STOPPING"
        return self.operations.start(
            project, location, "DELETE_CLUSTER", name, {"kind": "delete_cluster", "target": name}
        )

    # ---- node pools -------------------------------------------------------------------
    def _store_pool(self, cluster: str, pool: Body, version: str, policy_topology: str = "") -> Body:
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
        self.store.node_pools[name] = pool
        return pool

    def _pool(self, name: str) -> Body:
        pool = self.store.node_pools.get(name)
        if pool is None:
            raise ApiError(404, f"Not found: {name}.")
        return pool

    def list_node_pools(self, cluster: str) -> Body:
        self._cluster(cluster)
        return {
            "nodePools": [
                copy.deepcopy(p) for n, p in sorted(self.store.node_pools.items()) if n.startswith(cluster + "/")
            ]
        }

    def get_node_pool(self, name: str) -> Body:
        return copy.deepcopy(self._pool(name))

    def create_node_pool(self, project: str, location: str, cluster: str, request: Body) -> Body:
        parent = self._cluster(cluster)
        pool = copy.deepcopy(request.get("nodePool") or {})
        name = f"{cluster}/nodePools/{pool.get('name', '')}"
        if name in self.store.node_pools:
            raise ApiError(409, f"Already exists: {name}.")
        self.operations.busy(cluster)
        try:
            policy = resource_policies.policy_for_pool(self.store.resource_policies, project, location, pool)
        except resource_policies.ResourcePolicyError as exc:
            raise ApiError(exc.code, exc.message) from exc
        candidate = copy.deepcopy(pool)
        self._store_pool(
            cluster, candidate, parent["currentMasterVersion"], resource_policies.accelerator_topology(policy)
        )
        self.store.node_pools.pop(name)
        try:
            rules.check_node_pool(candidate, parent["currentMasterVersion"])
            rules.check_workload_metadata(candidate, parent)
            rules.check_shielded_vm(candidate, project, org_policies(self.store))
            reservation_rules.check_reservation_affinity(
                candidate, project, pool_zone(candidate, location), self.store.reservations
            )
        except rules.RuleViolation as exc:
            raise ApiError(400, str(exc)) from exc
        self.store.node_pools[name] = candidate
        add_instance_group(self.store, candidate)
        return self.operations.start(
            project, location, "CREATE_NODE_POOL", name, {"kind": "create_pool", "target": name}
        )

    def _mutate_pool(
        self, project: str, location: str, name: str, op_type: str, change: Callable[[Body], None]
    ) -> Body:
        pool = self._pool(name)
        cluster = name.rsplit("/nodePools/", 1)[0]
        self.operations.busy(cluster)
        candidate = copy.deepcopy(pool)
        change(candidate)
        try:
            rules.check_node_pool(candidate, self._cluster(cluster)["currentMasterVersion"])
            rules.check_workload_metadata(candidate, self._cluster(cluster))
        except rules.RuleViolation as exc:
            raise ApiError(400, str(exc)) from exc
        candidate["status"] = "RECONCILING"
        self.store.node_pools[name] = candidate
        return self.operations.start(project, location, op_type, name, {"kind": "update_pool", "target": name})

    def update_node_pool(self, project: str, location: str, name: str, request: Body) -> Body:
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

        return self._mutate_pool(project, location, name, "UPGRADE_NODES", change)

    def set_autoscaling(self, project: str, location: str, name: str, request: Body) -> Body:
        def change(pool: Body) -> None:
            autoscaling = dict(request.get("autoscaling") or {})
            if autoscaling.get("enabled"):
                autoscaling.setdefault("locationPolicy", "BALANCED")
            pool["autoscaling"] = autoscaling

        return self._mutate_pool(project, location, name, "UPDATE_CLUSTER", change)

    def set_management(self, project: str, location: str, name: str, request: Body) -> Body:
        def change(pool: Body) -> None:
            pool["management"] = dict(request.get("management") or {})

        return self._mutate_pool(project, location, name, "SET_NODE_POOL_MANAGEMENT", change)

    def set_size(self, project: str, location: str, name: str, request: Body) -> Body:
        size = request.get("nodeCount") or 0
        if not isinstance(size, int) or size < 0:
            raise ApiError(400, f"Invalid value for nodeCount: {size!r}.")
        op = self._mutate_pool(project, location, name, "SET_NODE_POOL_SIZE", lambda pool: None)
        for group in groups_of(self.store, name):
            self.store.instance_groups[group]["targetSize"] = size
        self.store.save()
        return op

    def delete_node_pool(self, project: str, location: str, name: str) -> Body:
        pool = self._pool(name)
        self.operations.busy(name.rsplit("/nodePools/", 1)[0])
        pool["status"] = "STOPPING"
        return self.operations.start(
            project, location, "DELETE_NODE_POOL", name, {"kind": "delete_pool", "target": name}
        )

    # ---- Compute Engine: the managed instance groups behind node pools, and reservations ----------
    def get_instance_group(self, name: str) -> Body:
        return get_instance_group(self.store, name)

    def reservation_api(self, method: str, project: str, zone: str, name: str | None, request: Body) -> Body:
        """Compute Engine reservations: get, list, insert (planb.local.gke_emulator.reservations)."""
        try:
            # What the consuming pools use is counted at each read (gke_emulator.reservation_use).
            if name is not None and method == "GET":
                body = reservations.get(self.store.reservations, project, zone, name)
                return with_use(self.store, reservations.key(project, zone, name), body)
            if name is None and method == "GET":
                items = reservations.list_zone(self.store.reservations, project, zone)["items"]
                return {"items": [with_use(self.store, reservations.key(project, zone, r["name"]), r) for r in items]}
            if name is None and method == "POST":
                op = reservations.insert(self.store.reservations, project, zone, request)
                self.store.save()
                return op
        except reservations.ReservationError as exc:
            raise ApiError(exc.code, exc.message) from exc
        raise ApiError(405, f"{method} on Compute Engine reservations is not implemented by the planb GKE emulator")

    def resource_policy_api(self, method: str, project: str, region: str, name: str | None, request: Body) -> Body:
        """Compute Engine workload policies: get, list, insert (planb.local.gke_emulator.resource_policies)."""
        table = self.store.resource_policies
        try:
            if name is not None and method == "GET":
                return resource_policies.get(table, project, region, name)
            if name is None and method == "GET":
                return resource_policies.list_region(table, project, region)
            if name is None and method == "POST":
                op = resource_policies.insert(table, project, region, request)
                self.store.save()
                return op
        except resource_policies.ResourcePolicyError as exc:
            raise ApiError(exc.code, exc.message) from exc
        raise ApiError(405, f"{method} on Compute Engine resource policies is not implemented by the GKE emulator")

    # ---- emulator-only ----------------------------------------------------------------
    def kubeconfig_text(self, cluster: str) -> str:
        self._cluster(cluster)
        if not self.kubeconfig.exists():
            raise ApiError(
                404,
                f"The local stack's kubeconfig {self.kubeconfig} does not exist yet; start the local stack "
                "with `planb local up` and re-run.",
            )
        return self.kubeconfig.read_text()

    def add_http_fault(self, request: Body) -> Body:
        status, count = request.get("status"), request.get("count", 1)
        if not isinstance(status, int) or not 300 <= status <= 599:
            raise ApiError(400, f"status must be an HTTP status from 300 to 599, not {status!r}")
        if not isinstance(count, int) or count < 1:
            raise ApiError(400, f"count must be a positive integer, not {count!r}")
        method = str(request.get("method") or "*").upper()
        fault = {"status": status, "count": count, "method": method, "location": request.get("location")}
        self.store.http_faults.append(fault)
        self.store.save()
        return {"httpFaults": self.store.http_faults}

    def take_http_fault(self, method: str) -> Body | None:
        """The injected answer for this API request, if one is pending (each use counts down)."""
        with self.store.lock:
            for fault in self.store.http_faults:
                if fault["method"] in ("*", method):
                    fault["count"] -= 1
                    if fault["count"] <= 0:
                        self.store.http_faults.remove(fault)
                    self.store.save()
                    return fault
        return None
