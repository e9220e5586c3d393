"""A reservation's free room, read before its rung is offered: Google's own state of the rung, not a forecast.

A reservation rung grants a job exactly when the Compute Engine reservation its pools consume matches the pools and
has room left for the job's slice, and fails at once when it has not. Compute Engine says which before anything is
asked: ``reservations.get`` (compute v1, https://cloud.google.com/compute/docs/reference/rest/v1/reservations/get)
answers a ``Reservation``: a ``specificReservation`` of ``count`` VMs (``inUseCount`` "how many instances are in
use", ``assuredCount`` "how many instances are actually usable currently") of its ``instanceProperties``, or an
``aggregateReservation`` (how Compute Engine reserves TPU chips) of ``reservedResources`` (``inUseResources`` "List of
resources currently in use"), each ``{accelerator {acceleratorCount, acceleratorType}}``, with a ``workloadType``.
``Room.read`` reads that body for one pair's shape; ``planb.regions.dispatcher.offer_order`` (rule 2) takes a read
room as the pair's state, in place of the ledger's guess.

**GKE's rules** (what its cluster autoscaler, GoogleCloudPlatform/cluster-autoscaler at 7d25050, matches before it
counts a reservation for a node group; each constant below is the line). planb's pools consume a reservation with
``SPECIFIC_RESERVATION`` affinity naming it (roles/gke_node_pool), so:

* usable only when ``status`` is ``READY``, it has a shape, and a specific one has ``instanceProperties`` (USABLE);
* a pool with SPECIFIC affinity matches only a reservation with ``specificReservationRequired`` true and the name it
  gives (COMPATIBLE), in the pool's own zone (ZONE);
* a specific reservation serves VMs of its machine type (MACHINE); its room is ``count`` less ``inUseCount`` (ROOM);
* an aggregate (TPU) reservation with ``workloadType`` ``BATCH`` serves multi-host slices only, ``SERVING`` single-host
  ones only, ``UNSPECIFIED`` both (AGG_WORKLOAD); and one ``reservedResources`` entry of the pool's TPU machine family
  (``ct6e`` for ``ct6e-standard-4t``) holds at least the slice's chips (AGG_CHIPS). The autoscaler reads no room of
  an aggregate reservation there: it matches its shape only.

A reservation that does not match is no read at all (``RoomUnread``: the pair is scored by its ledger, and the keeper
says why), because GKE would not place the pool's VMs there whatever its room.

**planb's policy, beyond the autoscaler** (the reads are planb's, to decide whether to ask at all):

* a specific reservation's room counts its ``assuredCount`` where that is below its ``count``, because the VMs not
  assured are not there to be had, and a request they would have to serve fails;
* an aggregate reservation's room is its chips of the job's family less those of the family in use
  (``inUseResources``), because the chips in use serve another slice: the autoscaler's match says only that the
  reservation is of the right shape.

Units: a specific reservation counts VMs (the shape's count); an aggregate one counts chips (the shape's count times
the chips of its machine type, the number before ``t`` at its end: ``ct6e-standard-4t`` holds 4). A slice of more
than one VM is multi-host.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from planb.regions.dispatcher.ledger import shape_parts

DOC_GET = "https://cloud.google.com/compute/docs/reference/rest/v1/reservations/get"
#: GKE's cluster autoscaler, at 7d25050: the lines each rule of the module's docstring follows.
_CA = "https://github.com/GoogleCloudPlatform/cluster-autoscaler/blob/7d250507339b3a7583b380349f217ea191ff15ff/"
#: IsReservationUsable: READY, a specific or an aggregate shape, a specific one with instanceProperties.
USABLE = _CA + "pkg/cloudprovider/gke/gceclient/reservation_utils.go#L21-L39"
#: GkeMig.IsReservationCompatible: SPECIFIC affinity, specificReservationRequired and the same name.
COMPATIBLE = _CA + "pkg/cloudprovider/gke/gke_cloud_provider_impl.go#L2197-L2220"
#: MatchSpecificReservationShapeWithReasons: the reservation's zone (the last part of its zone URL, GetReservationZone,
#: pkg/cloudprovider/gke/gceclient/reservation_ref.go#L112-L118) is the node group's.
ZONE = _CA + "pkg/reservations/matcher.go#L122-L125"
#: ... its machine type is the node group's.
MACHINE = _CA + "pkg/reservations/matcher.go#L127-L130"
#: MatchingUnusedReservations: a matching reservation's unused VMs, Count - InUseCount.
ROOM = _CA + "pkg/reservations/matcher.go#L52-L59"
#: MatchAggregateReservationShapeWithReasons: BATCH for a multi-host slice, SERVING for a single-host one...
AGG_WORKLOAD = _CA + "pkg/reservations/matcher.go#L207-L223"
#: ... and one reserved accelerator of the pool's machine family with at least the topology's chips.
AGG_CHIPS = _CA + "pkg/reservations/matcher.go#L225-L251"
_CHIPS = re.compile(r"-([0-9]+)t$")


class RoomUnread(ValueError):
    """A Reservation body planb reads no room from: GKE would not use it for the pool, or it cannot be read."""


@dataclass(frozen=True)
class ReservationRef:
    """A reservation as the manager's configuration names it: its project, the zone of the pools that consume it,
    its name (``planb.regions.dispatcher.reservation_reads``)."""

    project: str
    zone: str
    name: str

    def __str__(self) -> str:
        return f"projects/{self.project}/zones/{self.zone}/reservations/{self.name}"


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


def _chips(resources: Any, what: str, family: str) -> list[int]:
    """The chip count of each entry of ``resources`` whose accelerator is of ``family`` (the last part of its
    ``acceleratorType`` URL, as the autoscaler's GetTpuMachineFamilyFromUrl reads it)."""
    if resources is None:
        return []
    if not isinstance(resources, list):
        raise RoomUnread(f"{what} is not a list")
    counts = []
    for resource in resources:
        accelerator = resource.get("accelerator") if isinstance(resource, dict) else None
        if not isinstance(accelerator, dict):
            continue
        if str(accelerator.get("acceleratorType") or "").rsplit("/", 1)[-1] != family:
            continue
        counts.append(_whole(accelerator.get("acceleratorCount"), f"{what}[].accelerator.acceleratorCount"))
    return counts


def _refuse(condition: bool, why: str, source: str) -> None:
    if condition:
        raise RoomUnread(f"{why} (GKE's autoscaler: {source})")


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
    def read(ref: ReservationRef, body: dict[str, Any], shape: str) -> Room:
        """The room ``body``, a compute v1 Reservation, has for a job of ``shape`` (``ct6e-standard-4t:4``) on pools
        in ``ref.zone`` consuming ``ref`` (the module's docstring: GKE's rules, then planb's)."""
        machine_type, count = shape_parts(shape)
        name = ref.name
        specific, aggregate = body.get("specificReservation"), body.get("aggregateReservation")
        _refuse(body.get("status") != "READY", f"reservation {name} is {body.get('status')}, not READY", USABLE)
        _refuse(
            not isinstance(specific, dict) and not isinstance(aggregate, dict),
            f"reservation {name} has neither specificReservation nor aggregateReservation ({DOC_GET})",
            USABLE,
        )
        _refuse(
            body.get("specificReservationRequired") is not True,
            f"reservation {name} has specificReservationRequired false: a pool with SPECIFIC affinity (planb's) "
            "consumes only one that requires it",
            COMPATIBLE,
        )
        _refuse(body.get("name") != name, f"the reservation read is {body.get('name')!r}, not {name}", COMPATIBLE)
        zone = str(body.get("zone") or "").rsplit("/", 1)[-1]
        _refuse(zone != ref.zone, f"reservation {name} is in zone {zone!r}, not the pools' {ref.zone}", ZONE)
        if isinstance(specific, dict):
            properties = specific.get("instanceProperties")
            _refuse(
                not isinstance(properties, dict),
                f"reservation {name} gives no specificReservation.instanceProperties (GKE does not use one made "
                "from an instance template)",
                USABLE,
            )
            assert isinstance(properties, dict)
            reserved = str(properties.get("machineType") or "")
            _refuse(reserved != machine_type, f"reservation {name} reserves {reserved}, not {machine_type}", MACHINE)
            if specific.get("count") is None:
                raise RoomUnread(f"reservation {name} gives no specificReservation.count")
            total = _whole(specific["count"], "specificReservation.count")
            if specific.get("assuredCount") is not None:  # planb's policy: what is assured (the module's docstring)
                total = min(total, _whole(specific["assuredCount"], "specificReservation.assuredCount"))
            used = _whole(specific.get("inUseCount"), "specificReservation.inUseCount")
            return Room(name, max(0, total - used), count, "VMs")
        assert isinstance(aggregate, dict)
        per_vm = _CHIPS.search(machine_type)
        if per_vm is None:
            raise RoomUnread(f"an aggregate reservation counts TPU chips; {machine_type} names no chip count")
        need, multi_host = count * int(per_vm.group(1)), count > 1
        workload = str(aggregate.get("workloadType") or "UNSPECIFIED")
        _refuse(
            workload == "SERVING" and multi_host,
            f"reservation {name} is SERVING: a multi-host slice needs a BATCH one (requested multihost TPU, "
            "reservation has singlehost)",
            AGG_WORKLOAD,
        )
        _refuse(
            workload == "BATCH" and not multi_host,
            f"reservation {name} is BATCH: a single-host slice needs a SERVING one (requested singlehost TPU, "
            "reservation has multihost)",
            AGG_WORKLOAD,
        )
        family = machine_type.split("-", 1)[0]
        reserved_chips = _chips(aggregate.get("reservedResources"), "aggregateReservation.reservedResources", family)
        _refuse(
            not any(chips >= need for chips in reserved_chips),
            f"reservation {name} holds no entry of {need} {family} chips or more, one slice's "
            f"({', '.join(map(str, reserved_chips)) or 'none of that family'})",
            AGG_CHIPS,
        )
        used = sum(_chips(aggregate.get("inUseResources"), "aggregateReservation.inUseResources", family))
        return Room(name, max(0, sum(reserved_chips) - used), need, "chips")
