"""Compute Engine reservations in the GKE emulator: the zonal resource a reservation node pool consumes.

The Compute Engine API v1 subset planb uses (https://cloud.google.com/compute/docs/reference/rest/v1/reservations):

* ``GET  /compute/v1/projects/P/zones/Z/reservations/NAME``  one reservation (404 in Compute's wording when none)
* ``GET  /compute/v1/projects/P/zones/Z/reservations``       ``{"items": [...]}``
* ``POST /compute/v1/projects/P/zones/Z/reservations``       insert; answers a zonal operation that is DONE

A reservation has one of two shapes (compute v1 discovery document, ``Reservation``):

* ``specificReservation {count, inUseCount, instanceProperties {machineType}}``: VMs of one machine shape, how
  GPU (and CPU) capacity is reserved (``gcloud compute reservations create --machine-type --vm-count``);
* ``aggregateReservation {vmFamily, workloadType, reservedResources [{accelerator {acceleratorType,
  acceleratorCount}}]}``: TPU chips of one family, how Compute Engine makes TPU reservations (gcloud's
  ``future-reservations create --tpu-version --chip-count --workload-type`` sends only the chip count and the VM
  family; the emulator then fills ``acceleratorType`` from ``vmFamily``, see ``FAMILY_OF_VM_FAMILY``).

Stored as Compute's Reservation body: ``name``, ``zone`` (URL), ``status`` READY, ``specificReservationRequired``
(Compute's default false; gcloud's ``--require-specific-reservation`` sets true), the shape, and ``shareSettings``
(default ``{shareType: LOCAL}``; ``SPECIFIC_PROJECTS`` with ``projectMap``, or ``ORGANIZATION``, the share types
the v1 document lists; it lists no folder form). int64 fields (``count``, ``inUseCount``, ``id``) are JSON strings,
as Compute writes them (proto3 JSON); a request may give ``count`` as a number or a string.

``inUseCount`` is stored "0" and ``inUseResources`` absent; a read (``get``, ``list``) shows what the node pools that
consume the reservation by name use (``gke_emulator.reservation_use``), so a reservation its pools fill reads full.
``planb local gke-emulator reservation create`` inserts one.
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
#: Compute Engine: shared reservations (shareSettings SPECIFIC_PROJECTS with projectMap, or ORGANIZATION).
DOC_SHARED = "https://cloud.google.com/compute/docs/instances/reservations-shared"
_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
_MACHINE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)+$")
_ZONE = re.compile(r"^[a-z]+-[a-z]+[0-9]+-(ai[0-9]+)?[a-z]$")
_INT64 = re.compile(r"^-?[0-9]+$")

#: compute v1 AllocationAggregateReservation.vmFamily (its enum) -> the TPU machine family of its chips, the
#: last segment of an acceleratorType URL (.../acceleratorTypes/ct6e) that GKE's autoscaler compares with the
#: pool's family (GoogleCloudPlatform/cluster-autoscaler pkg/cloudprovider/gke/tpu/tpu.go GetTpuMachineFamilyFromUrl,
#: pkg/reservations/matcher.go MatchAggregateReservationShapeWithReasons). The family names are the autoscaler's
#: (pkg/cloudprovider/gke/machinetypes/deprecated_machine_types_config.go: ct3, ct3p, ct5l, ct5lp, ct4p, ct5p,
#: ct6e, tpu7x); the pairing of each enum value with its family is read from the enum value's suffix.
FAMILY_OF_VM_FAMILY = {
    "VM_FAMILY_CLOUD_TPU_DEVICE_CT3": "ct3",
    "VM_FAMILY_CLOUD_TPU_LITE_DEVICE_CT5L": "ct5l",
    "VM_FAMILY_CLOUD_TPU_LITE_POD_SLICE_CT5LP": "ct5lp",
    "VM_FAMILY_CLOUD_TPU_LITE_POD_SLICE_CT6E": "ct6e",
    "VM_FAMILY_CLOUD_TPU_POD_SLICE_CT3P": "ct3p",
    "VM_FAMILY_CLOUD_TPU_POD_SLICE_CT4P": "ct4p",
    "VM_FAMILY_CLOUD_TPU_POD_SLICE_CT5P": "ct5p",
    "VM_FAMILY_CLOUD_TPU_POD_SLICE_TPU7X": "tpu7x",
}
#: compute v1 AllocationAggregateReservation.workloadType (its enum).
WORKLOAD_TYPES = ("BATCH", "SERVING", "UNSPECIFIED")
#: compute v1 ShareSettings.shareType (its enum; SHARE_TYPE_UNSPECIFIED is "unused").
SHARE_TYPES = ("LOCAL", "ORGANIZATION", "SHARE_TYPE_UNSPECIFIED", "SPECIFIC_PROJECTS")


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


def _invalid(field: str, value: object, why: str) -> ReservationError:
    # Compute Engine's 400 for a bad field value: "Invalid value for field '<field>': '<value>'. <why>".
    return ReservationError(400, f"Invalid value for field '{field}': '{value}'. {why}")


def _positive_int64(field: str, value: object) -> int:
    """An int64 given as a JSON number or a string (proto3 JSON accepts both), at least 1."""
    text = str(value) if isinstance(value, int | str) and not isinstance(value, bool) else ""
    if not _INT64.fullmatch(text) or int(text) < 1:
        raise _invalid(field, value, "Must be an integer of at least 1.")
    return int(text)


def _specific(request: Body) -> Body:
    specific = request.get("specificReservation") or {}
    count = _positive_int64("resource.specificReservation.count", specific.get("count"))
    machine = str((specific.get("instanceProperties") or {}).get("machineType") or "")
    if not _MACHINE.fullmatch(machine):
        raise _invalid("resource.specificReservation.instanceProperties.machineType", machine, "A machine type.")
    return {"count": str(count), "inUseCount": "0", "instanceProperties": {"machineType": machine}}


def accelerator_type_url(project: str, zone: str, family: str) -> str:
    """The full acceleratorType URL of a TPU family in a zone (compute v1: "Full or partial URL")."""
    return f"{COMPUTE_BASE}/projects/{project}/zones/{zone}/acceleratorTypes/{family}"


def _aggregate(request: Body, project: str, zone: str) -> Body:
    aggregate = request.get("aggregateReservation") or {}
    vm_family = str(aggregate.get("vmFamily") or "")
    if vm_family not in FAMILY_OF_VM_FAMILY:
        raise _invalid(
            "resource.aggregateReservation.vmFamily", vm_family, f"Must be one of {', '.join(FAMILY_OF_VM_FAMILY)}."
        )
    workload = str(aggregate.get("workloadType") or "UNSPECIFIED")
    if workload not in WORKLOAD_TYPES:
        raise _invalid("resource.aggregateReservation.workloadType", workload, f"Must be one of {WORKLOAD_TYPES}.")
    resources = aggregate.get("reservedResources") or []
    if not isinstance(resources, list) or not resources:
        raise _invalid("resource.aggregateReservation.reservedResources", resources, "At least one accelerator.")
    reserved: list[Body] = []
    for index, item in enumerate(resources):
        where = f"resource.aggregateReservation.reservedResources[{index}].accelerator"
        accelerator = (item or {}).get("accelerator") if isinstance(item, dict) else None
        if not isinstance(accelerator, dict):
            raise _invalid(where, item, "An accelerator {acceleratorType, acceleratorCount}.")
        # acceleratorCount is int32 in the v1 document: a JSON number (a numeric string is accepted too).
        count = _positive_int64(f"{where}.acceleratorCount", accelerator.get("acceleratorCount"))
        given = str(accelerator.get("acceleratorType") or "")
        # Unset, the family is the VM family's (gcloud's --tpu-version sends no acceleratorType); a bare family
        # name or a partial URL is written back as the full URL.
        family = given.rstrip("/").rsplit("/", 1)[-1] if given else FAMILY_OF_VM_FAMILY[vm_family]
        if not _NAME.fullmatch(family) or (given and "/" in given and "/acceleratorTypes/" not in given):
            raise _invalid(f"{where}.acceleratorType", given, "A URL such as projects/P/zones/Z/acceleratorTypes/ct6e.")
        reserved.append(
            {"accelerator": {"acceleratorType": accelerator_type_url(project, zone, family), "acceleratorCount": count}}
        )
    return {"vmFamily": vm_family, "workloadType": workload, "reservedResources": reserved}


def _share_settings(request: Body) -> Body:
    share = request.get("shareSettings") or {"shareType": "LOCAL"}
    kind = str(share.get("shareType") or "LOCAL")
    if kind not in SHARE_TYPES:
        raise _invalid("resource.shareSettings.shareType", kind, f"Must be one of {', '.join(SHARE_TYPES)}.")
    projects = share.get("projectMap") or {}
    # compute v1 ShareSettings.projectMap: "This is only valid when share_type's value is SPECIFIC_PROJECTS".
    if projects and kind != "SPECIFIC_PROJECTS":
        raise _invalid("resource.shareSettings.projectMap", sorted(projects), "Only valid with SPECIFIC_PROJECTS.")
    if kind == "SPECIFIC_PROJECTS" and not projects:
        raise _invalid("resource.shareSettings.projectMap", {}, "SPECIFIC_PROJECTS names at least one project.")
    body: Body = {"shareType": kind}
    if projects:
        body["projectMap"] = {p: {"projectId": str((c or {}).get("projectId") or p)} for p, c in projects.items()}
    return body


def insert(table: dict[str, Body], project: str, zone: str, request: Body) -> Body:
    """Compute's reservations.insert: validate the request, store the reservation, answer a DONE operation."""
    name = str(request.get("name") or "")
    if not _NAME.fullmatch(name):
        raise _invalid("resource.name", name, f"Must be a match of regex '{_NAME.pattern}'")
    if not _ZONE.fullmatch(zone):
        raise _invalid("zone", zone, "A zone such as us-east5-b.")
    has_specific, has_aggregate = bool(request.get("specificReservation")), bool(request.get("aggregateReservation"))
    if has_specific == has_aggregate:
        # A reservation holds one shape (compute v1 Reservation); Google does not document the error text.
        raise ReservationError(
            400,
            "A reservation has exactly one of specificReservation (VMs of one machine type) and aggregateReservation "
            f"(TPU chips of one VM family), got {'both' if has_specific else 'neither'}",
        )
    full = key(project, zone, name)
    if full in table:
        raise ReservationError(409, f"The resource '{full}' already exists")
    shape = (
        {"specificReservation": _specific(request)}
        if has_specific
        else {"aggregateReservation": _aggregate(request, project, zone)}
    )
    body: Body = {
        "kind": "compute#reservation",
        "id": str(secrets.randbits(63)),
        "creationTimestamp": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "name": name,
        "zone": f"{COMPUTE_BASE}/projects/{project}/zones/{zone}",
        "selfLink": f"{COMPUTE_BASE}/{full}",
        "status": "READY",
        "specificReservationRequired": bool(request.get("specificReservationRequired", False)),
        **shape,
        "shareSettings": _share_settings(request),
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
