# planb.gke: filters over planb's accelerator catalog, from the facts generated into this collection.
"""Ansible filters: one accelerator profile name gives the node pool and chart values, never typed by hand.

``planb.gke.node_pools``: the node pools of a plan with ``slices`` slices of a profile, one pool per
multi-host TPU slice (GKE cannot add nodes to a multi-host TPU slice pool; a new slice is a new pool:
https://cloud.google.com/kubernetes-engine/docs/concepts/tpus), one pool of ``slices`` nodes for a
single-host profile::

    {{ 'tpu-v6e-4x4' | planb.gke.node_pools(name='on-demand-pool', slices=2, plan='on-demand') }}
    -> pools on-demand-pool and on-demand-pool-2, max 4 nodes each, labels {planb.dev/plan: on-demand}

Names: slice 1 is ``name`` itself, slice k >= 2 is ``name-k``. Each pool is ``node_pool``'s dict plus
``name``, ``index`` (slice number from 1), ``plan``, ``plan_slices`` and ``labels`` (the pool's
config.labels).

``planb.gke.plan_pools``: which of a list of pool names the plan named ``name`` owns, in slice order::

    {{ ['default-pool', 'on-demand-pool-2', 'on-demand-pool'] | planb.gke.plan_pools('on-demand-pool') }}
    -> ['on-demand-pool', 'on-demand-pool-2']

``planb.gke.plan_node_labels``: the node labels of a plan's pools, ``{planb.dev/plan: <plan>}``; the
plan's Kueue ResourceFlavor selects them.

``planb.gke.node_pool``: node pool settings for ``slices`` slices of a profile in one pool::

    {{ 'tpu-v6e-4x4' | planb.gke.node_pool(slices=1) }}
    {{ 'tpu-v6e-2x4' | planb.gke.node_pool(slices=2, flex_start=true) }}
    {{ 'tpu-v5e-2x4' | planb.gke.node_pool(machine_type='ct5lp-hightpu-4t') }}

Arguments: ``slices`` (int >= 1, default 1; exactly 1 for a multi-host profile), ``max_nodes`` (a whole
number of slices; default slices x nodes per slice; one slice's hosts for a multi-host profile),
``flex_start`` (bool; refused for generations GKE offers no flex-start on), ``machine_type`` (another
machine type of the generation that forms the same topology).

Returned keys (stable; the roles depend on them): ``profile`` (canonical name: aliases such as tpu-v6e-16
resolve to tpu-v6e-4x4), ``kind`` (tpu | gpu), ``generation``, ``machine_type``, ``tpu_topology`` (None for
GPU), ``placement_policy_required`` (TPU7x multi-host: the topology goes in a workload policy),
``gke_accelerator``, ``resource_name``, ``accelerator_count`` (per node), ``hosts_per_slice``,
``nodes_per_slice``, ``chips_per_slice``, ``multi_host``, ``slices``, ``min_nodes`` (0), ``initial_nodes``
(0), ``max_nodes``, ``total_nodes``, ``total_chips``, ``flex_start`` (as asked), ``flex_start_supported``,
``node_labels`` (labels GKE sets on the nodes), ``doc_url``.

``planb.gke.chart_values``: the profile-derived values of charts/planb (what ``planb values`` prints)::

    {{ 'tpu-v6e-4x4' | planb.gke.chart_values(slices=1, on_demand_slices=2) }}

The facts come from ``module_utils/profiles.py``, generated from planb's catalog (``make values``), so the
collection needs no planb Python package. Errors become AnsibleFilterError naming the input and the fix.
"""

from __future__ import annotations

import copy
import difflib
import re
from collections.abc import Callable
from typing import Any

from ansible.errors import AnsibleFilterError
from ansible_collections.planb.gke.plugins.module_utils.machine_types import FACTS as MACHINE_TYPES
from ansible_collections.planb.gke.plugins.module_utils.profiles import FACTS

PROFILES: dict[str, Any] = FACTS["profiles"]
ALIASES: dict[str, str] = FACTS["aliases"]
PLAN_LABEL: str = FACTS["plan_label"]
MULTI_HOST_DOC_URL: str = FACTS["multi_host_doc_url"]

