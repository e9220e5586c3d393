# planb.gke: Cloud NAT for private nodes, as a NAT gateway on a Cloud Router (Compute Engine API v1).
"""The gcp_router_nat module's logic: a Cloud Router of the nodes' network in the cluster's region with a NAT gateway
for every subnet's ranges, so private nodes pull images and packages from the internet (DOC_NAT_GKE).

Cloud NAT is a Compute Engine router resource: ``routers.get``, ``routers.insert`` with the router and its ``nats``,
``routers.patch`` adding a NAT to a router that has none (DOC_ROUTERS); both writes answer a regional Operation,
waited for with ``regionOperations.get``. In a Shared VPC the network's host project owns the router. A router that
exists on another network is refused, naming the fix; a router that already has a NAT gateway is left as it is
(planb's policy: an organisation's own NAT settings, ports or addresses, are not planb's to change).
"""

from __future__ import annotations

import re
import time
from typing import Any, NamedTuple

from ansible_collections.planb.gke.plugins.module_utils.client import api_path
from ansible_collections.planb.gke.plugins.module_utils.credentials import check_auth
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError
from ansible_collections.planb.gke.plugins.module_utils.locations import region_of
from ansible_collections.planb.gke.plugins.module_utils.project_apis import ApiClient
from ansible_collections.planb.gke.plugins.module_utils.project_reads import network_parts
from ansible_collections.planb.gke.plugins.module_utils.reservation import compute_client

Body = dict[str, Any]

#: Compute Engine v1 routers: get, insert, patch (https://cloud.google.com/compute/docs/reference/rest/v1/routers).
DOC_ROUTERS = "https://cloud.google.com/compute/docs/reference/rest/v1/routers"
#: Google's Cloud NAT example for GKE private nodes: a router, then a NAT on it with automatic addresses for every
#: subnet's primary and secondary ranges (the pods' included).
DOC_NAT_GKE = "https://cloud.google.com/nat/docs/gke-example"
#: A Compute Engine resource name (RFC 1035): what routers.insert and the NAT's name take.
_NAME = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")
#: ``Router.description`` of a router planb created, by which teardown knows it may delete it whole
#: (``router_nat_removal``); a router planb only added its NAT to never carries it.
ROUTER_DESCRIPTION = "Cloud NAT for GKE private nodes, created by planb (planb.gke.gcp_router_nat)"


def desired_nat(name: str) -> Body:
    """The RouterNat of DOC_NAT_GKE: automatic external addresses, every subnet's every range."""
    return {
        "name": name,
        "natIpAllocateOption": "AUTO_ONLY",
        "sourceSubnetworkIpRangesToNat": "ALL_SUBNETWORKS_ALL_IP_RANGES",
    }


def wait_region_operation(client: ApiClient, project: str, region: str, op: Body, timeout: float, poll: float) -> None:
    """Until the regional Operation ``op`` is DONE; its error as a GkeError."""
    deadline = time.monotonic() + timeout
    while op.get("status") != "DONE":
        if time.monotonic() > deadline:
            raise GkeError(f"Compute Engine operation {op.get('name')} was not DONE within {timeout} s")
        time.sleep(poll)
        op = client.request("GET", api_path("projects", project, "regions", region, "operations", str(op["name"])))
    errors = (op.get("error") or {}).get("errors") or []
    if errors:
        raise GkeError(f"Compute Engine operation {op.get('name')} failed: " + "; ".join(str(e) for e in errors))


def check_names(router: str, nat: str) -> None:
    """Refuses, before any call, a router or NAT name Compute Engine would refuse."""
    problems = [
        f"{option} {value!r} is not a Compute Engine name: 1-63 lowercase letters, digits or hyphens, starting with a "
        f"letter ({DOC_ROUTERS}); for example planb-nat-router"
        for option, value in (("router", router), ("nat", nat))
        if not _NAME.fullmatch(str(value))
    ]
    if problems:
        raise GkeError("; ".join(problems))


class RouterSite(NamedTuple):
    """Where the module's router is and what it is now: read once, before any write."""

    host: str  # the network's project, which owns the router
    network: str
    region: str
    client: ApiClient
    path: str  # the router's API path
    current: Body | None  # routers.get's answer; None when there is no such router


def read_router(params: dict[str, Any]) -> RouterSite:
    """The names checked, then the router read (``routers.get``) in the network's project and the location's region."""
    check_names(params["router"], params["nat"])
    region = region_of(params["location"])
    check_auth(params)
    host, network = network_parts(params.get("network") or "default", params["project"], "networks")
    client = compute_client(params)
    path = api_path("projects", host, "regions", region, "routers", params["router"])
    return RouterSite(host, network, region, client, path, client.request("GET", path, allow_404=True))


def run_router_nat(module: Any) -> Body:
    """gcp_router_nat: the router with a NAT gateway exists (created, or its NAT added), nothing else changed."""
    params = module.params
    router, nat = params["router"], params["nat"]
    host, network, region, client, path, current = read_router(params)
    timeout, poll = float(params["timeout"]), float(params["poll_interval"])

    def write(method: str, url: str, body: Body) -> None:
        if not module.check_mode:
            wait_region_operation(client, host, region, client.request(method, url, body), timeout, poll)

    if current is None:
        body = {
            "name": router,
            "description": ROUTER_DESCRIPTION,
            "network": f"projects/{host}/global/networks/{network}",
            "nats": [desired_nat(nat)],
        }
        write("POST", api_path("projects", host, "regions", region, "routers"), body)
        return {
            "changed": True,
            "actions": ["create router"],
            "diff": {"before": {}, "after": body},
            "router": body,
            "msg": f"Cloud Router {router} with NAT {nat} in {region} for network {network}",
        }
    on = str(current.get("network") or "").rsplit("/", 1)[-1]
    if on != network:
        raise GkeError(
            f"Cloud Router {router} in {region} of project {host} is on network {on}, not {network}, so its NAT would "
            f"not serve the cluster's nodes. Fix: name another router (gke_cluster_cloud_nat_router; playbooks: "
            f"planb_cloud_nat_router), or delete that one (`gcloud compute routers delete {router} --region {region} "
            f"--project {host}`)"
        )
    if current.get("nats"):
        names = ", ".join(str(n.get("name")) for n in current["nats"])
        return {"changed": False, "actions": [], "router": current, "msg": f"{router} has NAT {names}; left as it is"}
    patch = {"nats": [desired_nat(nat)]}
    write("PATCH", path, patch)
    return {
        "changed": True,
        "actions": ["add nat"],
        "diff": {"before": {"nats": []}, "after": patch},
        "router": {**current, **patch},
        "msg": f"NAT {nat} added to Cloud Router {router}",
    }
