"""Validation of the counts users give with a profile (slices, on-demand slices, node pool sizes)."""

from __future__ import annotations

from planb.catalog import pool_layout
from planb.catalog.errors import layout_errors


def positive(name: str, value: object) -> int:
    """``value`` as an int of at least 1, else CountError naming ``name``."""
    with layout_errors():
        return pool_layout.positive(name, value)


def slices(name: str, value: object) -> int:
    """``value`` as a number of slices (1 to pool_layout.MAX_SLICES), else CountError naming ``name``."""
    with layout_errors():
        return pool_layout.slice_count(name, value)
