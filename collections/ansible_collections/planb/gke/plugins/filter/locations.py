# planb.gke: where a plan's node pools live (zones), from the TPU zones generated into this collection.
"""Ansible filter ``planb.gke.node_locations``: the NodePool ``locations`` of a profile's pool, or a refusal.

::

    {{ planb_profile | planb.gke.node_locations(planb_zone) }}                       # zonal cluster: []
    {{ planb_profile | planb.gke.node_locations('us-east5', tpu_zone='us-east5-b') }}  # regional: ['us-east5-b']

A TPU slice lives in one zone and each TPU generation is offered only in the zones Google lists
(https://cloud.google.com/tpu/docs/regions-zones); a zone outside that list, or a regional cluster without
``tpu_zone``, is refused naming the zones that do offer it. This is planb's policy based on Google's list
(module_utils/locations.py), applied before any API call; ``check=false`` skips the list, not the one-zone rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible.errors import AnsibleFilterError
from ansible_collections.planb.gke.plugins.module_utils import locations
from ansible_collections.planb.gke.plugins.module_utils._generated.profiles import FACTS


def node_locations(
    profile: str, location: str, tpu_zone: str = "", check: bool = True, machine_type: str | None = None
) -> list[str]:
    """The ``locations`` of a pool of ``profile`` (or ``machine_type``) in a cluster at ``location``."""
    caller = "planb.gke.node_locations"
    machine = machine_type
    if not machine:
        facts = FACTS["profiles"].get(FACTS["aliases"].get(profile, profile))
        if facts is None:
            raise AnsibleFilterError(f"{caller}: unknown profile {profile!r} (`planb profiles` lists them)")
        machine = str(facts["machine_type"])
    try:
        return locations.node_locations(machine, str(location), str(tpu_zone or ""), bool(check))
    except ValueError as exc:
        raise AnsibleFilterError(f"{caller}: {exc}") from exc


class FilterModule:
    """planb.gke location filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"node_locations": node_locations}
