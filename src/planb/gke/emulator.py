"""A local GKE API: the container/v1 subset planb's modules use, served on a loopback address.

Resources: ``projects/*/locations/*/clusters[/*]``, ``.../nodePools[/*]`` with
``:setAutoscaling``, ``:setManagement``, ``:setSize``, and ``projects/*/locations/*/operations/*``.
Each node pool is backed by a Compute Engine managed instance group, as on GKE: the pool's
``instanceGroupUrls`` name it and ``GET /compute/v1/projects/*/zones/*/instanceGroupManagers/*``
reads it; its ``targetSize`` is the pool's node count (``initialNodeCount`` at creation, then
``setSize``). GKE's v1 NodePool has no node count of its own; this is where clients read one.
Compute Engine reservations (``/compute/v1/projects/*/zones/*/reservations[/*]``: get, list, insert;
``planb.gke.reservations``) are what a SPECIFIC_RESERVATION pool consumes; creating one that names a missing or
mismatched reservation is refused (``rules.check_reservation_affinity``).
Mutations return long-running operations that finish after ``op_seconds``; errors use GKE's
JSON shape (``{"error": {"code", "message", "status"}}``) with 400/404/409.

Emulator-only endpoints (under ``/planb/v1``, never part of GKE):

* ``GET  /planb/v1/healthz``                       liveness
* ``GET  /planb/v1/requests``                      the request log (tests assert "no write happened")
* ``POST /planb/v1/faults`` ``{"operationType": "CREATE_NODE_POOL", "message": "..."}``
  makes the next matching operation fail when it completes (mid-create); ``"*"`` matches any
* ``POST /planb/v1/http-faults`` ``{"status": 503, "count": 2, "method": "GET", "location": null}``
  answers the next ``count`` API requests (``method`` or ``"*"``) with that HTTP status and a GKE error
  body instead of serving them (a 3xx carries ``location`` as its Location header); for clients' retries
* ``POST /planb/v1/services`` ``{"project": "*", "service": "tpu.googleapis.com", "state": "DISABLED"}`` and
  ``POST /planb/v1/quotas`` ``{"project": "*", "region": "us-east5", "machineType": "ct6e-standard-4t", "value": 8}``:
  an API disabled until enabled, a quota too low (``planb.gke.project``, which also serves Service Usage and
  Cloud Quotas under ``/serviceusage/v1/`` and ``/cloudquotas/v1/``)
* ``GET  /planb/v1/<cluster resource name>/kubeconfig``  the kubeconfig a cluster hands out:
  the local stack's (``planb.paths.local_kubeconfig()``); 404 while the stack is not up
"""

from __future__ import annotations

import copy
import ipaddress
import json
import re
import secrets
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import yaml

from planb.errors import PlanbError
from planb.gke import defaults, reservations, rules
from planb.gke.project import ProjectApiError, ProjectApis
from planb.gke.store import Store
from planb.paths import local_kubeconfig

Body = dict[str, Any]

DEFAULT_PORT = 8765
#: Where GKE's instanceGroupUrls point (Compute Engine API v1).
COMPUTE_BASE = "https://www.googleapis.com/compute/v1"
DEFAULT_OP_SECONDS = 1.0
#: What a version prefix resolves to when a cluster is created ("1.34" -> newest 1.34 patch).
NEWEST_PATCH = {32: "1.32.9-gke.1108000", 33: "1.33.5-gke.1308000", 34: "1.34.1-gke.1829001", 35: "1.35.0-gke.1215000"}
LATEST_MINOR = 34
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "UNIMPLEMENTED",
    409: "ALREADY_EXISTS",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_LOCATION = r"projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)"


class EmulatorError(PlanbError):
    """The emulator cannot start or be reached."""