_POOL_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$")
_LABEL_VALUE = re.compile(r"^[a-z0-9]([-a-z0-9_.]{0,61}[a-z0-9])?$")
_SUFFIX = re.compile(r"^-([2-9]|[1-9][0-9]+)$")


def _profile(name: str, caller: str) -> tuple[str, dict[str, Any]]:
    canonical = ALIASES.get(name, name)
    found = PROFILES.get(canonical)
    if found is None:
        close = difflib.get_close_matches(str(name), [*PROFILES, *ALIASES], n=1, cutoff=0.6)
        hint = f"did you mean {ALIASES.get(close[0], close[0])!r}? " if close else ""
        raise AnsibleFilterError(
            f"{caller}: unknown profile {name!r}: {hint}valid profiles: {', '.join(PROFILES)} "
            "(`planb profiles` describes each)"
        )
    return canonical, found


def _positive(caller: str, option: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise AnsibleFilterError(f"{caller}: {option} must be a whole number of at least 1, got {value!r}")
    if value < 1:
        raise AnsibleFilterError(f"{caller}: {option} must be at least 1, got {value}")
    return value


def node_pool(
    profile: str,
    slices: int = 1,
    max_nodes: int | None = None,
    flex_start: bool = False,
    machine_type: str | None = None,
) -> dict[str, Any]:
    """Node pool settings for ``slices`` slices of ``profile`` (see the module docstring)."""
    caller = "planb.gke.node_pool"
    name, facts = _profile(profile, caller)
    pools: dict[str, Any] = facts["node_pools"]
    default = pools[facts["machine_type"]]
    chosen = machine_type or facts["machine_type"]
    base = pools.get(chosen)
    if base is None:
        raise AnsibleFilterError(
            f"{caller}: machine type {chosen!r} does not form profile {name} "
            f"({default['tpu_topology'] or default['machine_type']}); machine types that do: {', '.join(pools)}"
        )
    per = int(base["nodes_per_slice"])
    nodes = _positive(caller, "slices", slices) * per
    if max_nodes is not None:
        nodes = _positive(caller, "max_nodes", max_nodes)
        if nodes % per:
            lower = nodes - nodes % per
            nearest = f"{lower} or {lower + per}" if lower else f"{per}"
            raise AnsibleFilterError(
                f"{caller}: max_nodes {nodes} is not a multiple of the {per} nodes of one {name} slice "
                f"(GKE scales a multi-host TPU slice atomically): use {nearest}"
            )
    if base["multi_host"] and nodes != per:
        what = f"slices {nodes // per}" if max_nodes is None else f"max_nodes {nodes}"
        raise AnsibleFilterError(
            f"{caller}: {what}: a node pool of multi-host profile {name} holds exactly one slice "
            f"({per} nodes): GKE cannot add nodes to a multi-host TPU slice node pool, each further slice is a "
            f"new node pool ({MULTI_HOST_DOC_URL}); lay out K slices with planb.gke.node_pools, which makes K pools"
        )
    if flex_start and not base["flex_start_supported"]:
        offered = sorted({m["generation"] for m in MACHINE_TYPES.values() if m["kind"] == "tpu" and m["flex_start"]})
        machine = MACHINE_TYPES[base["machine_type"]]
        raise AnsibleFilterError(
            f"{caller}: flex-start (DWS queued provisioning) is not offered by GKE for TPU {base['generation']} "
            f"({machine.get('flex_start_note')}; {machine.get('flex_start_url')}); "
            f"choose a generation that offers it: {', '.join(offered)}"
        )
    return dict(
        base,
        slices=nodes // per,
        max_nodes=nodes,
        total_nodes=nodes,
        total_chips=nodes * int(base["accelerator_count"]),
        flex_start=bool(flex_start),
    )


def _pool_names(caller: str, name: object, count: int) -> list[str]:
    if not isinstance(name, str) or not _POOL_NAME.match(name):
        raise AnsibleFilterError(
            f"{caller}: node pool name {name!r} must be 1-40 lowercase letters, digits or hyphens, start with a "
            "letter and end with a letter or digit"
        )
    names = [name] + [f"{name}-{k}" for k in range(2, count + 1)]
    if len(names[-1]) > 40:
        room = 40 - len(f"-{count}")
        raise AnsibleFilterError(
            f"{caller}: node pool name {names[-1]!r} of slice {count} is longer than GKE's 40 characters: shorten "
            f"the plan's pool name {name!r} to at most {room} characters"
        )
    return names


def plan_node_labels(plan: str) -> dict[str, str]:
    """The node labels of every pool of ``plan``: ``{planb.dev/plan: plan}``."""
    if not isinstance(plan, str) or not _LABEL_VALUE.match(plan):
        raise AnsibleFilterError(
            f"planb.gke.plan_node_labels: plan {plan!r} must be a Kubernetes label value: at most 63 lowercase "
            "letters, digits, '-', '_' or '.', starting and ending with a letter or digit (planb's plans: "
            "on-demand, dws)"
        )
    return {PLAN_LABEL: plan}


def _plan_pool_index(name: str, pool: str) -> int | None:
    if pool == name:
        return 1
    if not pool.startswith(name):
        return None
    suffix = pool[len(name) :]
    return int(suffix[1:]) if _SUFFIX.match(suffix) else None


def plan_pools(pools: list[str], name: str) -> list[str]:
    """The pools among ``pools`` named by the plan named ``name`` (``name``, ``name-2``, ...), in slice order."""
    ours = [(index, pool) for pool in pools if (index := _plan_pool_index(name, str(pool))) is not None]
    return [pool for _index, pool in sorted(ours)]


def node_pools(
    profile: str,
    name: str,
    slices: int = 1,
    plan: str = "on-demand",
    flex_start: bool = False,
    machine_type: str | None = None,
) -> list[dict[str, Any]]:
    """The node pools of a plan with ``slices`` slices of ``profile`` (see the module docstring)."""
    caller = "planb.gke.node_pools"
    total = _positive(caller, "slices", slices)
    labels = plan_node_labels(plan)
    one = node_pool(profile, 1, flex_start=flex_start, machine_type=machine_type)
    names = _pool_names(caller, name, total if one["multi_host"] else 1)
    layout = [(pool, 1) for pool in names] if one["multi_host"] else [(names[0], total)]
    out = []
    for index, (pool, pool_slices) in enumerate(layout, start=1):
        settings = node_pool(profile, pool_slices, flex_start=flex_start, machine_type=machine_type)
        settings.update(name=pool, index=index, plan=plan, plan_slices=total, labels=dict(labels))
        out.append(settings)
    return out


def _scale(quota: dict[str, Any], slices: int) -> None:
    """A one-slice quota (cpu, memory 'NGi', accelerator) made ``slices`` slices, in place."""
    quota["cpu"] *= slices
    quota["memory"] = f"{int(quota['memory'].removesuffix('Gi')) * slices}Gi"
    quota["accelerator"] *= slices


def chart_values(profile: str, slices: int = 1, on_demand_slices: int = 1, dws_slices: int = 1) -> dict[str, Any]:
    """The profile-derived chart values: ``slices`` slices per job, plan A's and plan B's quotas in slices."""
    caller = "planb.gke.chart_values"
    facts = _profile(profile, caller)[1]
    replicas = _positive(caller, "slices", slices)
    on_demand = _positive(caller, "on_demand_slices", on_demand_slices)
    dws = _positive(caller, "dws_slices", dws_slices)
    values: dict[str, Any] = copy.deepcopy(facts["chart_values"])
    values["job"]["workers"]["replicas"] = replicas
    _scale(values["queues"]["quotas"]["onDemand"], on_demand)
    _scale(values["queues"]["quotas"]["dws"], dws)
    return values


class FilterModule:
    """planb.gke catalog filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "node_pool": node_pool,
            "node_pools": node_pools,
            "plan_pools": plan_pools,
            "plan_node_labels": plan_node_labels,
            "chart_values": chart_values,
        }
