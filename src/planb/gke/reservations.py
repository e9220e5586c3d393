"""Compute Engine reservations in the GKE emulator: the zonal resource a reservation node pool consumes.

The Compute Engine API v1 subset planb uses (https://cloud.google.com/compute/docs/reference/rest/v1/reservations):

* ``GET  /compute/v1/projects/P/zones/Z/reservations/NAME``  one reservation (404 in Compute's wording when none)
* ``GET  /compute/v1/projects/P/zones/Z/reservations``       ``{"items": [...]}``
* ``POST /compute/v1/projects/P/zones/Z/reservations``       insert; answers a zonal operation that is DONE

Stored as Compute's Reservation body: ``name``, ``zone`` (URL), ``status`` READY, ``specificReservationRequired``
(Compute's default false; gcloud's ``--require-specific-reservation`` sets true), ``specificReservation {count,
inUseCount, instanceProperties {machineType}}`` and ``shareSettings`` (default ``{shareType: LOCAL}``).
``planb gke-emulator reservation create NAME --machine-type ... --zone ... --count N`` inserts one. ``count`` and
``inUseCount`` are int64, stored and answered as JSON strings.

``inUseCount`` stays 0: the emulator counts no VMs against a reservation (docs/local-mode.md, "Every known
difference from Google").
"""

from __future__ import annotations

import copy
import re
import secrets
from datetime import UTC, datetime
from typing import Any

Body = dict[str, Any]

#: Where selfLinks and zone URLs point (Compute Engine API v1).
COMPUTE_BASE = "https://www.googleapis.com/compute/v1"
DOC_RESERVATIONS = "https://cloud.google.com/compute/docs/reference/rest/v1/reservations"
_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
_MACHINE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)+$")
_ZONE = re.compile(r"^[a-z]+-[a-z]+[0-9]+-(ai[0-9]+)?[a-z]$")


class ReservationError(Exception):
    """What Compute Engine answers as an error (HTTP code and message)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def key(project: str, zone: str, name: str) -> str:
    """The reservation's resource name: projects/P/zones/Z/reservations/N."""
    return f"projects/{project}/zones/{zone}/reservations/{name}"


def not_found(name: str) -> ReservationError:
    # Compute Engine's 404 body names the resource: "The resource '<name>' was not found".
    return ReservationError(404, f"The resource '{name}' was not found")


def get(table: dict[str, Body], project: str, zone: str, name: str) -> Body:
    found = table.get(key(project, zone, name))
    if found is None:
        raise not_found(key(project, zone, name))
    return copy.deepcopy(found)


def list_zone(table: dict[str, Body], project: str, zone: str) -> Body:
    prefix = f"projects/{project}/zones/{zone}/reservations/"
    return {"items": [copy.deepcopy(body) for name, body in sorted(table.items()) if name.startswith(prefix)]}


def insert(table: dict[str, Body], project: str, zone: str, request: Body) -> Body:
    """Compute's reservations.insert: validate the request, store the reservation, answer a DONE operation."""
    name = str(request.get("name") or "")
    if not _NAME.match(name):
        raise ReservationError(
            400, f"Invalid value for field 'resource.name': '{name}'. Must be a match of regex '{_NAME.pattern}'"
        )
    if not _ZONE.match(zone):
        raise ReservationError(400, f"Invalid value for field 'zone': '{zone}'. A zone such as us-east5-b.")
    specific = request.get("specificReservation") or {}
    count = specific.get("count")
    machine = str((specific.get("instanceProperties") or {}).get("machineType") or "")
    # int64 (compute v1 AllocationSpecificSKUReservation.count): a JSON string, as the request arrives checked and
    # canonical (planb.gke.conformance), or a number from an in-process caller.
    if isinstance(count, bool) or not str(count).isdigit() or int(str(count)) < 1:
        raise ReservationError(400, "Invalid value for field 'resource.specificReservation.count': must be >= 1")
    if not _MACHINE.match(machine):
        raise ReservationError(
            400, f"Invalid value for field 'resource.specificReservation.instanceProperties.machineType': '{machine}'"
        )
    full = key(project, zone, name)
    if full in table:
        raise ReservationError(409, f"The resource '{full}' already exists")
    share = request.get("shareSettings") or {"shareType": "LOCAL"}
    body: Body = {
        "kind": "compute#reservation",
        "id": str(secrets.randbits(63)),
        "creationTimestamp": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "name": name,
        "zone": f"{COMPUTE_BASE}/projects/{project}/zones/{zone}",
        "selfLink": f"{COMPUTE_BASE}/{full}",
        "status": "READY",
        "specificReservationRequired": bool(request.get("specificReservationRequired", False)),
        "specificReservation": {
            "count": str(count),
            "inUseCount": "0",
            "instanceProperties": {"machineType": machine},
        },
        "shareSettings": copy.deepcopy(share),
    }
    table[full] = body
    return {
        "kind": "compute#operation",
        "name": f"operation-{secrets.token_hex(8)}",
        "operationType": "insert",
        "status": "DONE",
        "progress": 100,
        "targetLink": body["selfLink"],
        "zone": body["zone"],
    }
