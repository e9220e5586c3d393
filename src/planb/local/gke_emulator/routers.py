"""Compute Engine's Cloud Routers and their Cloud NAT gateways: ``routers.get``, ``routers.insert``,
``routers.patch`` and ``routers.delete`` (https://cloud.google.com/compute/docs/reference/rest/v1/routers), beside
``routers.list``, which the day-0 check reads (``gke_emulator.project_setup``). Both share one table,
``project/region/name`` -> ``{"network": NAME, "nats": [RouterNat, ...], "description": TEXT}``, which
``POST /planb/v1/routers`` also sets.

* insert: the Router body (already held to compute v1's schema by ``gke_emulator.conformance``); a router of that
  name in the region is 409, a network the project does not have 404 (the message Compute Engine gives for a
  missing resource), a router without a network 400 (``Router.network``: "URI of the network to which this router
  belongs", required by routers.insert).
* patch: the fields given replace the router's (``nats`` whole, as PATCH's JSON merge does for a list).
* delete: the router and its NAT gateways go (https://cloud.google.com/compute/docs/reference/rest/v1/routers/delete);
  a router that is not there is 404, as for get.
* Each write answers a regional Operation, DONE at once: the emulator models no router provisioning time.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from planb.local.gke_emulator.errors import ApiError

Body = dict[str, Any]

COMPUTE = "https://www.googleapis.com/compute/v1"


def view(project: str, region: str, name: str, router: Body) -> Body:
    """The stored router as Compute Engine answers it (a ``Router``)."""
    answer: Body = {
        "kind": "compute#router",
        "name": name,
        "region": f"{COMPUTE}/projects/{project}/regions/{region}",
        "network": f"{COMPUTE}/projects/{project}/global/networks/{router['network']}",
        "nats": list(router["nats"]),
        "selfLink": f"{COMPUTE}/projects/{project}/regions/{region}/routers/{name}",
    }
    if router.get("description"):
        answer["description"] = router["description"]
    return answer


def _operation(kind: str, project: str, region: str, name: str) -> Body:
    return {
        "kind": "compute#operation",
        "name": f"operation-{secrets.token_hex(8)}",
        "operationType": kind,
        "status": "DONE",
        "progress": 100,
        "targetLink": f"{COMPUTE}/projects/{project}/regions/{region}/routers/{name}",
        "region": f"{COMPUTE}/projects/{project}/regions/{region}",
    }


def route(
    table: dict[str, Body],
    network_exists: Callable[[str, str], bool],
    method: str,
    project: str,
    region: str,
    name: str | None,
    request: Body,
) -> Body:
    """routers.get / insert / patch / delete on ``table``; ``network_exists(project, network)`` says whether it has
    that network."""
    if name is not None and method in ("GET", "PATCH", "DELETE"):
        key = f"{project}/{region}/{name}"
        if key not in table:
            raise ApiError(404, f"The resource 'projects/{project}/regions/{region}/routers/{name}' was not found")
        if method == "GET":
            return view(project, region, name, table[key])
        if method == "DELETE":
            del table[key]
            return _operation("delete", project, region, name)
        if "nats" in request:
            table[key]["nats"] = list(request["nats"] or [])
        return _operation("patch", project, region, name)
    if name is None and method == "POST":
        new = str(request.get("name") or "")
        network = str(request.get("network") or "").rsplit("/", 1)[-1]
        if not new or not network:
            raise ApiError(
                400, "Invalid value for field 'resource.network': ''. The router needs a name and a network."
            )
        if not network_exists(project, network):
            raise ApiError(404, f"The resource 'projects/{project}/global/networks/{network}' was not found")
        key = f"{project}/{region}/{new}"
        if key in table:
            raise ApiError(409, f"The resource 'projects/{project}/regions/{region}/routers/{new}' already exists")
        table[key] = {"network": network, "nats": list(request.get("nats") or [])}
        if request.get("description"):
            table[key]["description"] = str(request["description"])
        return _operation("insert", project, region, new)
    raise ApiError(405, f"{method} on Compute Engine routers is not implemented by the planb GKE emulator")
