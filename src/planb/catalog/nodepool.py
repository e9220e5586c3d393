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

Pool names come from the plan's pool name (the tutorial's ONDEMAND_NODEPOOL / DWS_NODEPOOL): slice 1
keeps the name itself, slice k (k >= 2) is ``<name>-<k>``: on-demand-pool, on-demand-pool-2,
on-demand-pool-3. So the tutorial's single slice keeps the name ``on-demand-pool``, and growing from K to
K+1 slices only adds ``<name>-<K+1>``. Every pool of a plan carries the node label
``planb.dev/plan=<plan>`` (node pool ``config.labels``), which the plan's Kueue ResourceFlavor
selects, so one flavor covers all of a plan's pools.

The naming and the sizing by slices are ``planb.catalog.pool_layout``'s, the one copy the collection's
filters also run; this module adds the profile's facts and the catalog's error types.
"""

from __future__ import annotations

from typing import Any

from planb.catalog import pool_layout, profiles, tpu
from planb.catalog.errors import layout_errors
from planb.catalog.pool_layout import DOC_TPUS as DOC_TPUS
from planb.catalog.pool_layout import DWS as DWS
from planb.catalog.pool_layout import ON_DEMAND as ON_DEMAND
from planb.catalog.pool_layout import PLAN_LABEL as PLAN_LABEL

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
#: ... and a multi-host TPU group resizes atomically, to 0 or its max only ("zero-or-max"): the group reports
#: ZeroOrMaxNodeScaling from GkeMig.ResizeAtomically(), true for a multi-host TPU MIG (the lines below, and
#: L2153-L2159; "About TPUs in GKE", DOC_TPUS, says the same of the pool). Not cited: orchestrator.go's round-up of a
#: zero-or-max estimate, which sits behind an experiment flag that is off by default.
GKE_AUTOSCALER_ZERO_OR_MAX = (
    "https://github.com/GoogleCloudPlatform/cluster-autoscaler/blob/7d250507339b3a7583b380349f217ea191ff15ff/"
    "pkg/cloudprovider/gke/gke_cloud_provider_impl.go#L1914-L1918"
)


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
    dict, from the facts planb.build.collection generates):

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
    with layout_errors():
        nodes = pool_layout.pool_nodes(
            prof.name, prof.nodes_per_slice, prof.multi_host, slices, max_nodes, lay_out_with="node_pools()"
        )
    if flex_start and not prof.flex_start:
        entry = prof.entry
        assert isinstance(entry, tpu.TpuSlice)  # every GPU entry offers flex-start
        entry.generation.check_flex_start()
    one_slice = {
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
        "slices": 1,
        "min_nodes": 0,
        "initial_nodes": 0,
        "max_nodes": prof.nodes_per_slice,
        "total_nodes": prof.nodes_per_slice,
        "total_chips": prof.nodes_per_slice * prof.chips_per_host,
        "flex_start": flex_start,
        "flex_start_supported": prof.flex_start,
        "node_labels": dict(prof.node_selector),
        "doc_url": prof.doc_url,
    }
    return pool_layout.scale_pool(one_slice, nodes)


def pool_names(name: str, count: int) -> list[str]:
    """The names of a plan's ``count`` pools: ``name``, ``name-2``, ..., ``name-<count>``."""
    with layout_errors():
        return pool_layout.pool_names(name, count)


def plan_pool_index(name: str, pool: str) -> int | None:
    """Which slice of the plan named ``name`` the pool ``pool`` is (1 for ``name``), None if not the plan's."""
    return pool_layout.plan_pool_index(name, pool)


def plan_pools(pools: list[str], name: str) -> list[str]:
    """The pools among ``pools`` that are named by the plan named ``name``, in slice order."""
    return pool_layout.plan_pools(pools, name)


def plan_labels(plan: str) -> dict[str, str]:
    """The node labels every pool of ``plan`` carries (its config.labels): ``{planb.dev/plan: plan}``."""
    with layout_errors():
        return pool_layout.plan_labels(plan)


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

    def pool(pool_slices: int) -> dict[str, Any]:
        return node_pool(profile, pool_slices, flex_start=flex_start, machine_type=machine_type)

    with layout_errors():
        return pool_layout.lay_out(name, slices, prof.multi_host, plan, pool)
