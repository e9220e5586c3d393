# planb.gke: one node pool's catalog sizing and zones, checked by a task, as the catalog and location filters do.
"""Action ``planb.gke.node_pool_layout``: ``planb.gke.node_pool`` and ``planb.gke.node_locations`` as one task.

Returns ``catalog`` (``planb.gke.node_pool``'s settings of the pool's profile, ``{}`` for a pool sized by hand) and
``node_locations`` (the pool's zones; ``[]`` for a pool being deleted). A refusal fails the task with the filter's
sentence alone: an unknown profile, slices a multi-host pool cannot hold, flex-start on a generation without it,
a region without the TPU zone, a zone Google's TPU list does not name (plugins/filter/catalog.py, locations.py).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ansible_collections.planb.gke.plugins.filter.catalog import node_pool
from ansible_collections.planb.gke.plugins.filter.locations import node_locations
from ansible_collections.planb.gke.plugins.plugin_utils.refusal import RefusalAction


class ActionModule(RefusalAction):
    """``{catalog: ..., node_locations: [...]}`` of one pool, the catalog checked first."""

    ARGUMENT_SPEC: ClassVar[dict[str, dict[str, Any]]] = {
        "profile": {"type": "str", "default": ""},
        "slices": {"type": "int", "default": 1},
        "flex_start": {"type": "bool", "default": False},
        "machine_type": {"type": "str", "default": ""},
        "location": {"type": "str", "required": True},
        "tpu_zone": {"type": "str", "default": ""},
        "check_tpu_zone": {"type": "bool", "default": True},
        "state": {"type": "str", "default": "present"},
    }

    def check(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        machine_type = args["machine_type"] or None
        catalog: dict[str, Any] = {}
        if args["profile"]:
            catalog = node_pool(
                args["profile"], slices=args["slices"], flex_start=args["flex_start"], machine_type=machine_type
            )
        zones: list[str] = []
        if args["state"] == "present":
            zones = node_locations(
                args["profile"],
                args["location"],
                tpu_zone=args["tpu_zone"],
                check=args["check_tpu_zone"],
                machine_type=machine_type,
            )
        return {"catalog": catalog, "node_locations": zones}
