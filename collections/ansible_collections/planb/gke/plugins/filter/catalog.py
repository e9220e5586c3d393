# planb.gke: filters over planb's accelerator catalog, from the facts generated into this collection.
"""Ansible filters: one accelerator profile name gives the node pool and chart values, never typed by hand.

``planb.gke.node_pool``: node pool settings for ``slices`` slices of a profile::

    {{ 'tpu-v6e-4x4' | planb.gke.node_pool(slices=1) }}
    {{ planb_profile | planb.gke.node_pool(slices=2, flex_start=true) }}
    {{ 'tpu-v5e-2x4' | planb.gke.node_pool(machine_type='ct5lp-hightpu-4t') }}

Arguments: ``slices`` (int >= 1, default 1), ``max_nodes`` (a whole number of slices; default slices x
nodes per slice), ``flex_start`` (bool; refused for generations GKE offers no flex-start on),
``machine_type`` (another machine type of the generation that forms the same topology).

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
from collections.abc import Callable
from typing import Any

from ansible.errors import AnsibleFilterError
from ansible_collections.planb.gke.plugins.module_utils.machine_types import FACTS as MACHINE_TYPES
from ansible_collections.planb.gke.plugins.module_utils.profiles import FACTS

PROFILES: dict[str, Any] = FACTS["profiles"]
ALIASES: dict[str, str] = FACTS["aliases"]


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
    if flex_start and not base["flex_start_supported"]:
        offered = sorted({m["generation"] for m in MACHINE_TYPES.values() if m["kind"] == "tpu" and m["flex_start"]})
        raise AnsibleFilterError(
            f"{caller}: flex-start (DWS queued provisioning) is not offered by GKE for TPU {base['generation']}; "
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
        return {"node_pool": node_pool, "chart_values": chart_values}
