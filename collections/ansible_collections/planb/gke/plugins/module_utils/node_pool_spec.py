# planb.gke: gke_node_pool's argument spec (the module and its action plugin, which answers validate_only, share it).
"""The options of planb.gke.gke_node_pool, as AnsibleModule takes them; the module's DOCUMENTATION describes each."""

from __future__ import annotations

from typing import Any

from ansible_collections.planb.gke.plugins.module_utils.accelerators import GPU_DRIVER_VERSIONS
from ansible_collections.planb.gke.plugins.module_utils.args import (
    AUTH_ARGSPEC,
    AUTH_RELATIONS,
    CONVERGE_ARGSPEC,
    TAINT_EFFECTS,
    Relations,
    with_relations,
)

NODE_POOL_ARGSPEC: dict[str, Any] = dict(
    AUTH_ARGSPEC,
    name={"type": "str", "required": True},
    cluster={"type": "str", "required": True},
    location={"type": "str", "required": True},
    state={"type": "str", "choices": ["present", "absent"], "default": "present"},
    machine_type={"type": "str"},
    tpu_topology={"type": "str"},
    placement_policy={"type": "str"},
    initial_node_count={"type": "int", "default": 0},
    autoscaling={
        "type": "dict",
        "options": {
            "enabled": {"type": "bool", "default": True},
            "min_node_count": {"type": "int"},
            "max_node_count": {"type": "int"},
            "total_min_node_count": {"type": "int"},
            "total_max_node_count": {"type": "int"},
            "location_policy": {"type": "str", "choices": ["BALANCED", "ANY"]},
        },
        # GKE's NodePoolAutoscaling counts nodes per zone (min/max) or in all zones (total_min/max), not both.
        "mutually_exclusive": [
            ("min_node_count", "total_min_node_count"),
            ("min_node_count", "total_max_node_count"),
            ("max_node_count", "total_min_node_count"),
            ("max_node_count", "total_max_node_count"),
        ],
    },
    reservation_affinity={"type": "str", "choices": ["NO_RESERVATION", "ANY_RESERVATION", "SPECIFIC_RESERVATION"]},
    reservation={"type": "str"},
    reservation_require_specific={"type": "bool", "default": True},
    compute_endpoint={"type": "str"},
    queued_provisioning={"type": "bool", "default": False},
    flex_start={"type": "bool", "default": False},
    spot={"type": "bool", "default": False},
    auto_repair={"type": "bool", "default": True},
    auto_upgrade={"type": "bool", "default": True},
    maintenance_exclusion={"type": "bool"},
    labels={"type": "dict"},
    resource_labels={"type": "dict"},
    taints={
        "type": "list",
        "elements": "dict",
        "options": {
            "key": {"type": "str", "required": True, "no_log": False},
            "value": {"type": "str"},
            "effect": {"type": "str", "required": True, "choices": list(TAINT_EFFECTS)},
        },
    },
    max_run_duration={"type": "str"},
    cluster_version={"type": "str"},
    node_locations={"type": "list", "elements": "str"},
    check_tpu_zone={"type": "bool", "default": True},
    workload_metadata_mode={"type": "str", "choices": ["GKE_METADATA", "GCE_METADATA"]},
    node_service_account={"type": "str"},
    secure_boot={"type": "bool", "default": True},
    accelerator_type={"type": "str"},
    accelerator_count={"type": "int"},
    gpu_driver_version={"type": "str", "choices": GPU_DRIVER_VERSIONS, "default": "DEFAULT"},
    recreate_on_error={"type": "bool", "default": False},
    **CONVERGE_ARGSPEC,
)

#: The relations of gke_node_pool's options (AnsibleModule's keyword arguments; the autoscaling option's own are in
#: its entry above). What they cannot say, because it is about a value, is module_utils/validate.py's: the
#: reservation's format and that it goes with SPECIFIC_RESERVATION only, accelerator_count's value, the rest.
NODE_POOL_RELATIONS: Relations = with_relations(
    AUTH_RELATIONS,
    required_if=[
        ("state", "present", ("machine_type",)),
        # GKE: SPECIFIC_RESERVATION consumes the reservation named in ReservationAffinity.values.
        ("reservation_affinity", "SPECIFIC_RESERVATION", ("reservation",)),
    ],
    # config.accelerators[]: a GPU type and how many of it.
    required_together=[("accelerator_type", "accelerator_count")],
    # A reservation is consumed through an affinity (validate.py: SPECIFIC_RESERVATION, no other).
    required_by={"reservation": ("reservation_affinity",)},
)