class ApiError(Exception):
    """An answer GKE gives as an error body."""

    def __init__(self, code: int, message: str, status: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status or _STATUS_NAMES.get(code, "UNKNOWN")

    def body(self) -> Body:
        return {"error": {"code": self.code, "message": self.message, "status": self.status}}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def resolve_version(version: str | None) -> str:
    """The concrete version a cluster gets for a requested version (prefix or full)."""
    if not version or version in ("latest", "-"):
        return NEWEST_PATCH[LATEST_MINOR]
    parsed = rules.parse_version(version)
    if parsed is None:
        raise ApiError(400, f"Version {version!r} is invalid.")
    if len(parsed) >= 3:
        return version if len(parsed) == 4 else f"{version}-gke.1000000"
    if parsed[0] != 1 or parsed[1] not in NEWEST_PATCH:
        raise ApiError(400, f"Master version {version!r} is unsupported.")
    return NEWEST_PATCH[parsed[1]]


def local_cluster_access(kubeconfig: Path) -> tuple[str, str] | None:
    """(endpoint, base64 CA) of the local stack's kubeconfig, None while it does not exist."""
    if not kubeconfig.exists():
        return None
    try:
        doc = yaml.safe_load(kubeconfig.read_text()) or {}
        cluster = doc["clusters"][0]["cluster"]
    except (yaml.YAMLError, KeyError, IndexError, TypeError):
        return None
    server = re.sub(r"^https?://", "", str(cluster.get("server", "")))
    return server, str(cluster.get("certificate-authority-data", ""))


class Engine:
    """The API's behaviour, independent of HTTP (the handler maps requests onto it)."""

    def __init__(self, store: Store, op_seconds: float = DEFAULT_OP_SECONDS, kubeconfig: Path | None = None) -> None:
        self.store = store
        self.op_seconds = op_seconds
        self.kubeconfig = kubeconfig or local_kubeconfig()
        #: Service Usage and Cloud Quotas, the project-level APIs the roles call before the cluster exists.
        self.project_apis = ProjectApis(store, op_seconds)

    # ---- operations -------------------------------------------------------------------
    def _start_op(self, project: str, location: str, op_type: str, target: str, effect: Body) -> Body:
        name = f"operation-{int(time.time() * 1000)}-{secrets.token_hex(4)}"
        full = f"projects/{project}/locations/{location}/operations/{name}"
        fail = None
        for fault in list(self.store.faults):
            if fault.get("operationType") in ("*", op_type):
                self.store.faults.remove(fault)
                fail = str(fault.get("message") or f"Injected fault: {op_type} failed mid-operation")
                break
        op: Body = {
            "name": name,
            "zone": location,
            "location": location,
            "operationType": op_type,
            "status": "RUNNING",
            "selfLink": f"https://container.googleapis.com/v1/{full}",
            "targetLink": f"https://container.googleapis.com/v1/{target}",
            "startTime": _now(),
            "_planb": {"started": time.time(), "doneAt": time.time() + self.op_seconds, "effect": effect, "fail": fail},
        }
        self.store.operations[full] = op
        self.store.save()
        return self._public_op(op)

    def _public_op(self, op: Body) -> Body:
        out = {k: copy.deepcopy(v) for k, v in op.items() if k != "_planb"}
        meta = op["_planb"]
        if out["status"] == "RUNNING":
            total = max(self.op_seconds, 0.001)
            elapsed = min(time.time() - meta["started"], total)
            out["progress"] = {
                "status": "RUNNING",
                "metrics": [
                    {"name": "elapsed_ms", "intValue": str(int(elapsed * 1000))},
                    {"name": "total_ms", "intValue": str(int(total * 1000))},
                ],
            }
        return out

    def advance(self) -> None:
        """Finish every operation whose time has come and apply its effect."""
        with self.store.lock:
            changed = False
            for op in self.store.operations.values():
                meta = op["_planb"]
                if op["status"] != "RUNNING" or time.time() < meta["doneAt"]:
                    continue
                self._finish(op, meta["effect"], meta["fail"])
                changed = True
            if changed:
                self.store.save()

    def _finish(self, op: Body, effect: Body, fail: str | None) -> None:
        op["status"] = "DONE"
        op["endTime"] = _now()
        kind, target = effect["kind"], effect["target"]
        table = self.store.node_pools if kind.endswith("pool") else self.store.clusters
        if fail:
            op["error"] = {"code": 13, "message": fail}
            op["statusMessage"] = fail
            if kind.startswith("create") and target in table:
                table[target]["status"] = "ERROR"
                table[target]["statusMessage"] = fail
            elif target in table:
                table[target]["status"] = "RUNNING"
            return
        if kind.startswith("delete"):
            table.pop(target, None)
            pools = (
                [target] if kind == "delete_pool" else [p for p in self.store.node_pools if p.startswith(target + "/")]
            )
            for pool in pools:
                self.store.node_pools.pop(pool, None)
                for group in self._groups_of(pool):
                    self.store.instance_groups.pop(group)
            return
        if target in table:
            table[target]["status"] = "RUNNING"
            table[target].pop("statusMessage", None)
        if kind == "create_cluster":
            for pool_name, pool in self.store.node_pools.items():
                if pool_name.startswith(target + "/"):
                    pool["status"] = "RUNNING"

    def _busy(self, cluster: str) -> None:
        """GKE runs one operation at a time per cluster: refuse while one on the cluster or its pools runs."""
        for op in self.store.operations.values():
            target = op["targetLink"].split("/v1/", 1)[1]
            # By whole path segments: an operation on cluster tpu-cluster does not make cluster tpu busy.
            if op["status"] == "RUNNING" and (target == cluster or target.startswith(cluster + "/")):
                raise ApiError(
                    400,
                    f"Operation {op['name']} is currently {op['operationType'].lower()} on cluster "
                    f"{cluster.rsplit('/', 1)[-1]}. Please wait and try again once it is done.",
                    "FAILED_PRECONDITION",
                )

    def get_operation(self, name: str) -> Body:
        op = self.store.operations.get(name)
        if op is None:
            raise ApiError(404, f"Not found: {name}.")
        return self._public_op(op)

    # ---- clusters ---------------------------------------------------------------------
    def _cluster(self, name: str) -> Body:
        cluster = self.store.clusters.get(name)
        if cluster is None:
            raise ApiError(404, f"Not found: {name}.")
        return cluster

    def _cluster_view(self, name: str) -> Body:
        body = copy.deepcopy(self._cluster(name))
        access = local_cluster_access(self.kubeconfig)
        body["endpoint"] = access[0] if access else ""
        body["masterAuth"] = {"clusterCaCertificate": access[1] if access else ""}
        body["nodePools"] = [
            copy.deepcopy(pool) for key, pool in sorted(self.store.node_pools.items()) if key.startswith(name + "/")
        ]
        # Deprecated in v1 but still returned: the nodes of all the cluster's pools.
        body["currentNodeCount"] = sum(
            self.store.instance_groups[group]["targetSize"]
            for key in self.store.node_pools
            if key.startswith(name + "/")
            for group in self._groups_of(key)
        )
        return body

    def list_clusters(self, project: str, location: str) -> Body:
        """The project's clusters in `location`; location "-" matches all zones and all regions, as on GKE."""
        prefix = f"projects/{project}/locations/" + ("" if location == "-" else f"{location}/clusters/")
        return {"clusters": [self._cluster_view(n) for n in sorted(self.store.clusters) if n.startswith(prefix)]}

    def get_cluster(self, name: str) -> Body:
        return self._cluster_view(name)

    def create_cluster(self, project: str, location: str, request: Body) -> Body:
        body = copy.deepcopy(request.get("cluster") or {})
        try:
            rules.check_cluster(body)
            for default_pool in body.get("nodePools") or []:
                rules.check_workload_metadata(default_pool, body)
        except rules.RuleViolation as exc:
            raise ApiError(400, str(exc)) from exc
        name = f"projects/{project}/locations/{location}/clusters/{body['name']}"
        if name in self.store.clusters:
            raise ApiError(409, f"Already exists: {name}.")
        version = resolve_version(body.get("initialClusterVersion"))
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
            createTime=_now(),
            id=secrets.token_hex(16),
        )
        self.store.clusters[name] = body
        for pool in pools:
            self._add_instance_group(self._store_pool(name, pool, version))
        return self._start_op(project, location, "CREATE_CLUSTER", name, {"kind": "create_cluster", "target": name})

    def update_cluster(self, project: str, location: str, name: str, request: Body) -> Body:
        cluster = self._cluster(name)
        self._busy(name)
        update = request.get("update") or {}
        op_type = "UPDATE_CLUSTER"
        if "desiredAddonsConfig" in update:
            cluster.setdefault("addonsConfig", {}).update(update["desiredAddonsConfig"])
        if "desiredGcfsConfig" in update:
            defaults = cluster.setdefault("nodePoolDefaults", {}).setdefault("nodeConfigDefaults", {})
            defaults["gcfsConfig"] = update["desiredGcfsConfig"]
        if "desiredWorkloadIdentityConfig" in update:
            cluster["workloadIdentityConfig"] = dict(update["desiredWorkloadIdentityConfig"] or {})
        if "desiredMasterVersion" in update:
            cluster["currentMasterVersion"] = resolve_version(update["desiredMasterVersion"])
            op_type = "UPGRADE_MASTER"
        cluster["status"] = "RECONCILING"
        return self._start_op(project, location, op_type, name, {"kind": "update_cluster", "target": name})

    def delete_cluster(self, project: str, location: str, name: str) -> Body:
        cluster = self._cluster(name)
        self._busy(name)
        cluster["status"] = "STOPPING"
        return self._start_op(project, location, "DELETE_CLUSTER", name, {"kind": "delete_cluster", "target": name})

    # ---- node pools -------------------------------------------------------------------
    def _store_pool(self, cluster: str, pool: Body, version: str) -> Body:
        name = f"{cluster}/nodePools/{pool['name']}"
        # GKE's defaults for what the body omits, and the taints and labels GKE adds itself (defaults.py).
        defaults.fill_node_pool(pool)
        defaults.add_gke_owned(pool)
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
        self._busy(cluster)
        candidate = copy.deepcopy(pool)
        self._store_pool(cluster, candidate, parent["currentMasterVersion"])
        self.store.node_pools.pop(name)
        try:
            rules.check_node_pool(candidate, parent["currentMasterVersion"])
            rules.check_workload_metadata(candidate, parent)
            rules.check_reservation_affinity(
                candidate, project, _pool_zone(candidate, location), self.store.reservations
            )
        except rules.RuleViolation as exc:
            raise ApiError(400, str(exc)) from exc
        self.store.node_pools[name] = candidate
        self._add_instance_group(candidate)
        return self._start_op(project, location, "CREATE_NODE_POOL", name, {"kind": "create_pool", "target": name})

    def _mutate_pool(
        self, project: str, location: str, name: str, op_type: str, change: Callable[[Body], None]
    ) -> Body:
        pool = self._pool(name)
        cluster = name.rsplit("/nodePools/", 1)[0]
        self._busy(cluster)
        candidate = copy.deepcopy(pool)
        change(candidate)
        try:
            rules.check_node_pool(candidate, self._cluster(cluster)["currentMasterVersion"])
            rules.check_workload_metadata(candidate, self._cluster(cluster))
        except rules.RuleViolation as exc:
            raise ApiError(400, str(exc)) from exc
        candidate["status"] = "RECONCILING"
        self.store.node_pools[name] = candidate
        return self._start_op(project, location, op_type, name, {"kind": "update_pool", "target": name})

    def update_node_pool(self, project: str, location: str, name: str, request: Body) -> Body:
        def change(pool: Body) -> None:
            config = pool.setdefault("config", {})
            if "labels" in request:
                config["labels"] = dict((request["labels"] or {}).get("labels") or {})
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
        for group in self._groups_of(name):
            self.store.instance_groups[group]["targetSize"] = size
        self.store.save()
        return op

    def delete_node_pool(self, project: str, location: str, name: str) -> Body:
        pool = self._pool(name)
        self._busy(name.rsplit("/nodePools/", 1)[0])
        pool["status"] = "STOPPING"
        return self._start_op(project, location, "DELETE_NODE_POOL", name, {"kind": "delete_pool", "target": name})

    # ---- Compute Engine: the managed instance groups behind node pools ----------------------------
    def _add_instance_group(self, pool: Body) -> None:
        """Back a new pool by one managed instance group (in the location's zone; a region's first zone)."""
        pool_name = pool["selfLink"].split("/v1/", 1)[1]
        parts = pool_name.split("/")
        project, location, cluster, pool_id = parts[1], parts[3], parts[5], parts[7]
        zone = _pool_zone(pool, location)
        group = f"gke-{cluster[:15]}-{pool_id[:15]}-{secrets.token_hex(4)}-grp"
        full = f"projects/{project}/zones/{zone}/instanceGroupManagers/{group}"
        self.store.instance_groups[full] = {
            "name": group,
            "zone": f"{COMPUTE_BASE}/projects/{project}/zones/{zone}",
            "baseInstanceName": group.removesuffix("-grp"),
            "targetSize": int(pool.get("initialNodeCount") or 0),
            "selfLink": f"{COMPUTE_BASE}/{full}",
            "_nodePool": pool_name,
        }
        pool["instanceGroupUrls"] = [f"{COMPUTE_BASE}/{full}"]

    def reservation_api(self, method: str, project: str, zone: str, name: str | None, request: Body) -> Body:
        """Compute Engine reservations: get, list, insert (planb.gke.reservations)."""
        try:
            if name is not None and method == "GET":
                return reservations.get(self.store.reservations, project, zone, name)
            if name is None and method == "GET":
                return reservations.list_zone(self.store.reservations, project, zone)
            if name is None and method == "POST":
                op = reservations.insert(self.store.reservations, project, zone, request)
                self.store.save()
                return op
        except reservations.ReservationError as exc:
            raise ApiError(exc.code, exc.message) from exc
        raise ApiError(405, f"{method} on Compute Engine reservations is not implemented by the planb GKE emulator")

    def _groups_of(self, pool_name: str) -> list[str]:
        return [name for name, group in self.store.instance_groups.items() if group.get("_nodePool") == pool_name]

    def get_instance_group(self, name: str) -> Body:
        group = self.store.instance_groups.get(name)
        if group is None:
            raise ApiError(404, f"The resource '{name}' was not found")
        return {k: copy.deepcopy(v) for k, v in group.items() if not k.startswith("_")}

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

    def add_fault(self, request: Body) -> Body:
        fault = {"operationType": str(request.get("operationType") or "*"), "message": request.get("message")}
        self.store.faults.append(fault)
        self.store.save()
        return {"faults": self.store.faults}

    # ---- routing ----------------------------------------------------------------------
    def dispatch(self, method: str, path: str, request: Body, query: str = "") -> Body | str:
        """Route one request; returns the response body or raises ApiError."""
        with self.store.lock:
            self.advance()
            try:
                answer = self.project_apis.route(method, path, query)
            except ProjectApiError as exc:
                raise ApiError(exc.code, exc.message, exc.status) from exc
            if answer is not None:
                self.store.save()
                return answer
            return self._route(method, path, request)

    def _route(self, method: str, path: str, request: Body) -> Body | str:
        if path == "/planb/v1/healthz":
            return {"ok": True}
        if path == "/planb/v1/requests":
            return {"requests": self.store.request_log()}
        if path == "/planb/v1/faults" and method == "POST":
            return self.add_fault(request)
        if path == "/planb/v1/http-faults" and method == "POST":
            return self.add_http_fault(request)
        if path in ("/planb/v1/services", "/planb/v1/quotas") and method == "POST":
            try:
                if path.endswith("/services"):
                    return self.project_apis.set_service(request)
                return self.project_apis.set_quota(request)
            except ProjectApiError as exc:
                raise ApiError(exc.code, exc.message, exc.status) from exc
            finally:
                self.store.save()
        match = re.fullmatch(r"/planb/v1/(" + _LOCATION + r"/clusters/[^/]+)/kubeconfig", path)
        if match and method == "GET":
            return self.kubeconfig_text(match.group(1))
        match = re.fullmatch(r"/compute/v1/(projects/[^/]+/zones/[^/]+/instanceGroupManagers/[^/]+)", path)
        if match and method == "GET":
            return self.get_instance_group("/".join(_segment(part, path) for part in match.group(1).split("/")))
        match = re.fullmatch(r"/compute/v1/projects/([^/]+)/zones/([^/]+)/reservations(?:/([^/]+))?", path)
        if match:
            project, zone = _segment(match.group(1), path), _segment(match.group(2), path)
            name = _segment(match.group(3), path) if match.group(3) else None
            return self.reservation_api(method, project, zone, name, request)
        match = re.fullmatch(r"/v1/" + _LOCATION + r"(?P<rest>/.*)", path)
        if not match:
            raise ApiError(404, f"Not found: {path}")
        project, location, rest = _segment(match["project"], path), _segment(match["location"], path), match["rest"]
        if self.project_apis.service_state(project, "container.googleapis.com") != "ENABLED":
            # What Google answers while an API is disabled on the project (reason SERVICE_DISABLED).
            raise ApiError(
                403,
                f"Kubernetes Engine API has not been used in project {project} before or it is disabled. Enable it "
                "with `gcloud services enable container.googleapis.com` and retry.",
                "PERMISSION_DENIED",
            )
        base = f"projects/{project}/locations/{location}"
        if m := re.fullmatch(r"/operations/([^/]+)", rest):
            if method == "GET":
                return self.get_operation(f"{base}/operations/{_segment(m.group(1), path)}")
        elif rest == "/clusters":
            if method == "GET":
                return self.list_clusters(project, location)
            if method == "POST":
                return self.create_cluster(project, location, request)
        elif m := re.fullmatch(r"/clusters/([^/:]+)", rest):
            name = f"{base}/clusters/{_segment(m.group(1), path)}"
            if method == "GET":
                return self.get_cluster(name)
            if method == "PUT":
                return self.update_cluster(project, location, name, request)
            if method == "DELETE":
                return self.delete_cluster(project, location, name)
        elif m := re.fullmatch(r"/clusters/([^/:]+)/nodePools", rest):
            cluster = f"{base}/clusters/{_segment(m.group(1), path)}"
            if method == "GET":
                return self.list_node_pools(cluster)
            if method == "POST":
                return self.create_node_pool(project, location, cluster, request)
        elif m := re.fullmatch(r"/clusters/([^/:]+)/nodePools/([^/:]+)(?::(\w+))?", rest):
            name = f"{base}/clusters/{_segment(m.group(1), path)}/nodePools/{_segment(m.group(2), path)}"
            verb = m.group(3)
            if verb is None and method == "GET":
                return self.get_node_pool(name)
            if verb is None and method == "PUT":
                return self.update_node_pool(project, location, name, request)
            if verb is None and method == "DELETE":
                return self.delete_node_pool(project, location, name)
            actions = {
                "setAutoscaling": self.set_autoscaling,
                "setManagement": self.set_management,
                "setSize": self.set_size,
            }
            if verb in actions and method == "POST":
                return actions[verb](project, location, name, request)
        raise ApiError(405, f"{method} {path} is not implemented by the planb GKE emulator")


