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

What counts as room, and what is no read at all (``RoomUnread``: the pair is then scored by its ledger), as GKE's
autoscaler reads a reservation before a scale-up (``GoogleCloudPlatform/cluster-autoscaler pkg/reservations/
matcher.go``, ``MatchingUnusedReservations``: only a ``READY`` one, its ``count`` less its ``inUseCount``, of the
pool's machine type or accelerators):

* a ``status`` other than ``READY`` (``CREATING``, ``UPDATING``...) is no read, because nothing is usable yet;
* a specific reservation's room is its ``count``, or its ``assuredCount`` where that is lower ("how many instances
  are actually usable currently"), less ``inUseCount`` (absent: none in use); a ``count`` absent is no read;
* a specific reservation of another ``instanceProperties.machineType`` than the job's is no read, and an aggregate
  one counts only the accelerators of the job's family (``acceleratorType`` ending ``/ct6e`` for ``ct6e-...``; one
  without an ``acceleratorType`` counts), none of them no read, because the job's pools do not consume it.
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


def _chips(resources: Any, what: str, family: str) -> tuple[int, int]:
    """The chips of ``family`` in ``resources`` (an accelerator without a type counts), and how many entries those
    were."""
    if resources is None:
        return 0, 0
    if not isinstance(resources, list):
        raise RoomUnread(f"{what} is not a list")
    total = entries = 0
    for resource in resources:
        accelerator = resource.get("accelerator") if isinstance(resource, dict) else None
        if not isinstance(accelerator, dict):
            continue
        kind = str(accelerator.get("acceleratorType") or "")
        if kind and kind.rsplit("/", 1)[-1] != family:
            continue
        total += _whole(accelerator.get("acceleratorCount"), f"{what}[].accelerator.acceleratorCount")
        entries += 1
    return total, entries


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
        status = body.get("status")
        if status is not None and status != "READY":
            raise RoomUnread(f"reservation {name} is {status}, not READY: nothing of it is usable yet")
        specific, aggregate = body.get("specificReservation"), body.get("aggregateReservation")
        if isinstance(specific, dict):
            if specific.get("count") is None:
                raise RoomUnread(f"reservation {name} gives no specificReservation.count")
            reserved = ((specific.get("instanceProperties") or {}).get("machineType")) or machine_type
            if str(reserved).rsplit("/", 1)[-1] != machine_type:
                raise RoomUnread(f"reservation {name} reserves {reserved}, not the job's {machine_type}")
            total = _whole(specific["count"], "specificReservation.count")
            if specific.get("assuredCount") is not None:
                total = min(total, _whole(specific["assuredCount"], "specificReservation.assuredCount"))
            used = _whole(specific.get("inUseCount"), "specificReservation.inUseCount")
            return Room(name, max(0, total - used), count, "VMs")
        if isinstance(aggregate, dict):
            chips = _CHIPS.search(machine_type)
            if chips is None:
                raise RoomUnread(f"an aggregate reservation counts TPU chips; {machine_type} names no chip count")
            family = machine_type.split("-", 1)[0]
            total, entries = _chips(
                aggregate.get("reservedResources"), "aggregateReservation.reservedResources", family
            )
            if not entries:
                raise RoomUnread(f"reservation {name} reserves no {family} chips, the job's machine family")
            used, _ = _chips(aggregate.get("inUseResources"), "aggregateReservation.inUseResources", family)
            return Room(name, max(0, total - used), count * int(chips.group(1)), "chips")
        raise RoomUnread(f"reservation {name} has neither specificReservation nor aggregateReservation ({DOC_GET})")
