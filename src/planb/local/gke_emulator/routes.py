"""The local GKE API's routes: which REST path (container/v1, Compute Engine, emulator-only) does what.

Resources: ``projects/*/locations/*/clusters[/*]`` (``:setResourceLabels``), ``.../nodePools[/*]`` with
``:setAutoscaling``, ``:setManagement``, ``:setSize``, and ``projects/*/locations/*/operations/*``.
``GET /compute/v1/projects/*/zones/*/instanceGroupManagers/*`` reads the managed instance group behind a node
pool (``planb.local.gke_emulator.instance_groups``: its ``targetSize`` is the pool's node count).
Compute Engine reservations (``/compute/v1/projects/*/zones/*/reservations[/*]``: get, list, insert;
``gke_emulator.reservations``) are what a SPECIFIC_RESERVATION pool consumes; creating one that names a missing or
mismatched reservation is refused (``reservation_rules.check_reservation_affinity``).
Cloud Routers with their Cloud NAT gateways (``/compute/v1/projects/*/regions/*/routers[/*]``: get, insert, patch;
``planb.local.gke_emulator.routers``) are what the gke_cluster role's optional Cloud NAT creates.
Compute Engine workload policies (``/compute/v1/projects/*/regions/*/resourcePolicies[/*]``: get, list, insert;
``planb.local.gke_emulator.resource_policies``) are what a multi-host TPU7x pool's ``placementPolicy.policyName`` names.
Cloud Storage buckets (``GET /storage/v1/b/B``, ``POST /storage/v1/b?project=P``; ``gke_emulator.buckets``, errors in
the JSON API's own shape) are the checkpoint bucket the gke_cluster role checks or creates.
Mutations return long-running operations that finish after ``op_seconds`` (``gke_emulator.operations``); errors use
GKE's JSON shape (``{"error": {"code", "message", "status"}}``, ``planb.local.gke_emulator.errors``) with 400/404/409.
Paths under ``/v1/projects/P/...`` answer 403 while ``container.googleapis.com`` is disabled on project P.
Every body sent to a path Google's discovery documents describe is checked against the method's request schema
before it is served, and every answer goes out through the response schema (``planb.local.gke_emulator.conformance``).

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
  an API disabled until enabled, a quota too low (``gke_emulator.project``, which also serves Service Usage and
  Cloud Quotas under ``/serviceusage/v1/`` and ``/cloudquotas/v1/``)
* ``POST /planb/v1/upgrades`` ``{"cluster": "projects/P/locations/L/clusters/C", "version": "1.35"}``: GKE's own
  upgrade of a cluster on a release channel (``Engine.auto_upgrade``)
* ``POST /planb/v1/permissions`` ``{"project": "*", "permission": "container.clusters.create", "granted": false}``:
  a permission the caller lacks, left out of Cloud Resource Manager's ``projects.testIamPermissions`` answer
  (``POST /cloudresourcemanager/v3/projects/P:testIamPermissions``, ``gke_emulator.project``) until granted again
* ``POST /planb/v1/fresh-project``, ``/planb/v1/org-policies``, ``/planb/v1/iam-bindings``, ``/planb/v1/networks``,
  ``/planb/v1/routers``, ``/planb/v1/cpu-quotas``: a project on day 0 and what fixes it (``gke_emulator.project_setup``,
  which also serves the Org Policy API's effective policy, Cloud Resource Manager's projects.get and getIamPolicy,
  and Compute Engine's networks.get, subnetworks.get and routers.list that the day-0 check reads)
* ``POST /planb/v1/capacity-signals`` ``{"zone", "machineType", "provisioningModel", "outcome": "STOCKOUT"}`` and
  ``POST /planb/v1/advice`` ``{"machineType": "ct6e-*", "refuse": true}``: what planb's capacity model has seen, and
  a shape Compute Engine's ``advice.capacity`` refuses (``gke_emulator.advice``, which serves the advice methods)
* ``GET  /planb/v1/<cluster resource name>/kubeconfig``  the kubeconfig a cluster hands out:
  the local stack's (``planb.paths.local_kubeconfig()``); 404 while the stack is not up
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from planb.local.gke_emulator import advice, conformance, discovery, routers
from planb.local.gke_emulator.engine import Engine
from planb.local.gke_emulator.errors import ApiError, ProjectApiError
from planb.local.gke_emulator.project_setup import ProjectSetup

Body = dict[str, Any]

_LOCATION = r"projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)"


def dispatch(
    engine: Engine, method: str, path: str, request: Body, query: str = "", user_project: str | None = None
) -> Body | str:
    """Route one request; returns the response body or raises ApiError. ``user_project`` is the request's
    x-goog-user-project, the project billed for it (``gke_emulator.project_setup``).

    A path a discovery document describes has its body checked against the method's request schema before
    anything else (``gke_emulator.conformance``: Google's 400 naming the field), and its answer goes out through
    the response schema (int64 fields as JSON strings).
    """
    documented = discovery.find_method(method, path)
    if documented is not None:
        request = conformance.checked_request(documented, request)
    with engine.store.lock:
        engine.advance()
        setup = ProjectSetup(engine.store, engine.project_apis)
        try:
            setup.gate(path, user_project)  # an API that is off answers 403 (gke_emulator.project_setup)
            project_answer = setup.route(method, path) or engine.project_apis.route(method, path, query, request)
        except ProjectApiError as exc:
            raise ApiError(exc.code, exc.message, exc.status, exc.details) from exc
        if project_answer is not None:
            engine.store.save()
        else:
            project_answer = engine.buckets.route(method, path, query, request)
            if project_answer is None:  # Compute Engine's capacity advice (gke_emulator.advice)
                project_answer = advice.route(engine.store, method, path, request)
        answer = project_answer if project_answer is not None else _route(engine, method, path, request)
    if documented is None or isinstance(answer, str):
        return answer
    return conformance.checked_response(documented, answer)


def _route(engine: Engine, method: str, path: str, request: Body) -> Body | str:
    """A path no discovery-described part answered: planb's own switches, Compute Engine's few resources here, else
    GKE's container v1 API (404 for a path it does not have, 405 for a method)."""
    for part in (_switch, _compute):
        answer = part(engine, method, path, request)
        if answer is not None:
            return answer
    return _container(engine, method, path, request)


def _switch(engine: Engine, method: str, path: str, request: Body) -> Body | str | None:
    """planb's own paths (``/planb/v1/...``): health, the request log, fault injection and a project's switches; None
    for any other."""
    if path == "/planb/v1/healthz":
        return {"ok": True}
    if path == "/planb/v1/requests":
        return {"requests": engine.store.request_log()}
    if path == "/planb/v1/faults" and method == "POST":
        return engine.add_fault(request)
    if path == "/planb/v1/http-faults" and method == "POST":
        return engine.add_http_fault(request)
    if path == "/planb/v1/upgrades" and method == "POST":
        return engine.auto_upgrade(request)
    setups = ("fresh-project", "org-policies", "iam-bindings", "networks", "routers", "cpu-quotas")
    if method == "POST" and path.startswith("/planb/v1/") and path[len("/planb/v1/") :] in setups:
        try:
            return ProjectSetup(engine.store, engine.project_apis).switch(path[len("/planb/v1/") :], request)
        except ProjectApiError as exc:
            raise ApiError(exc.code, exc.message, exc.status) from exc
        finally:
            engine.store.save()
    if path in ("/planb/v1/services", "/planb/v1/quotas", "/planb/v1/permissions") and method == "POST":
        try:
            if path.endswith("/services"):
                return engine.project_apis.set_service(request)
            if path.endswith("/permissions"):
                return engine.project_apis.set_permission(request)
            return engine.project_apis.set_quota(request)
        except ProjectApiError as exc:
            raise ApiError(exc.code, exc.message, exc.status) from exc
        finally:
            engine.store.save()
    match = re.fullmatch(r"/planb/v1/(" + _LOCATION + r"/clusters/[^/]+)/kubeconfig", path)
    if match and method == "GET":
        return engine.kubeconfig_text(match.group(1))
    return None


def _compute(engine: Engine, method: str, path: str, request: Body) -> Body | None:
    """Compute Engine's instance groups, reservations, routers and resource policies; None for any other path."""
    match = re.fullmatch(r"/compute/v1/(projects/[^/]+/zones/[^/]+/instanceGroupManagers/[^/]+)", path)
    if match and method == "GET":
        return engine.get_instance_group("/".join(_segment(part, path) for part in match.group(1).split("/")))
    match = re.fullmatch(r"/compute/v1/projects/([^/]+)/zones/([^/]+)/reservations(?:/([^/]+))?", path)
    if match:
        project, zone = _segment(match.group(1), path), _segment(match.group(2), path)
        name = _segment(match.group(3), path) if match.group(3) else None
        return engine.reservation_api(method, project, zone, name, request)
    match = re.fullmatch(r"/compute/v1/projects/([^/]+)/regions/([^/]+)/routers(?:/([^/]+))?", path)
    if match:  # routers.get, insert, patch (routers.list: gke_emulator.project_setup)
        setup = ProjectSetup(engine.store, engine.project_apis)
        project, region = _segment(match.group(1), path), _segment(match.group(2), path)
        name = _segment(match.group(3), path) if match.group(3) else None

        def has(host: str, network: str) -> bool:
            try:
                return bool(setup.network(host, network))
            except ProjectApiError:
                return False

        answer = routers.route(setup.setup["routers"], has, method, project, region, name, request)
        engine.store.save()
        return answer
    match = re.fullmatch(r"/compute/v1/projects/([^/]+)/regions/([^/]+)/resourcePolicies(?:/([^/]+))?", path)
    if match:
        project, region = _segment(match.group(1), path), _segment(match.group(2), path)
        name = _segment(match.group(3), path) if match.group(3) else None
        return engine.resource_policy_api(method, project, region, name, request)
    return None


def _container(engine: Engine, method: str, path: str, request: Body) -> Body:
    """GKE's container v1 API: operations, clusters and node pools of a location."""
    match = re.fullmatch(r"/v1/" + _LOCATION + r"(?P<rest>/.*)", path)
    if not match:
        raise ApiError(404, f"Not found: {path}")
    project, location, rest = _segment(match["project"], path), _segment(match["location"], path), match["rest"]
    if engine.project_apis.service_state(project, "container.googleapis.com") != "ENABLED":
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
            return engine.get_operation(f"{base}/operations/{_segment(m.group(1), path)}")
    elif rest == "/clusters":
        if method == "GET":
            return engine.list_clusters(project, location)
        if method == "POST":
            return engine.create_cluster(project, location, request)
    elif m := re.fullmatch(r"/clusters/([^/:]+)", rest):
        name = f"{base}/clusters/{_segment(m.group(1), path)}"
        if method == "GET":
            return engine.get_cluster(name)
        if method == "PUT":
            return engine.update_cluster(project, location, name, request)
        if method == "DELETE":
            return engine.delete_cluster(project, location, name)
    elif m := re.fullmatch(r"/clusters/([^/:]+):setResourceLabels", rest):
        if method == "POST":  # clusters.setResourceLabels (gke_emulator.cluster_updates)
            return engine.set_resource_labels(
                project, location, f"{base}/clusters/{_segment(m.group(1), path)}", request
            )
    elif m := re.fullmatch(r"/clusters/([^/:]+)/nodePools", rest):
        cluster = f"{base}/clusters/{_segment(m.group(1), path)}"
        if method == "GET":
            return engine.node_pools.list_in(cluster)
        if method == "POST":
            return engine.node_pools.create(project, location, cluster, request)
    elif m := re.fullmatch(r"/clusters/([^/:]+)/nodePools/([^/:]+)(?::(\w+))?", rest):
        name = f"{base}/clusters/{_segment(m.group(1), path)}/nodePools/{_segment(m.group(2), path)}"
        verb = m.group(3)
        if verb is None and method == "GET":
            return engine.node_pools.get(name)
        if verb is None and method == "PUT":
            return engine.node_pools.update(project, location, name, request)
        if verb is None and method == "DELETE":
            return engine.node_pools.delete(project, location, name)
        actions = {
            "setAutoscaling": engine.node_pools.set_autoscaling,
            "setManagement": engine.node_pools.set_management,
            "setSize": engine.node_pools.set_size,
        }
        if verb in actions and method == "POST":
            return actions[verb](project, location, name, request)
    raise ApiError(405, f"{method} {path} is not implemented by the planb GKE emulator")


def _segment(raw: str, path: str) -> str:
    """One percent-decoded path segment; a '/' inside one names no GKE resource (ids never hold one)."""
    decoded = unquote(raw)
    if "/" in decoded:
        raise ApiError(404, f"Not found: {path}")
    return decoded
