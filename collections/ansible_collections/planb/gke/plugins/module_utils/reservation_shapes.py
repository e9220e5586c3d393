# planb.gke: the two shapes of a Compute Engine reservation, and what a node pool needs of each to consume it.
"""What keeps a node pool from consuming a reservation, by the reservation's shape.

Compute Engine API v1 ``Reservation`` (https://cloud.google.com/compute/docs/reference/rest/v1/reservations) holds
one of two shapes:

* ``specificReservation {count, inUseCount, instanceProperties {machineType}}``: VMs of one machine type. GKE's
  autoscaler matches it to a pool of that machine type (GoogleCloudPlatform/cluster-autoscaler
  ``pkg/reservations/matcher.go`` MatchSpecificReservationShapeWithReasons, ``MATCHER``).
* ``aggregateReservation {vmFamily, workloadType, reservedResources [{accelerator {acceleratorType,
  acceleratorCount}}]}``: TPU chips, how Google reserves TPUs. GKE consumes one only for a TPU pool
  (``pkg/autoprovisioning/injection.go``, ``INJECTION``) and matches it as MatchAggregateReservationShapeWithReasons
  does (``MATCHER``): a BATCH reservation serves multi-host slices only and a SERVING one single-host pools only
  (UNSPECIFIED both); one reserved accelerator, whose URL ends in ``acceleratorTypes/<family>``, is of the pool's
  machine family (the machine type's first segment: ``ct6e`` for ``ct6e-standard-4t``) and holds at least one
  slice's chips. The autoscaler does not compare ``vmFamily``, so neither does planb.

planb's policy on top (said so in each message): the reservation holds what the plan's slices need in all (VMs,
or chips), because Kueue would otherwise admit jobs onto slices the reservation cannot provide.

A missing reservation's "create it" hint is the gcloud command Google documents for the shape: ``gcloud compute
reservations create --machine-type --vm-count`` for VMs, ``gcloud beta compute future-reservations create
--tpu-version --chip-count --workload-type`` for TPUs (``DOC_TPU_CREATE``).
"""

from __future__ import annotations

from typing import Any

from ansible_collections.planb.gke.plugins.module_utils._generated.machine_types import FACTS as MACHINE_TYPES

Body = dict[str, Any]

_CA = "https://github.com/GoogleCloudPlatform/cluster-autoscaler/blob/7d250507339b3a7583b380349f217ea191ff15ff/"
MATCHER = _CA + "pkg/reservations/matcher.go"
INJECTION = _CA + "pkg/autoprovisioning/injection.go#L2658-L2667"
DOC_RESERVATION = "https://cloud.google.com/compute/docs/instances/reservations-single-project"
#: Reserving TPUs: a future reservation in calendar mode; Compute Engine creates the (aggregate) reservation.
DOC_TPU_CREATE = "https://cloud.google.com/compute/docs/instances/create-future-reservations-calendar-mode"
#: gcloud's --tpu-version values (gcloud beta compute future-reservations create) by planb TPU generation.
TPU_VERSIONS = {"v5e": "V5E", "v5p": "V5P", "v6e": "V6E"}


def _short(url: object) -> str:
    return str(url or "").rstrip("/").rsplit("/", 1)[-1]


def _chips(topology: str) -> int:
    product = 1
    for part in topology.split("x"):
        product *= int(part) if part.isdigit() else 0
    return product


def tpu_shape(machine_type: str | None, topology: str | None) -> tuple[int, bool] | None:
    """(chips of one slice, multi-host) of a TPU pool, None for a machine type that is not a TPU type.

    Multi-host as the autoscaler reckons it: the topology's chips are not one VM's (IsMultiHostTpuPodslice,
    pkg/cloudprovider/gke/machinetypes/machine_config_provider.go); without a topology the pool is one VM.
    """
    facts = MACHINE_TYPES.get(machine_type or "") or {}
    if facts.get("kind") != "tpu":
        return None
    per_vm = int(facts["chips_per_vm"])
    chips = _chips(topology) if topology else per_vm
    return chips, chips != per_vm


def create_hint(
    name: str, project: str, zone: str, machine_type: str | None, topology: str | None, vm_count: int | None
) -> str:
    """The gcloud command Google documents to create the reservation ``vm_count`` VMs of a pool consume."""
    facts = MACHINE_TYPES.get(machine_type or "") or {}
    if facts.get("kind") != "tpu":
        return (
            f"`gcloud compute reservations create {name} --project={project} --zone={zone} "
            f"--machine-type={machine_type or 'MACHINE_TYPE'} --vm-count=N --require-specific-reservation`, "
            f"{DOC_RESERVATION}"
        )
    shape = tpu_shape(machine_type, topology)
    batch = bool(shape and shape[1])
    chips = vm_count * int(facts["chips_per_vm"]) if vm_count else (shape[0] if shape else None)
    workload = "BATCH" if batch else "SERVING"
    version = TPU_VERSIONS.get(str(facts.get("generation")))
    if version is None:
        return (
            f"gcloud has no --tpu-version for TPU {facts.get('generation')}: ask Google (your account team) for an "
            f"aggregate reservation {name} of {chips or 'N'} {_short(machine_type).split('-')[0]} chips in {zone}, "
            f"workload type {workload}, specificReservationRequired, {DOC_TPU_CREATE}"
        )
    return (
        f"a TPU reservation is an aggregate reservation of chips: `gcloud beta compute future-reservations create "
        f"{name} --project={project} --zone={zone} --tpu-version={version} --chip-count={chips or 'N'} "
        f"--workload-type={workload} --reservation-mode=CALENDAR --planning-status=SUBMITTED --start-time=START "
        f"--end-time=END --reservation-name={name} --require-specific-reservation "
        f"--auto-delete-auto-created-reservations` (calendar mode; the chip count must be a slice size the page "
        f"lists), {DOC_TPU_CREATE}"
    )


