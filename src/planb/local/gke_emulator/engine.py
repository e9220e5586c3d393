"""The local GKE API's behaviour, independent of HTTP: clusters, node pools and what they stand on.

``Engine`` holds the container/v1 resources (clusters and their actions; node pools and theirs in
``gke_emulator.node_pools``), GKE's validation (``gke_emulator.rules``) and defaults (``gke_emulator.defaults``),
cluster versions and GKE's own upgrade (``gke_emulator.upgrades``), the managed instance groups behind pools
(``gke_emulator.instance_groups``), Compute Engine reservations (``gke_emulator.reservations``), the project-level
APIs (``gke_emulator.project``), Cloud Storage buckets (``gke_emulator.buckets``), the endpoint and CA a cluster reads
(``gke_emulator.access``), and the emulator-only switches: injected operation and HTTP faults and the kubeconfig a
cluster hands out. Mutations return long-running operations (``gke_emulator.operations``); ``gke_emulator.routes``
maps REST paths onto these methods.
"""

from __future__ import annotations

import copy
import secrets
from pathlib import Path
from typing import Any

from planb.local.gke_emulator import (
    cluster_rules,
    cluster_updates,
    defaults,
    reservations,
    resource_policies,
    rules,
    upgrades,
)
from planb.local.gke_emulator.access import cluster_access
from planb.local.gke_emulator.buckets import Buckets
from planb.local.gke_emulator.errors import ApiError
from planb.local.gke_emulator.instance_groups import add_instance_group, get_instance_group, groups_of
from planb.local.gke_emulator.node_pools import NodePools, cluster_of
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
        #: The clusters' node pools (gke_emulator.node_pools).
        self.node_pools = NodePools(store, self.operations)
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
        return cluster_of(self.store, name)

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
            add_instance_group(self.store, self.node_pools.add(name, pool, version))
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
