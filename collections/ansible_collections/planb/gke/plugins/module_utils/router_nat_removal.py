# planb.gke: the nodes' Cloud NAT removed at teardown (gcp_router_nat state=absent).
"""What gcp_router_nat made, undone: the Cloud Router it created goes whole, the NAT it added to an organisation's
router goes alone, and nothing else of a router changes.

* A router planb created carries ROUTER_DESCRIPTION (``Router.description``, set by routers.insert): teardown
  deletes it with its NAT (``routers.delete``, DOC_ROUTERS_DELETE).
* On any other router only the NAT of that name with planb's own settings (``router_nat.desired_nat``) goes
  (``routers.patch`` with the router's other NATs, JSON merge replacing the list); planb's policy: a NAT of that name
  with other settings, or the router itself, is the organisation's, because planb never writes either.
* No router, or no NAT of planb's: nothing to do, so a re-run of teardown changes nothing.
"""

from __future__ import annotations

from typing import Any

from ansible_collections.planb.gke.plugins.module_utils.router_nat import (
    ROUTER_DESCRIPTION,
    desired_nat,
    read_router,
    wait_region_operation,
)

Body = dict[str, Any]

DOC_ROUTERS_DELETE = "https://cloud.google.com/compute/docs/reference/rest/v1/routers/delete"


def remove_router_nat(module: Any) -> Body:
    """gcp_router_nat with state=absent: planb's router deleted, or planb's NAT taken off another router."""
    params = module.params
    router, nat = params["router"], params["nat"]
    site = read_router(params)
    host, region, client, path, current = site.host, site.region, site.client, site.path, site.current
    timeout, poll = float(params["timeout"]), float(params["poll_interval"])

    def write(method: str, body: Body | None) -> None:
        if not module.check_mode:
            wait_region_operation(client, host, region, client.request(method, path, body), timeout, poll)

    if current is None:
        return {"changed": False, "actions": [], "router": {}, "msg": f"no Cloud Router {router} in {region}"}
    if current.get("description") == ROUTER_DESCRIPTION:
        write("DELETE", None)
        return {
            "changed": True,
            "actions": ["delete router"],
            "diff": {"before": current, "after": {}},
            "router": {},
            "msg": f"Cloud Router {router} (planb's) and its NAT deleted in {region}",
        }
    nats = list(current.get("nats") or [])
    kept = [n for n in nats if {k: n.get(k) for k in desired_nat(nat)} != desired_nat(nat)]
    if len(kept) == len(nats):
        return {"changed": False, "actions": [], "router": current, "msg": f"{router} has no NAT of planb's"}
    patch = {"nats": kept}
    write("PATCH", patch)
    return {
        "changed": True,
        "actions": ["remove nat"],
        "diff": {"before": {"nats": nats}, "after": patch},
        "router": {**current, **patch},
        "msg": f"NAT {nat} removed from Cloud Router {router}; the router is not planb's and stays",
    }
