"""Node pool settings derived from a profile: what the GKE roles need to create plan A / plan B pools.

A plan (on-demand, dws) with K slices of a profile is a list of node pools (``node_pools``):

* **Multi-host TPU profile** (e.g. tpu-v6e-4x4, 4 hosts): K pools of exactly one slice each
  (autoscaling 0..hosts). GKE's "About TPUs in GKE" page: a multi-host TPU slice node pool is
  atomic and immutable, "you can't add nodes to it ... To add a TPU slice to a GKE cluster, you
  must create a new node pool" (DOC_TPUS); the multislice guide creates one pool per slice
  (DOC_MULTISLICE). For queued provisioning (plan B) the same holds: GKE's autoscaler skips a
  node group whose target size has reached its max and resizes a multi-host TPU group only to
  0 or its max (GKE_AUTOSCALER_MAX_REACHED, GKE_AUTOSCALER_ZERO_OR_MAX), so a multi-host queued
  pool with max = hosts serves one ProvisioningRequest (one slice) at a time: K concurrent DWS
  slices need K queued pools.
* **Single-host profile** (one VM per slice, every GPU profile): one pool that autoscales by
  nodes, max = K nodes.

Pool names come from the plan's pool name (the seed's ONDEMAND_NODEPOOL / DWS_NODEPOOL): slice 1
keeps the name itself, slice k (k >= 2) is ``<name>-<k>``: on-demand-pool, on-demand-pool-2,
on-demand-pool-3. So the seed's single slice keeps the name ``on-demand-pool``, and growing from K to
K+1 slices only adds ``<name>-<K+1>``. Every pool of a plan carries the node label
``planb.dev/plan=<plan>`` (node pool ``config.labels``), which the plan's Kueue ResourceFlavor
selects, so one flavor covers all of a plan's pools.
"""

from __future__ import annotations

import re
from typing import Any

from planb.catalog import counts, profiles, tpu
from planb.catalog.errors import CatalogError, CountError

#: "About TPUs in GKE": multi-host TPU slice node pools are atomic and immutable; a new slice is a new pool.
DOC_TPUS = "https://cloud.google.com/kubernetes-engine/docs/concepts/tpus"
#: GKE's multislice guide: one multi-host TPU slice node pool per slice.
DOC_MULTISLICE = "https://cloud.google.com/kubernetes-engine/docs/how-to/tpu-multislice"
#: Queued provisioning (ProvisioningRequest) on GKE.
DOC_QUEUED = "https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest"
#: GKE's cluster autoscaler (GoogleCloudPlatform/cluster-autoscaler, the one GKE runs): a node group at
#: its max size is skipped for a ProvisioningRequest ("Skipping node group %s - max size (%v) reached") ...
GKE_AUTOSCALER_MAX_REACHED = (
    "https://github.com/GoogleCloudPlatform/cluster-autoscaler/blob/7d250507339b3a7583b380349f217ea191ff15ff/"
    "pkg/provisioningrequests/scaleup/orchestrator.go#L535-L545"
)
#: ... and a zero-or-max group (a multi-host TPU group) is only ever resized to its max size.
GKE_AUTOSCALER_ZERO_OR_MAX = (
    "https://github.com/GoogleCloudPlatform/cluster-autoscaler/blob/7d250507339b3a7583b380349f217ea191ff15ff/"
    "pkg/provisioningrequests/scaleup/orchestrator.go#L645-L660"
)

#: The node label every pool of a plan carries (node pool config.labels); the plan's flavor selects it.
PLAN_LABEL = "planb.dev/plan"
#: Plan A and plan B: the values of PLAN_LABEL (and the names of their Kueue ResourceFlavors).
ON_DEMAND = "on-demand"
DWS = "dws"

#: GKE node pool names: RFC 1035 labels of at most 40 characters.
_POOL_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$")
_LABEL_VALUE = re.compile(r"^[a-z0-9]([-a-z0-9_.]{0,61}[a-z0-9])?$")
_SUFFIX = re.compile(r"^-([2-9]|[1-9][0-9]+)$")


