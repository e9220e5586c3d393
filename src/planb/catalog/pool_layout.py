"""How a plan's slices become node pools: the pools' names, which pools a plan owns, and each pool's size.

A plan with K slices of a profile is a list of node pools:

* **Multi-host TPU profile** (e.g. tpu-v6e-4x4, 4 hosts): K pools of exactly one slice each (0..hosts
  nodes). GKE cannot add nodes to a multi-host TPU slice node pool; a further slice is a further pool
  (DOC_TPUS).
* **Single-host profile** (one VM per slice, every GPU profile): one pool that autoscales by nodes, max K.

Slice 1's pool keeps the plan's pool name, slice k (k >= 2) is ``<name>-<k>``: on-demand-pool,
on-demand-pool-2, on-demand-pool-3. Every pool of a plan carries the node label ``planb.dev/plan=<plan>``,
which the plan's Kueue ResourceFlavor selects. A pool of n slices has n x nodes per slice nodes, a plan's
quota of n slices n times one slice's.

This file is the one hand-written copy of these rules. planb's catalog (``planb.catalog.nodepool``,
``planb.catalog.values``) imports it; ``make values`` copies it verbatim into the planb.gke collection
(``plugins/module_utils/_generated/pool_layout.py``), whose filters use the copy, so it imports nothing but the
standard library. Errors are ``PoolLayoutError`` (``SliceCountError`` for counts); each caller turns them
into its own error type, keeping the message.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

#: "About TPUs in GKE": multi-host TPU slice node pools are atomic and immutable; a new slice is a new pool.
DOC_TPUS = "https://cloud.google.com/kubernetes-engine/docs/concepts/tpus"
#: The node label every pool of a plan carries (node pool config.labels); the plan's flavor selects it.
PLAN_LABEL = "planb.dev/plan"
#: Plan A and plan B: the values of PLAN_LABEL (and the names of their Kueue ResourceFlavors).
ON_DEMAND = "on-demand"
DWS = "dws"
#: GKE's longest node pool name.
POOL_NAME_MAX = 40
#: GKE's node pool auto-creation page: autoscaling is slower in clusters of more than 200 node pools.
DOC_NODE_POOL_COUNT = "https://cloud.google.com/kubernetes-engine/docs/how-to/node-auto-provisioning#limitations"
#: GKE's quotas and limits: at most 1,000 nodes per node pool per zone.
DOC_GKE_LIMITS = "https://cloud.google.com/kubernetes-engine/quotas"
#: The most slices one plan (or one job) may have, planb's policy: a multi-host plan is one node pool per
#: slice, and GKE says a cluster of more than 200 node pools autoscales with more latency (DOC_NODE_POOL_COUNT);
#: a single-host plan's slices are the nodes of one pool, well inside GKE's 1,000 per zone (DOC_GKE_LIMITS).
MAX_SLICES = 200

#: GKE node pool names: RFC 1035 labels of at most 40 characters.
_POOL_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$")
_LABEL_VALUE = re.compile(r"^[a-z0-9]([-a-z0-9_.]{0,61}[a-z0-9])?$")
#: The suffix of slice k >= 2's pool: -2, -3, ..., -10, never -0, -1 or -02.
_SUFFIX = re.compile(r"^-([2-9]|[1-9][0-9]+)$")

Settings = dict[str, Any]


class PoolLayoutError(ValueError):
    """A pool name or plan name GKE or Kubernetes would refuse; the message names the input and the fix."""


class SliceCountError(PoolLayoutError):
    """A count (slices, nodes) that is zero, negative, not a number or not a whole number of slices."""


def positive(option: str, value: object) -> int:
    """``value`` as an int of at least 1, else SliceCountError naming ``option``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise SliceCountError(f"{option} must be a whole number of at least 1, got {value!r}")
    if value < 1:
        raise SliceCountError(f"{option} must be at least 1, got {value}")
    return value


def slice_count(option: str, value: object) -> int:
    """``value`` as a number of slices: an int from 1 to MAX_SLICES, else SliceCountError naming ``option``."""
    count = positive(option, value)
    if count > MAX_SLICES:
        raise SliceCountError(
            f"{option} {count} is more than {MAX_SLICES}: planb's policy, because a multi-host plan is one node pool "
            f"per slice and GKE autoscales clusters of more than {MAX_SLICES} node pools with more latency "
            f"({DOC_NODE_POOL_COUNT}); split the capacity over more plans or clusters"
        )
    return count


def whole_slices(option: str, nodes: object, nodes_per_slice: int, profile: str) -> int:
    """``nodes`` as a node count that is a whole number of slices of ``nodes_per_slice`` nodes of ``profile``."""
    count = positive(option, nodes)
    per = nodes_per_slice
    if count % per:
        lower = count - count % per
        upper = lower + per
        nearest = f"{lower} or {upper}" if lower else f"{upper}"
        raise SliceCountError(
            f"{option} {count} is not a multiple of the {per} nodes of one {profile} slice "
            f"(GKE scales a multi-host TPU slice atomically): use {nearest}"
        )
    return count