def _pool_zone(pool: Body, location: str) -> str:
    """The zone of a pool's nodes: its first location, a zonal cluster's zone, else the region's first zone."""
    zone = location if re.fullmatch(r".+-[a-z]", location) else f"{location}-a"
    return str((pool.get("locations") or [zone])[0])


def _segment(raw: str, path: str) -> str:
    """One percent-decoded path segment; a '/' inside one names no GKE resource (ids never hold one)."""
    decoded = unquote(raw)
    if "/" in decoded:
        raise ApiError(404, f"Not found: {path}")
    return decoded


class _Handler(BaseHTTPRequestHandler):
    server: EmulatorHTTPServer
    protocol_version = "HTTP/1.1"

    def _handle(self) -> None:
        path = self.path.split("?", 1)[0]
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        status = 200
        api = path.startswith(("/v1/", "/compute/v1/", "/serviceusage/v1/", "/cloudquotas/v1/"))
        fault = self.server.engine.take_http_fault(self.command) if api else None
        location = None
        try:
            if fault is not None:
                location = fault.get("location")
                raise ApiError(fault["status"], f"Injected by `planb gke-emulator fail-http` ({fault['status']}).")
            request = json.loads(raw) if raw else {}
            if not isinstance(request, dict):
                raise ApiError(400, "Request body must be a JSON object.")
            query = self.path.split("?", 1)[1] if "?" in self.path else ""
            result = self.server.engine.dispatch(self.command, path, request, query)
        except json.JSONDecodeError as exc:
            status, result = 400, ApiError(400, f"Invalid JSON payload: {exc}").body()
        except ApiError as exc:
            status, result = exc.code, exc.body()
        if api:
            self.server.engine.store.log_request(self.command, path, status)
        if isinstance(result, str):
            payload, ctype = result.encode(), "application/yaml"
        else:
            payload, ctype = json.dumps(result).encode(), "application/json; charset=UTF-8"
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(payload)))
        if location:
            self.send_header("Location", str(location))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _handle

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)