def node_pool(
    profile: str,
    slices: int = 1,
    *,
    max_nodes: int | None = None,
    flex_start: bool = False,
    machine_type: str | None = None,
) -> dict[str, Any]:
    """Node pool settings for ``slices`` slices of ``profile``.

    Keys (all plain YAML types, stable: the Ansible filter ``planb.gke.node_pool`` returns the same
    dict, from the facts planb.catalog.collection generates):

    * ``profile`` (str) canonical profile name; ``kind`` ('tpu' | 'gpu'); ``generation`` (str)
    * ``machine_type`` (str) GKE machine type, e.g. ct6e-standard-4t
    * ``tpu_topology`` (str | None) value for --tpu-topology (TPU only)
    * ``placement_policy_required`` (bool) TPU7x multi-host: the topology goes in a workload policy
      (--placement-policy) instead of --tpu-topology
    * ``gke_accelerator`` (str) node label value (gke-tpu-accelerator / gke-accelerator)
    * ``resource_name`` (str) google.com/tpu | nvidia.com/gpu
    * ``accelerator_count`` (int) chips (TPU) or GPUs per node
    * ``hosts_per_slice`` / ``nodes_per_slice`` / ``chips_per_slice`` (int), ``multi_host`` (bool)
    * ``slices`` (int); ``min_nodes`` (0: both pools scale from zero); ``initial_nodes`` (0);
      ``max_nodes`` (int, a whole number of slices; default slices x nodes_per_slice);
      ``total_nodes`` (= max_nodes); ``total_chips`` (max_nodes x accelerator_count)
    * ``flex_start`` (bool, as asked) and ``flex_start_supported`` (bool)
    * ``node_labels`` (dict[str, str]) labels GKE puts on the nodes (accelerator, topology)
    * ``doc_url`` (str) the GKE page the catalog entry comes from

    A multi-host TPU pool holds exactly one slice (see the module docstring): ``slices`` above 1 (or
    ``max_nodes`` other than one slice's hosts) is refused for it; ``node_pools`` lays out K slices.
    """
    prof = profiles.get(profile, machine_type)
    count = counts.positive("slices", slices)
    nodes = count * prof.nodes_per_slice
    if max_nodes is not None:
        nodes = counts.whole_slices("max_nodes", max_nodes, prof)
    if prof.multi_host and nodes != prof.nodes_per_slice:
        what = f"slices {count}" if max_nodes is None else f"max_nodes {nodes}"
        raise CountError(
            f"{what}: a node pool of multi-host profile {prof.name} holds exactly one slice "
            f"({prof.nodes_per_slice} nodes): GKE cannot add nodes to a multi-host TPU slice node pool, each "
            f"further slice is a new node pool ({DOC_TPUS}); lay out K slices with node_pools(), "
            "which makes K pools"
        )
    if flex_start and not prof.flex_start:
        entry = prof.entry
        assert isinstance(entry, tpu.TpuSlice)  # every GPU entry offers flex-start
        entry.generation.check_flex_start()
    return {
        "profile": prof.name,
        "kind": prof.kind,
        "generation": prof.generation,
        "machine_type": prof.machine_type,
        "tpu_topology": prof.topology,
        "placement_policy_required": prof.uses_placement_policy,
        "gke_accelerator": prof.gke_accelerator,
        "resource_name": prof.resource_name,
        "accelerator_count": prof.chips_per_host,
        "hosts_per_slice": prof.hosts_per_slice,
        "nodes_per_slice": prof.nodes_per_slice,
        "chips_per_slice": prof.chips_per_slice,
        "multi_host": prof.multi_host,
        "slices": nodes // prof.nodes_per_slice,
        "min_nodes": 0,
        "initial_nodes": 0,
        "max_nodes": nodes,
        "total_nodes": nodes,
        "total_chips": nodes * prof.chips_per_host,
        "flex_start": flex_start,
        "flex_start_supported": prof.flex_start,
        "node_labels": dict(prof.node_selector),
        "doc_url": prof.doc_url,
    }


def pool_names(name: str, count: int) -> list[str]:
    """The names of a plan's ``count`` pools: ``name``, ``name-2``, ..., ``name-<count>``."""
    if not _POOL_NAME.match(str(name)):
        raise CatalogError(
            f"node pool name {name!r} must be 1-40 lowercase letters, digits or hyphens, start with a letter "
            "and end with a letter or digit"
        )
    total = counts.positive("slices", count)
    names = [name] + [f"{name}-{k}" for k in range(2, total + 1)]
    if len(names[-1]) > 40:
        room = 40 - len(f"-{total}")
        raise CatalogError(
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
    return int(suffix[1:]) if _SUFFIX.match(suffix) else None


def plan_pools(pools: list[str], name: str) -> list[str]:
    """The pools among ``pools`` that are named by the plan named ``name``, in slice order."""
    ours = [(index, pool) for pool in pools if (index := plan_pool_index(name, str(pool))) is not None]
    return [pool for _index, pool in sorted(ours)]


def plan_labels(plan: str) -> dict[str, str]:
    """The node labels every pool of ``plan`` carries (its config.labels): ``{planb.dev/plan: plan}``."""
    if not _LABEL_VALUE.match(str(plan)):
        raise CatalogError(
            f"plan {plan!r} must be a Kubernetes label value: at most 63 lowercase letters, digits, '-', '_' "
            f"or '.', starting and ending with a letter or digit (planb's plans: {ON_DEMAND}, {DWS})"
        )
    return {PLAN_LABEL: str(plan)}


def node_pools(
    profile: str,
    name: str,
    slices: int = 1,
    *,
    plan: str = ON_DEMAND,
    flex_start: bool = False,
    machine_type: str | None = None,
) -> list[dict[str, Any]]:
    """The node pools of a plan with ``slices`` slices of ``profile``, named from ``name``.

    Multi-host profiles: ``slices`` pools of one slice each (``max_nodes`` = hosts per slice), named
    ``name``, ``name-2``, ...; single-host profiles: one pool ``name`` of max ``slices`` nodes. Each
    pool is ``node_pool()``'s dict plus ``name`` (str), ``index`` (int, its slice number from 1),
    ``plan`` (str), ``plan_slices`` (int, the plan's slices) and ``labels`` (the node pool's
    config.labels: ``{planb.dev/plan: plan}``, which the plan's ResourceFlavor selects). The Ansible
    filter ``planb.gke.node_pools`` returns the same list.
    """
    prof = profiles.get(profile, machine_type)
    total = counts.positive("slices", slices)
    labels = plan_labels(plan)
    # A multi-host pool is one slice; a single-host pool autoscales by nodes, one node per slice.
    names = pool_names(name, total if prof.multi_host else 1)
    layout = [(pool, 1) for pool in names] if prof.multi_host else [(names[0], total)]
    out = []
    for index, (pool, pool_slices) in enumerate(layout, start=1):
        settings = node_pool(profile, pool_slices, flex_start=flex_start, machine_type=machine_type)
        settings.update(name=pool, index=index, plan=str(plan), plan_slices=total, labels=dict(labels))
        out.append(settings)
    return out