def pool_nodes(
    profile: str,
    nodes_per_slice: int,
    multi_host: bool,
    slices: object = 1,
    max_nodes: object = None,
    *,
    lay_out_with: str,
) -> int:
    """The nodes of one pool of ``slices`` slices of ``profile`` (or of ``max_nodes``, a whole number of slices).

    A multi-host pool holds exactly one slice: more is refused, naming ``lay_out_with`` (the caller's way to
    lay out K slices as K pools).
    """
    count = slice_count("slices", slices)
    nodes = count * nodes_per_slice
    if max_nodes is not None:
        nodes = whole_slices("max_nodes", max_nodes, nodes_per_slice, profile)
    if multi_host and nodes != nodes_per_slice:
        what = f"slices {count}" if max_nodes is None else f"max_nodes {nodes}"
        raise SliceCountError(
            f"{what}: a node pool of multi-host profile {profile} holds exactly one slice "
            f"({nodes_per_slice} nodes): GKE cannot add nodes to a multi-host TPU slice node pool, each "
            f"further slice is a new node pool ({DOC_TPUS}); lay out K slices with {lay_out_with}, "
            "which makes K pools"
        )
    return nodes


def flex_start_refusal(generation: str, note: object, url: object, offered: list[str]) -> str:
    """Why a pool of TPU ``generation`` cannot use flex-start (GKE's ``note`` and ``url``), naming the ``offered``."""
    return (
        f"flex-start (DWS queued provisioning) is not offered by GKE for TPU {generation} "
        f"({note}; {url}); choose a generation that offers it: {', '.join(offered)}"
    )


def scale_pool(one_slice: Settings, nodes: int) -> Settings:
    """One slice's node pool settings made a pool of ``nodes`` nodes (a whole number of slices)."""
    return dict(
        one_slice,
        slices=nodes // int(one_slice["nodes_per_slice"]),
        max_nodes=nodes,
        total_nodes=nodes,
        total_chips=nodes * int(one_slice["accelerator_count"]),
    )


def scale_quota(one_slice: Settings, slices: int) -> Settings:
    """One slice's quota (cpu, memory 'NGi', accelerator) made the quota of ``slices`` slices."""
    return {
        "cpu": one_slice["cpu"] * slices,
        "memory": f"{int(str(one_slice['memory']).removesuffix('Gi')) * slices}Gi",
        "accelerator": one_slice["accelerator"] * slices,
    }


def pool_names(name: object, count: object) -> list[str]:
    """The names of a plan's ``count`` pools: ``name``, ``name-2``, ..., ``name-<count>``."""
    if not isinstance(name, str) or not _POOL_NAME.fullmatch(name):
        raise PoolLayoutError(
            f"node pool name {name!r} must be 1-40 lowercase letters, digits or hyphens, start with a letter "
            "and end with a letter or digit"
        )
    total = slice_count("slices", count)
    names = [name] + [f"{name}-{k}" for k in range(2, total + 1)]
    if len(names[-1]) > POOL_NAME_MAX:
        room = POOL_NAME_MAX - len(f"-{total}")
        raise PoolLayoutError(
            f"node pool name {names[-1]!r} of slice {total} is longer than GKE's 40 characters: shorten the "
            f"plan's pool name {name!r} to at most {room} characters"
        )
    return names


def plan_pool_index(name: str, pool: str) -> int | None:
    """Which slice of the plan named ``name`` the pool ``pool`` is (1 for ``name``), None if not the plan's."""
    if pool == name:
        return 1
    if not pool.startswith(name):
        return None
    suffix = pool[len(name) :]
    return int(suffix[1:]) if _SUFFIX.fullmatch(suffix) else None


def plan_pools(pools: list[str], name: str) -> list[str]:
    """The pools among ``pools`` that are named by the plan named ``name``, in slice order."""
    ours = [(index, pool) for pool in pools if (index := plan_pool_index(name, str(pool))) is not None]
    return [pool for _index, pool in sorted(ours)]


def plan_labels(plan: object) -> dict[str, str]:
    """The node labels every pool of ``plan`` carries (its config.labels): ``{planb.dev/plan: plan}``."""
    if not isinstance(plan, str) or not _LABEL_VALUE.fullmatch(plan):
        raise PoolLayoutError(
            f"plan {plan!r} must be a Kubernetes label value: at most 63 lowercase letters, digits, '-', '_' "
            f"or '.', starting and ending with a letter or digit (planb's plans: {ON_DEMAND}, {DWS})"
        )
    return {PLAN_LABEL: plan}


def lay_out(
    name: object, slices: object, multi_host: bool, plan: object, pool: Callable[[int], Settings]
) -> list[Settings]:
    """The pools of a plan with ``slices`` slices, named from ``name``.

    ``pool(n)`` gives the settings of a pool of n slices. Multi-host: ``slices`` pools of one slice each;
    single-host: one pool of ``slices`` slices. Each pool's settings gain ``name``, ``index`` (its slice
    number from 1), ``plan``, ``plan_slices`` (the plan's slices) and ``labels`` (``plan_labels(plan)``).
    """
    total = slice_count("slices", slices)
    labels = plan_labels(plan)
    names = pool_names(name, total if multi_host else 1)
    layout = [(pool_name, 1) for pool_name in names] if multi_host else [(names[0], total)]
    out = []
    for index, (pool_name, pool_slices) in enumerate(layout, start=1):
        settings = pool(pool_slices)
        settings.update(name=pool_name, index=index, plan=labels[PLAN_LABEL], plan_slices=total, labels=dict(labels))
        out.append(settings)
    return out
