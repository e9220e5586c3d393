"""Ansible filters over planb's accelerator catalog (src/planb/catalog).

``planb_node_pool``: node pool settings for a profile, so the inventory names a profile and the
GKE roles get machine type, topology and node counts from the catalog, never typed by hand::

    {{ 'tpu-v6e-4x4' | planb_node_pool(slices=1) }}
    {{ planb_profile | planb_node_pool(slices=2, flex_start=true) }}
    {{ 'tpu-v5e-2x4' | planb_node_pool(machine_type='ct5lp-hightpu-4t') }}

Arguments: ``slices`` (int >= 1, default 1), ``max_nodes`` (int, a whole number of slices; default
slices x nodes per slice), ``flex_start`` (bool, default false: refused for generations GKE does
not offer flex-start on), ``machine_type`` (another machine type of the generation that forms the
same topology).

Returned dict (keys are stable; the GKE roles depend on them):

* ``profile`` (str) canonical profile name (aliases such as tpu-v6e-16 resolve to tpu-v6e-4x4)
* ``kind`` ('tpu' | 'gpu'), ``generation`` (e.g. 'v6e', 'a3')
* ``machine_type`` (str) e.g. 'ct6e-standard-4t'
* ``tpu_topology`` (str | None) for --tpu-topology; None for GPU
* ``placement_policy_required`` (bool) TPU7x multi-host: give the topology in a workload policy
  (--placement-policy) instead of --tpu-topology
* ``gke_accelerator`` (str) e.g. 'tpu-v6e-slice', 'nvidia-h100-80gb'
* ``resource_name`` ('google.com/tpu' | 'nvidia.com/gpu')
* ``accelerator_count`` (int) chips / GPUs per node
* ``hosts_per_slice``, ``nodes_per_slice``, ``chips_per_slice`` (int), ``multi_host`` (bool)
* ``slices`` (int), ``min_nodes`` (0), ``initial_nodes`` (0), ``max_nodes`` (int),
  ``total_nodes`` (int, = max_nodes), ``total_chips`` (int)
* ``flex_start`` (bool, as asked), ``flex_start_supported`` (bool)
* ``node_labels`` (dict) labels GKE sets on the nodes (accelerator, TPU topology)
* ``doc_url`` (str) GKE documentation page of the catalog entry

``planb_profile``: the same facts as the chart's values (``planb values``), for templates that
need quotas or RayJob settings: ``{{ 'tpu-v6e-4x4' | planb_profile(slices=1, on_demand_slices=1) }}``.

Errors (unknown profile, bad topology, counts, flex-start) become AnsibleFilterError carrying the
catalog's message, which names the input and the valid choices.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible.errors import AnsibleFilterError

from planb.catalog import CatalogError, chart_values, node_pool


def planb_node_pool(
    profile: str,
    slices: int = 1,
    max_nodes: int | None = None,
    flex_start: bool = False,
    machine_type: str | None = None,
) -> dict[str, Any]:
    try:
        return node_pool(profile, slices, max_nodes=max_nodes, flex_start=flex_start, machine_type=machine_type)
    except CatalogError as exc:
        raise AnsibleFilterError(f"planb_node_pool: {exc}") from exc


def planb_profile(profile: str, slices: int = 1, on_demand_slices: int = 1) -> dict[str, Any]:
    try:
        return chart_values(profile, slices, on_demand_slices)
    except CatalogError as exc:
        raise AnsibleFilterError(f"planb_profile: {exc}") from exc


class FilterModule:
    """planb catalog filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"planb_node_pool": planb_node_pool, "planb_profile": planb_profile}
