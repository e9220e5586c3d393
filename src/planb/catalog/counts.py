"""Validation of the counts users give with a profile (slices, on-demand slices, node pool sizes)."""

from __future__ import annotations

from planb.catalog.errors import CountError
from planb.catalog.profiles import Profile


def positive(name: str, value: object) -> int:
    """``value`` as an int of at least 1, else CountError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise CountError(f"{name} must be a whole number of at least 1, got {value!r}")
    if value < 1:
        raise CountError(f"{name} must be at least 1, got {value}")
    return value


def whole_slices(name: str, nodes: object, profile: Profile) -> int:
    """``nodes`` as a node count that is a whole number of slices of ``profile``."""
    count = positive(name, nodes)
    per = profile.nodes_per_slice
    if count % per:
        lower = count - count % per
        upper = lower + per
        nearest = f"{lower} or {upper}" if lower else f"{upper}"
        raise CountError(
            f"{name} {count} is not a multiple of the {per} nodes of one {profile.name} slice "
            f"(GKE scales a multi-host TPU slice atomically): use {nearest}"
        )
    return count
