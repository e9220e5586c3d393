"""A reservation's free room, read before its rung is offered: Google's own state of the rung, not a forecast.

A reservation rung grants a job exactly when the Compute Engine reservation its pools consume has room left for the
job's slice, and fails at once when it has not (its VMs or chips already used, by planb's jobs or anyone's). Compute
Engine says which before anything is asked: ``reservations.get`` (compute v1,
https://cloud.google.com/compute/docs/reference/rest/v1/reservations/get) answers a ``Reservation`` whose
``specificReservation`` gives ``count`` and ``inUseCount`` ("Indicates how many instances are in use"), and whose
``aggregateReservation`` (the shape Compute Engine makes TPU reservations in) gives ``reservedResources`` and
``inUseResources`` ("List of resources currently in use"), each ``{accelerator {acceleratorCount,
acceleratorType}}``. ``Room.read`` reads that body for one pair's shape; ``planb.regions.advice_order`` (rule 2)
takes a read room as the pair's state, in place of the ledger's guess.

Units: a specific reservation counts VMs (the shape's count); an aggregate one counts chips (the shape's count times
the chips of its machine type, the number before ``t`` at its end: ``ct6e-standard-4t`` holds 4).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from planb.regions.advice import shape_parts

DOC_GET = "https://cloud.google.com/compute/docs/reference/rest/v1/reservations/get"
_CHIPS = re.compile(r"-([0-9]+)t$")


class RoomUnread(ValueError):
    """A Reservation body planb cannot read room from (neither shape, a count that is not a whole number)."""


def _whole(value: Any, what: str) -> int:
    """An int64 field as Compute writes it (a JSON string, proto3) or as a number."""
    if isinstance(value, bool):
        raise RoomUnread(f"{what} {value!r} is not a whole number")
    try:
        number = int(str(value if value is not None else "0"), 10)
    except ValueError:
        raise RoomUnread(f"{what} {value!r} is not a whole number") from None
    if number < 0:
        raise RoomUnread(f"{what} {value!r} is negative")
    return number


def _chips(resources: Any, what: str) -> int:
    if resources is None:
        return 0
    if not isinstance(resources, list):
        raise RoomUnread(f"{what} is not a list")
    total = 0
    for resource in resources:
        accelerator = resource.get("accelerator") if isinstance(resource, dict) else None
        if isinstance(accelerator, dict):
            total += _whole(accelerator.get("acceleratorCount"), f"{what}[].accelerator.acceleratorCount")
    return total


@dataclass(frozen=True)
class Room:
    """A reservation read for one pair: its name, what it has free and what the job needs, in ``unit``."""

    reservation: str
    free: int
    need: int
    unit: str

    @property
    def fits(self) -> bool:
        return self.free >= self.need

    def __str__(self) -> str:
        state = "room for the job" if self.fits else "full for the job"
        return f"reservation {self.reservation}: {self.free} {self.unit} free, the job needs {self.need} ({state})"

    @staticmethod
    def read(name: str, body: dict[str, Any], shape: str) -> Room:
        """The room ``body``, a compute v1 Reservation, has for a job of ``shape`` (``ct6e-standard-4t:4``)."""
        machine_type, count = shape_parts(shape)
        specific, aggregate = body.get("specificReservation"), body.get("aggregateReservation")
        if isinstance(specific, dict):
            total = _whole(specific.get("count"), "specificReservation.count")
            used = _whole(specific.get("inUseCount"), "specificReservation.inUseCount")
            return Room(name, max(0, total - used), count, "VMs")
        if isinstance(aggregate, dict):
            chips = _CHIPS.search(machine_type)
            if chips is None:
                raise RoomUnread(f"an aggregate reservation counts TPU chips; {machine_type} names no chip count")
            total = _chips(aggregate.get("reservedResources"), "aggregateReservation.reservedResources")
            used = _chips(aggregate.get("inUseResources"), "aggregateReservation.inUseResources")
            return Room(name, max(0, total - used), count * int(chips.group(1)), "chips")
        raise RoomUnread(f"reservation {name} has neither specificReservation nor aggregateReservation ({DOC_GET})")
