"""The accelerator catalog: one profile name drives node pools, quotas, flavors and the RayJob."""

from planb.catalog.errors import (
    CatalogError,
    CountError,
    FlexStartError,
    MachineTypeError,
    TopologyError,
    UnknownProfileError,
)
from planb.catalog.nodepool import node_pool, node_pools
from planb.catalog.profiles import DEFAULT_PROFILE, PROFILES, Profile, get
from planb.catalog.values import chart_values

__all__ = [
    "DEFAULT_PROFILE",
    "PROFILES",
    "CatalogError",
    "CountError",
    "FlexStartError",
    "MachineTypeError",
    "Profile",
    "TopologyError",
    "UnknownProfileError",
    "chart_values",
    "get",
    "node_pool",
    "node_pools",
]
