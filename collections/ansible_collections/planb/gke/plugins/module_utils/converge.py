# planb.gke: the converge skeleton every resource module shares (fetch, compare, act, wait).
"""Converge a GKE resource to its desired body: create, update in place, delete; check mode and diff."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ansible_collections.planb.gke.plugins.module_utils.client import GkeClient, api_path
from ansible_collections.planb.gke.plugins.module_utils.diff import compare
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError

Body = dict[str, Any]
Params = dict[str, Any]
#: (action name, HTTP method, path, body) of one in-place update; GKE applies one change per call.
Call = tuple[str, str, str, Body]
PlanUpdates = Callable[[Params, str, Body, Body, list[str], Body, Body], list[Call]]


def location_path(params: Params) -> str:
    return api_path("projects", params["project"], "locations", params["location"])


def immutable_error(kind: str, name: str, diffs: list[str], table: list[tuple[str, str]]) -> GkeError | None:
    """The error for the first differing path that GKE cannot change in place (``table``: prefix, option)."""
    for path in diffs:
        for prefix, option in table:
            if path.startswith(prefix):
                return GkeError(
                    f"{option} of {kind} {name} cannot be changed in place ({path} differs on GKE). "
                    f"Fix: delete the {kind} and re-run to recreate it (state=absent first, or "
                    f"`playbooks/teardown.yml` for the whole cluster), or keep the current value."
                )
    return None


@dataclass(frozen=True)
class Resource:
    """Where a resource lives and how its module turns differences into update calls."""

    path: str
    what: str
    create_url: str
    body_key: str
    result_key: str
    #: Desired fields that are not compared after creation (e.g. initial sizes).
    ignored: tuple[str, ...]
    plan_updates: PlanUpdates
    #: The node pools whose nodes belong to the resource as GKE returns it (the pool itself, a cluster's pools).
    pools: Callable[[Body], list[Body]]


def node_counts(client: GkeClient, resource: Resource, current: Body) -> list[tuple[str, int]]:
    """(pool name, nodes) of every pool of the resource that has nodes.

    GKE's v1 NodePool has no node count: its nodes are the managed instance groups its
    ``instanceGroupUrls`` name, and each group's ``targetSize`` (Compute Engine API) is their number.
    A pool without instance groups has no nodes. A cluster's deprecated ``currentNodeCount`` counts too.
    """
    held: list[tuple[str, int]] = []
    for pool in resource.pools(current):
        nodes = sum(client.instance_group_size(url, resource.what) for url in pool.get("instanceGroupUrls") or [])
        if nodes:
            held.append((str(pool.get("name", "?")), nodes))
    reported = int(current.get("currentNodeCount") or 0)
    if reported > sum(nodes for _name, nodes in held):
        held.append(("currentNodeCount", reported))
    return held


def check_recreate(params: Params, client: GkeClient, resource: Resource, current: Body) -> None:
    """Raise unless a resource in status ERROR may be deleted: opted in (recreate_on_error) and without nodes."""
    status = current.get("statusMessage") or "GKE gave no status message"
    if not params["recreate_on_error"]:
        raise GkeError(
            f"{resource.what} is in status ERROR ({status}). planb does not delete it on its own (planb's policy: "
            "deleting it could end the jobs on its nodes; recreate_on_error is false). Delete it by hand once it runs "
            "nothing, or set recreate_on_error=true (playbooks: -e planb_recreate_on_error=true) to have it deleted "
            "and recreated while it has no nodes."
        )
    held = node_counts(client, resource, current)
    if held:
        in_pools = sum(nodes for name, nodes in held if name != "currentNodeCount")
        total = max(in_pools, int(current.get("currentNodeCount") or 0))
        detail = ", ".join(f"{name}: {nodes}" for name, nodes in held)
        raise GkeError(
            f"{resource.what} is in status ERROR ({status}) but still has {total} node{'s' if total != 1 else ''} "
            f"({detail}). planb's policy is not to delete a resource that has nodes, even with recreate_on_error, "
            "because the jobs running on them would be lost. Move or finish those workloads, then delete it by "
            "hand (gcloud container ... delete) and re-run, which creates it again."
        )


def converge(module: Any, client: GkeClient, loc: str, resource: Resource, desired: Body) -> Body:
    """absent: delete (and wait). present: a resource in status ERROR is deleted first when recreate_on_error
    and it has no nodes (otherwise the module fails, naming why);
    a missing one is created (only described in check mode); an existing one is compared with ``desired``
    less the ignored fields, and ``plan_updates`` turns the differences into calls, applied one by one."""
    params = module.params

    def result(changed: bool, body: Body, actions: list[str], diff: Body | None = None) -> Body:
        out: Body = {"changed": changed}
        if diff is not None:
            out["diff"] = diff
        out[resource.result_key] = body
        out["actions"] = actions
        out["operations"] = client.operations
        return out

    current = client.get(resource.path) if module.check_mode else client.settle(resource.path, resource.what)

    if params["state"] == "absent":
        if current is None:
            return result(False, {}, [])
        diff = {"before": {"name": params["name"], "status": current.get("status")}, "after": {}}
        if not module.check_mode:
            op = client.request("DELETE", resource.path)
            if params["wait"]:
                client.wait(op, loc, resource.what)
        return result(True, {}, ["delete"], diff)

    actions: list[str] = []
    if current is not None and current.get("status") == "ERROR":
        check_recreate(params, client, resource, current)
        actions.append("delete (status ERROR, no nodes)")
        if not module.check_mode:
            client.wait(client.request("DELETE", resource.path), loc, resource.what)
        current = None
    if current is None:
        actions.append("create")
        diff = {"before": {}, "after": desired}
        if module.check_mode:
            return result(True, desired, actions, diff)
        op = client.request("POST", resource.create_url, {resource.body_key: desired})
        if params["wait"]:
            client.wait(op, loc, resource.what)
        return result(True, client.get(resource.path) or {}, actions, diff)

    compared = {k: v for k, v in desired.items() if k not in resource.ignored}
    diffs, before, after = compare(compared, current)
    calls = resource.plan_updates(params, resource.path, desired, current, diffs, before, after)
    if not calls:
        return result(False, current, [])
    actions += [call[0] for call in calls]
    if not module.check_mode:
        for _action, method, url, call_body in calls:
            client.wait(client.request(method, url, call_body), loc, resource.what)
    return result(True, client.get(resource.path) or current, actions, {"before": before, "after": after})


def main_wrapper(module: Any, runner: Callable[..., Body], *args: Any) -> None:
    """Run the logic and turn GkeError into fail_json; summarise the operations that were waited for."""
    try:
        result = runner(module, *args)
    except GkeError as exc:
        module.fail_json(msg=str(exc))
        return
    slow = [o for o in result.get("operations") or [] if o.get("polls", 0) > 0]
    if slow:
        summary = ", ".join(f"{o['operationType']} {o['polls']} polls/{o['elapsed_s']}s" for o in slow)
        result["msg"] = f"waited for GKE operations: {summary}"
    module.exit_json(**result)