def specific_problems(reservation: Body, name: str, machine_type: str | None, vm_count: int | None) -> list[str]:
    """What keeps a pool of ``machine_type`` (``vm_count`` VMs in all) from a specific reservation."""
    problems: list[str] = []
    specific = reservation.get("specificReservation") or {}
    reserved_type = _short((specific.get("instanceProperties") or {}).get("machineType"))
    if machine_type and reserved_type != machine_type:
        problems.append(
            f"reservation {name} reserves machine type {reserved_type or '(none)'}, the pool is {machine_type}: GKE "
            f"creates the pool's VMs only from a reservation of their machine type ({MATCHER}); use a "
            f"reservation of {machine_type}, or the profile whose machine type is {reserved_type}"
        )
    count = int(specific.get("count") or 0)  # int64: a JSON string
    if vm_count is not None and count < vm_count:
        problems.append(
            f"reservation {name} holds {count} VM(s) and the plan's slices need {vm_count}: planb's policy, because "
            "Kueue would admit jobs onto slices the reservation cannot provide; lower the plan's slices to what it "
            "holds, or grow the reservation"
        )
    return problems


def aggregate_problems(
    reservation: Body,
    name: str,
    machine_type: str | None,
    topology: str | None,
    vm_count: int | None,
    by_policy: bool = False,
) -> list[str]:
    """What keeps a pool of ``machine_type`` in ``topology`` (``vm_count`` VMs in all) from an aggregate reservation.

    ``by_policy``: the pool is placed by a workload policy (TPU7x) and no topology is given, so its slice is not
    known here: only the family is compared (the play's check before the pools reads the profile's topology)."""
    aggregate = reservation.get("aggregateReservation") or {}
    shape = tpu_shape(machine_type, topology)
    if shape is None:
        return [
            f"reservation {name} is an aggregate (TPU) reservation and machine type {machine_type} is not a TPU "
            f"type: GKE does not consume an aggregate reservation for non-TPU workloads ({INJECTION}); use a "
            "specific reservation of the machine type (gcloud compute reservations create --machine-type)"
        ]
    slice_chips, multi_host = shape
    workload = str(aggregate.get("workloadType") or "UNSPECIFIED")
    where = f"{topology} slice" if topology else "single VM"
    if by_policy and not topology:
        slice_chips, multi_host, workload = 0, True, "UNSPECIFIED"
    if workload == "SERVING" and multi_host:
        return [
            f"reservation {name} has workloadType SERVING and the pool is a multi-host TPU slice ({where}): GKE's "
            f"autoscaler matches a multi-host slice only to a BATCH reservation ({MATCHER}); use a reservation "
            "created with --workload-type=BATCH"
        ]
    if workload == "BATCH" and not multi_host:
        return [
            f"reservation {name} has workloadType BATCH and the pool is a single-host TPU pool ({where}): GKE's "
            f"autoscaler matches a BATCH reservation only to multi-host slices ({MATCHER}); use a reservation "
            "created with --workload-type=SERVING, or a multi-host profile"
        ]
    family = _short(machine_type).split("-")[0]
    held: dict[str, int] = {}
    for item in aggregate.get("reservedResources") or []:
        accelerator = item.get("accelerator") or {}
        parts = str(accelerator.get("acceleratorType") or "").split("/")
        kind = parts[parts.index("acceleratorTypes") + 1] if "acceleratorTypes" in parts[:-1] else "(no type)"
        held[kind] = max(held.get(kind, 0), int(accelerator.get("acceleratorCount") or 0))
    listed = ", ".join(f"{count} {kind}" for kind, count in held.items()) or "nothing"
    if family not in held:
        return [
            f"reservation {name} reserves TPU chips {listed}, the pool's machine type {machine_type} is of family "
            f"{family}: GKE's autoscaler matches a reserved accelerator of the pool's family only ({MATCHER}); use a "
            f"reservation of {family} chips, or the profile of the reserved family"
        ]
    if held[family] < slice_chips:
        return [
            f"reservation {name} holds {held[family]} {family} chips and one {where} needs {slice_chips}: GKE's "
            f"autoscaler matches only a reservation with at least one slice's chips ({MATCHER}); grow the "
            "reservation, or use a smaller topology"
        ]
    per_vm = int((MACHINE_TYPES.get(machine_type or "") or {}).get("chips_per_vm") or 1)
    if vm_count is not None and held[family] < vm_count * per_vm:
        return [
            f"reservation {name} holds {held[family]} {family} chips and the plan's slices need {vm_count * per_vm}: "
            "planb's policy, because Kueue would admit jobs onto slices the reservation cannot provide; lower the "
            "plan's slices to what it holds, or grow the reservation"
        ]
    return []