class EmulatorHTTPServer(ThreadingHTTPServer):
    """ThreadingHTTPServer carrying the engine; binds loopback addresses only."""

    daemon_threads = True

    def __init__(
        self, engine: Engine, host: str = "127.0.0.1", port: int = DEFAULT_PORT, verbose: bool = False
    ) -> None:
        if host != "localhost" and not ipaddress.ip_address(host).is_loopback:
            raise EmulatorError(f"the GKE emulator only listens on loopback addresses, not {host}")
        self.engine = engine
        self.verbose = verbose
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


class RunningEmulator:
    """An emulator served from a background thread (tests, in-process use)."""

    def __init__(
        self,
        state_dir: Path,
        port: int = 0,
        op_seconds: float = DEFAULT_OP_SECONDS,
        kubeconfig: Path | None = None,
    ) -> None:
        self.store = Store(state_dir)
        self.engine = Engine(self.store, op_seconds=op_seconds, kubeconfig=kubeconfig)
        self.server = EmulatorHTTPServer(self.engine, port=port)
        self.thread = threading.Thread(target=self.server.serve_forever, name="gke-emulator", daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return self.server.url

    def writes(self) -> list[Body]:
        """Write requests (POST/PUT/PATCH/DELETE) the GKE API received so far."""
        return [r for r in self.store.request_log() if r["method"] in WRITE_METHODS]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
