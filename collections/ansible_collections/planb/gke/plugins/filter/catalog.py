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

The facts come from ``module_utils/_generated/profiles.py``, generated from planb's catalog (``make values``); the
naming of a plan's pools and their sizing by slices from ``module_utils/_generated/pool_layout.py``, a generated copy
of the catalog's own rules. So the collection needs no planb Python package. Errors become
AnsibleFilterError naming the input and the fix.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ansible.errors import AnsibleFilterError
from ansible_collections.planb.gke.plugins.module_utils._generated import pool_layout
from ansible_collections.planb.gke.plugins.module_utils._generated.machine_types import FACTS as MACHINE_TYPES
from ansible_collections.planb.gke.plugins.module_utils._generated.profiles import FACTS

PROFILES: dict[str, Any] = FACTS["profiles"]
ALIASES: dict[str, str] = FACTS["aliases"]
PLAN_LABEL: str = pool_layout.PLAN_LABEL


@contextmanager
def _filter_errors(caller: str) -> Iterator[None]:
    """The pool layout's errors as AnsibleFilterError, prefixed with the filter's name."""
    try:
        yield
    except pool_layout.PoolLayoutError as exc:
        raise AnsibleFilterError(f"{caller}: {exc}") from exc


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


def _slices(caller: str, option: str, value: object) -> int:
    with _filter_errors(caller):
        return pool_layout.slice_count(option, value)


def _one_slice(caller: str, profile: str, machine_type: str | None) -> tuple[str, dict[str, Any]]:
    """The canonical profile name and one slice's node pool on ``machine_type`` (default: the profile's)."""
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
    return name, base


def node_pool(
    profile: str,
    slices: int = 1,
    max_nodes: int | None = None,
    flex_start: bool = False,
    machine_type: str | None = None,
) -> dict[str, Any]:
    """Node pool settings for ``slices`` slices of ``profile`` (see the module docstring)."""
    caller = "planb.gke.node_pool"
    name, base = _one_slice(caller, profile, machine_type)
    with _filter_errors(caller):
        nodes = pool_layout.pool_nodes(
            name,
            int(base["nodes_per_slice"]),
            bool(base["multi_host"]),
            slices,
            max_nodes,
            lay_out_with="planb.gke.node_pools",
        )
    if flex_start and not base["flex_start_supported"]:
        offered = sorted({m["generation"] for m in MACHINE_TYPES.values() if m["kind"] == "tpu" and m["flex_start"]})
        machine = MACHINE_TYPES[base["machine_type"]]
        refusal = pool_layout.flex_start_refusal(
            base["generation"], machine.get("flex_start_note"), machine.get("flex_start_url"), offered
        )
        raise AnsibleFilterError(f"{caller}: {refusal}")
    return dict(pool_layout.scale_pool(base, nodes), flex_start=bool(flex_start))


def plan_node_labels(plan: str) -> dict[str, str]:
    """The node labels of every pool of ``plan``: ``{planb.dev/plan: plan}``."""
    with _filter_errors("planb.gke.plan_node_labels"):
        return pool_layout.plan_labels(plan)


def plan_pools(pools: list[str], name: str) -> list[str]:
    """The pools among ``pools`` named by the plan named ``name`` (``name``, ``name-2``, ...), in slice order."""
    return pool_layout.plan_pools(pools, name)


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
    multi_host = bool(_one_slice(caller, profile, machine_type)[1]["multi_host"])

    def pool(pool_slices: int) -> dict[str, Any]:
        return node_pool(profile, pool_slices, flex_start=flex_start, machine_type=machine_type)

    with _filter_errors(caller):
        return pool_layout.lay_out(name, slices, multi_host, plan, pool)


def chart_values(profile: str, slices: int = 1, on_demand_slices: int = 1, dws_slices: int = 1) -> dict[str, Any]:
    """The profile-derived chart values: ``slices`` slices per job, plan A's and plan B's quotas in slices."""
    caller = "planb.gke.chart_values"
    facts = _profile(profile, caller)[1]
    replicas = _slices(caller, "slices", slices)
    on_demand = _slices(caller, "on_demand_slices", on_demand_slices)
    dws = _slices(caller, "dws_slices", dws_slices)
    values: dict[str, Any] = copy.deepcopy(facts["chart_values"])
    values["job"]["workers"]["replicas"] = replicas
    quotas = values["queues"]["quotas"]
    quotas["onDemand"] = pool_layout.scale_quota(quotas["onDemand"], on_demand)
    quotas["dws"] = pool_layout.scale_quota(quotas["dws"], dws)
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
