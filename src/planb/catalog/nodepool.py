"""Node pool settings derived from a profile: what the GKE roles need to create plan A / plan B pools."""

from __future__ import annotations

from typing import Any

from planb.catalog import counts, profiles, tpu


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
    """
    prof = profiles.get(profile, machine_type)
    count = counts.positive("slices", slices)
    nodes = count * prof.nodes_per_slice
    if max_nodes is not None:
        nodes = counts.whole_slices("max_nodes", max_nodes, prof)
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
