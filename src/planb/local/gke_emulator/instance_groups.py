"""The Compute Engine managed instance groups behind node pools, as on GKE.

Each node pool is backed by one managed instance group: the pool's ``instanceGroupUrls`` name it and
``GET /compute/v1/projects/*/zones/*/instanceGroupManagers/*`` reads it; its ``targetSize`` is the pool's node
count (``initialNodeCount`` at creation, then ``setSize``). GKE's v1 NodePool has no node count of its own;
this is where clients read one.
"""

from __future__ import annotations

import copy
import re
import secrets
from typing import Any

from planb.local.gke_emulator.errors import ApiError
from planb.local.gke_emulator.store import Store

Body = dict[str, Any]

#: Where GKE's instanceGroupUrls point (Compute Engine API v1).
COMPUTE_BASE = "https://www.googleapis.com/compute/v1"


def pool_zone(pool: Body, location: str) -> str:
    """The zone of a pool's nodes: its first location, a zonal cluster's zone, else the region's first zone."""
    zone = location if re.fullmatch(r".+-[a-z]", location) else f"{location}-a"
    return str((pool.get("locations") or [zone])[0])


def add_instance_group(store: Store, pool: Body) -> None:
    """Back a new pool by one managed instance group (in the location's zone; a region's first zone)."""
    pool_name = pool["selfLink"].split("/v1/", 1)[1]
    parts = pool_name.split("/")
    project, location, cluster, pool_id = parts[1], parts[3], parts[5], parts[7]
    zone = pool_zone(pool, location)
    group = f"gke-{cluster[:15]}-{pool_id[:15]}-{secrets.token_hex(4)}-grp"
    full = f"projects/{project}/zones/{zone}/instanceGroupManagers/{group}"
    store.instance_groups[full] = {
        "name": group,
        "zone": f"{COMPUTE_BASE}/projects/{project}/zones/{zone}",
        "baseInstanceName": group.removesuffix("-grp"),
        "targetSize": int(pool.get("initialNodeCount") or 0),
        "selfLink": f"{COMPUTE_BASE}/{full}",
        "_nodePool": pool_name,
    }
    pool["instanceGroupUrls"] = [f"{COMPUTE_BASE}/{full}"]


def groups_of(store: Store, pool_name: str) -> list[str]:
    """The resource names of the instance groups behind one node pool."""
    return [name for name, group in store.instance_groups.items() if group.get("_nodePool") == pool_name]


def get_instance_group(store: Store, name: str) -> Body:
    """``instanceGroupManagers.get``: the group without the emulator's own fields."""
    group = store.instance_groups.get(name)
    if group is None:
        raise ApiError(404, f"The resource '{name}' was not found")
    return {k: copy.deepcopy(v) for k, v in group.items() if not k.startswith("_")}
