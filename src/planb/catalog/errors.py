"""Typed errors of the accelerator catalog; each message names the bad input and the valid choices."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from planb.catalog.pool_layout import PoolLayoutError, SliceCountError
from planb.errors import PlanbError


class CatalogError(PlanbError):
    """Base of every catalog error."""


class UnknownProfileError(CatalogError):
    """The profile name (or chip-count alias) is not in the catalog."""


class TopologyError(CatalogError):
    """The topology is malformed or not offered for the generation / machine type."""


class MachineTypeError(CatalogError):
    """The machine type does not belong to the accelerator generation."""


class UnknownMachineTypeError(MachineTypeError):
    """The catalog holds no machine type of that name (so no shape, accelerators or topologies)."""

    def __init__(self, machine_type: str, known: tuple[str, ...]) -> None:
        super().__init__(
            f"machine type {machine_type!r} is not in the planb catalog; known machine types: {', '.join(known)}"
        )
        self.machine_type = machine_type
        self.known = known


class CountError(CatalogError):
    """A count (slices, on-demand slices, nodes) is zero, negative or not a whole slice."""


class FlexStartError(CatalogError):
    """Flex-start (DWS queued provisioning) was asked for where GKE does not offer it."""


@contextmanager
def layout_errors() -> Iterator[None]:
    """Raise the pool layout's errors as CatalogError (CountError for counts), with the same message."""
    try:
        yield
    except SliceCountError as exc:
        raise CountError(str(exc)) from exc
    except PoolLayoutError as exc:
        raise CatalogError(str(exc)) from exc
