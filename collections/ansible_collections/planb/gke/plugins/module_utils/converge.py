# planb.gke: the converge skeleton every resource module shares (fetch, compare, act, wait).
"""Converge a GKE resource to its desired body: create, update in place, delete; check mode and diff."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ansible_collections.planb.gke.plugins.module_utils.client import GkeClient, api_path
from ansible_collections.planb.gke.plugins.module_utils.diff import compare
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError

Body = dict[str, Any]
Params = dict[str, Any]
#: (action name, HTTP method, path, body) of one in-place update; GKE applies one change per call.
Call = tuple[str, str, str, Body]
#: What a module plans for its resource as GKE returns it: (differing paths, diff before, diff after, the calls).
Plan = tuple[list[str], Body, Body, list[Call]]
#: The updates a module makes of its differences: (path, desired, current, differing paths, before, after).
PlanUpdates = Callable[[str, Body, Body, list[str], Body, Body], list[Call]]

#: Why a resource in status ERROR is kept: recreate_on_error is false.
KEPT_IN_ERROR = (
    "{what} is in status ERROR ({status}). planb does not delete it on its own (planb's policy: deleting it could end "
    "the jobs on its nodes; recreate_on_error is false). Delete it by hand once it runs nothing, or set "
    "recreate_on_error=true (playbooks: -e planb_recreate_on_error=true) to have it deleted and recreated while it "
    "has no nodes."
)
#: Why a resource in status ERROR is kept even with recreate_on_error: it has nodes.
KEPT_WITH_NODES = (
    "{what} is in status ERROR ({status}) but still has {total} node{s} ({detail}). planb's policy is not to delete a "
    "resource that has nodes, even with recreate_on_error, because the jobs running on them would be lost. Move or "
    "finish those workloads, then delete it by hand (gcloud container ... delete) and re-run, which creates it again."
)


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


def plan_updates(updates: PlanUpdates, ignored: tuple[str, ...], path: str, desired: Body, current: Body) -> Plan:
    """The plan of ``updates`` for ``desired`` (less the ``ignored`` fields) against what GKE returns."""
    compared = {k: v for k, v in desired.items() if k not in ignored}
    diffs, before, after = compare(compared, current)
    return diffs, before, after, updates(path, desired, current, diffs, before, after)


class Goal(Protocol):
    """What a converge is asked: the resource present or absent, waited for or not, recreated on error or not."""

    @property
    def name(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def wait(self) -> bool: ...
    @property
    def recreate_on_error(self) -> bool: ...
    @property
    def check_mode(self) -> bool: ...


@dataclass(frozen=True)
class Resource:
    """Where a resource lives and how its module plans the updates of what differs."""

    path: str
    what: str
    #: projects/P/locations/L: where the resource's operations are read.
    location: str
    create_url: str
    body_key: str
    result_key: str
    #: The module's plan for the resource as GKE returns it (plan_updates with the module's updates).
    plan: Callable[[Body], Plan]
    #: The node pools whose nodes belong to the resource as GKE returns it (the pool itself, a cluster's pools).
    pools: Callable[[Body], list[Body]]
    #: What the module checks on GKE before it acts on a resource it wants present, given the client and the resource
    #: as GKE returns it (None when missing); raises GkeError (a node pool's: its reservation and its cluster).
    check: Callable[[GkeClient, Body | None], None] = lambda _client, _current: None


def converge(goal: Goal, client: GkeClient, resource: Resource, desired: Body) -> Body:
    """absent: delete (and wait). present: a resource in status ERROR is deleted first when recreate_on_error
    and it has no nodes (otherwise the module fails, naming why);
    a missing one is created (only described in check mode); an existing one is planned against (``resource.plan``:
    its differences from ``desired``, turned into calls), and the calls are applied one by one."""

    def result(changed: bool, body: Body, actions: list[str], diff: Body | None = None) -> Body:
        out: Body = {"changed": changed}
        if diff is not None:
            out["diff"] = diff
        out[resource.result_key] = body
        out["actions"] = actions
        out["operations"] = client.operations
        return out

    loc, what = resource.location, resource.what
    current = client.get(resource.path) if goal.check_mode else client.settle(resource.path, what)

    if goal.state == "absent":
        if current is None:
            return result(False, {}, [])
        diff = {"before": {"name": goal.name, "status": current.get("status")}, "after": {}}
        if not goal.check_mode:
            op = client.request("DELETE", resource.path)
            if goal.wait:
                client.wait(op, loc, what)
        return result(True, {}, ["delete"], diff)

    resource.check(client, current)
    actions: list[str] = []
    if current is not None and current.get("status") == "ERROR":
        status = current.get("statusMessage") or "GKE gave no status message"
        if not goal.recreate_on_error:
            raise GkeError(KEPT_IN_ERROR.format(what=what, status=status))
        # GKE's v1 NodePool has no node count: its nodes are the managed instance groups its instanceGroupUrls
        # name, each group's targetSize (Compute Engine API) their number; a pool without groups has none. A
        # cluster's deprecated currentNodeCount counts too.
        held: list[tuple[str, int]] = []
        for pool in resource.pools(current):
            nodes = sum(client.instance_group_size(url, what) for url in pool.get("instanceGroupUrls") or [])
            if nodes:
                held.append((str(pool.get("name", "?")), nodes))
        reported = int(current.get("currentNodeCount") or 0)
        if reported > sum(nodes for _name, nodes in held):
            held.append(("currentNodeCount", reported))
        if held:
            in_pools = sum(nodes for name, nodes in held if name != "currentNodeCount")
            total = max(in_pools, reported)
            detail = ", ".join(f"{name}: {nodes}" for name, nodes in held)
            plural = "s" if total != 1 else ""
            raise GkeError(KEPT_WITH_NODES.format(what=what, status=status, total=total, s=plural, detail=detail))
        actions.append("delete (status ERROR, no nodes)")
        if not goal.check_mode:
            client.wait(client.request("DELETE", resource.path), loc, what)
        current = None
    if current is None:
        actions.append("create")
        diff = {"before": {}, "after": desired}
        if goal.check_mode:
            return result(True, desired, actions, diff)
        op = client.request("POST", resource.create_url, {resource.body_key: desired})
        if goal.wait:
            client.wait(op, loc, what)
        return result(True, client.get(resource.path) or {}, actions, diff)

    _diffs, before, after, calls = resource.plan(current)
    if not calls:
        return result(False, current, [])
    actions += [call[0] for call in calls]
    if not goal.check_mode:
        for _action, method, url, call_body in calls:
            client.wait(client.request(method, url, call_body), loc, what)
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
