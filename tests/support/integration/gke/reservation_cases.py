"""One table of reservation-matching cases, which both of planb's reservation matchers must pass.

planb matches a node pool to the reservation it names twice, in two places that must agree:

* the GKE emulator, at ``nodePools.create`` (``planb.local.gke_emulator.reservation_rules.check_reservation_affinity``),
  standing in for GKE;
* the planb.gke collection, before any write (``module_utils/reservation.py`` ``reservation_problems`` and the two
  shapes' matchers in ``module_utils/reservation_shapes.py``), run here by ``gcp_reservation_info`` without a
  ``vm_count``, so planb's own policy on how much the reservation holds is left out.

A case is a pool (machine type, TPU topology) in project ``PROJECT``, zone ``ZONE``, and the reservation it names
(the insert request gcloud sends, stored by the emulator's Compute Engine; ``None``: there is none), and the outcome
GKE gives: consumed (``refusal`` None) or refused, for one ``Refusal``. Each test maps a ``Refusal`` to its own
matcher's wording; the table holds no message.

What GKE matches is documented by GKE's "Consuming reserved zonal resources"
(https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations: the reservation of the pool's zone,
by name, or ``projects/P/reservations/N`` when shared), Compute Engine's shared reservations
(https://cloud.google.com/compute/docs/instances/reservations-shared) and, for the two shapes, GKE's cluster
autoscaler (GoogleCloudPlatform/cluster-autoscaler ``pkg/reservations/matcher.go`` and
``pkg/autoprovisioning/injection.go``, the links in ``Refusal``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.gke_api import call

Body = dict[str, Any]

PROJECT, ZONE = "planb-test", "us-east5-b"
#: The project that owns a shared reservation.
OWNER = "owner-project"
NAME = "res"
CT6E, CT5LP = "VM_FAMILY_CLOUD_TPU_LITE_POD_SLICE_CT6E", "VM_FAMILY_CLOUD_TPU_LITE_POD_SLICE_CT5LP"
CT5P = "VM_FAMILY_CLOUD_TPU_POD_SLICE_CT5P"

_CA = "https://github.com/GoogleCloudPlatform/cluster-autoscaler/blob/7d250507339b3a7583b380349f217ea191ff15ff/"


class Refusal(enum.Enum):
    """Why GKE does not let the pool consume the reservation (``source``: the page or code that says so)."""

    MISSING = "no reservation of that name in the pool's zone"
    NOT_SHARED = "another project's reservation, not shared with the pool's project"
    MACHINE_TYPE = "a specific reservation of another machine type"
    NOT_TPU = "an aggregate (TPU) reservation and a pool that is not a TPU pool"
    WORKLOAD = "BATCH serves multi-host slices only, SERVING single-host pools only (UNSPECIFIED both)"
    FAMILY = "no reserved accelerator of the pool's TPU family (the machine type's first segment)"
    CHIPS = "a reserved accelerator of the family, but none holds one slice's chips"

    @property
    def source(self) -> str:
        return _SOURCES[self]


_SOURCES = {
    Refusal.MISSING: "https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations",
    Refusal.NOT_SHARED: "https://cloud.google.com/compute/docs/instances/reservations-shared",
    # MatchSpecificReservationShapeWithReasons
    Refusal.MACHINE_TYPE: _CA + "pkg/reservations/matcher.go#L127-L130",
    Refusal.NOT_TPU: _CA + "pkg/autoprovisioning/injection.go#L2658-L2667",
    # MatchAggregateReservationShapeWithReasons
    Refusal.WORKLOAD: _CA + "pkg/reservations/matcher.go#L207-L223",
    Refusal.FAMILY: _CA + "pkg/reservations/matcher.go#L225-L251",
    Refusal.CHIPS: _CA + "pkg/reservations/matcher.go#L225-L251",
}


@dataclass(frozen=True)
class ReservationCase:
    id: str
    machine_type: str
    topology: str | None
    #: The reservation's insert request without its name (the name is NAME); None: no reservation exists.
    reservation: Body | None
    refusal: Refusal | None
    #: The reservation's project; another than PROJECT is named projects/OWNER/reservations/NAME.
    owner: str = PROJECT

    @property
    def value(self) -> str:
        """The reservation as the pool names it (reservationAffinity.values[0], gcp_reservation_info's name)."""
        return NAME if self.owner == PROJECT else f"projects/{self.owner}/reservations/{NAME}"


def aggregate(
    chips: int | tuple[int, ...],
    workload: str = "BATCH",
    vm_family: str = CT6E,
    accelerator_type: str = "",
    **extra: Any,
) -> Body:
    """An aggregate (TPU) reservation, as gcloud's future-reservations --tpu-version --chip-count sends it: no
    acceleratorType (Compute Engine fills it from vmFamily) unless one is given; one reserved accelerator per count."""
    typed = {"acceleratorType": accelerator_type} if accelerator_type else {}
    counts = chips if isinstance(chips, tuple) else (chips,)
    return {
        "specificReservationRequired": True,
        "aggregateReservation": {
            "vmFamily": vm_family,
            "workloadType": workload,
            "reservedResources": [{"accelerator": {"acceleratorCount": count, **typed}} for count in counts],
        },
        **extra,
    }


def specific(machine_type: str, count: int = 4, **extra: Any) -> Body:
    """A specific reservation: ``count`` VMs of one machine type (gcloud compute reservations create)."""
    return {
        "specificReservationRequired": True,
        "specificReservation": {"count": count, "instanceProperties": {"machineType": machine_type}},
        **extra,
    }


def _shared(*projects: str) -> Body:
    return {"shareSettings": {"shareType": "SPECIFIC_PROJECTS", "projectMap": {p: {"projectId": p} for p in projects}}}


_4T, _8T, _V5P, _GPU = "ct6e-standard-4t", "ct6e-standard-8t", "ct5p-hightpu-4t", "a3-highgpu-8g"

CASES: tuple[ReservationCase, ...] = (
    # Aggregate reservations: TPU chips of one family (pkg/reservations/matcher.go).
    ReservationCase("batch-of-the-family-serves-a-multi-host-slice", _4T, "4x4", aggregate(32), None),
    ReservationCase("one-slice-of-chips-is-enough", _4T, "4x4", aggregate(16), None),
    ReservationCase("two-4-chip-vms-are-a-multi-host-slice", _4T, "2x4", aggregate(8), None),
    ReservationCase("a-3d-multi-host-slice", _V5P, "2x2x2", aggregate(8, vm_family=CT5P), None),
    ReservationCase("unspecified-serves-a-multi-host-slice", _4T, "4x4", aggregate(32, "UNSPECIFIED"), None),
    ReservationCase("unspecified-serves-a-single-host-pool", _4T, "2x2", aggregate(4, "UNSPECIFIED"), None),
    ReservationCase("serving-serves-a-single-host-pool", _4T, "2x2", aggregate(4, "SERVING"), None),
    ReservationCase("serving-serves-one-8-chip-vm", _8T, "2x4", aggregate(8, "SERVING"), None),
    ReservationCase("serving-serves-a-pool-without-topology", _4T, None, aggregate(4, "SERVING"), None),
    ReservationCase("serving-refuses-a-multi-host-slice", _4T, "4x4", aggregate(32, "SERVING"), Refusal.WORKLOAD),
    ReservationCase("batch-refuses-a-single-host-pool", _4T, "2x2", aggregate(32), Refusal.WORKLOAD),
    ReservationCase("batch-refuses-one-8-chip-vm", _8T, "2x4", aggregate(8), Refusal.WORKLOAD),
    ReservationCase("another-family", _4T, "4x4", aggregate(32, vm_family=CT5LP), Refusal.FAMILY),
    ReservationCase(
        "the-accelerator-type-names-the-family-not-the-vm-family",
        _4T,
        "4x4",
        aggregate(32, accelerator_type="projects/p/zones/z/acceleratorTypes/ct5p"),
        Refusal.FAMILY,
    ),
    ReservationCase("fewer-chips-than-one-slice", _4T, "4x4", aggregate(8), Refusal.CHIPS),
    ReservationCase("no-one-reserved-accelerator-holds-a-slice", _4T, "4x4", aggregate((8, 8)), Refusal.CHIPS),
    ReservationCase("a-gpu-pool-and-an-aggregate-reservation", _GPU, None, aggregate(32), Refusal.NOT_TPU),
    # Specific reservations: VMs of one machine type (MatchSpecificReservationShapeWithReasons).
    ReservationCase("specific-of-the-pool-s-machine-type", _4T, "4x4", specific(_4T), None),
    ReservationCase("a-gpu-pool-and-a-specific-reservation-of-its-type", _GPU, None, specific(_GPU, 2), None),
    ReservationCase("specific-of-another-machine-type", _4T, "4x4", specific("ct5lp-hightpu-4t"), Refusal.MACHINE_TYPE),
    # Where the reservation is, and whose.
    ReservationCase("no-reservation-of-that-name-in-the-zone", _4T, "4x4", None, Refusal.MISSING),
    ReservationCase(
        "another-project-s-shared-with-the-organization",
        _4T,
        "4x4",
        aggregate(32, shareSettings={"shareType": "ORGANIZATION"}),
        None,
        owner=OWNER,
    ),
    ReservationCase(
        "another-project-s-shared-with-the-pool-s-project",
        _4T,
        "4x4",
        specific(_4T, **_shared(PROJECT)),
        None,
        owner=OWNER,
    ),
    ReservationCase("another-project-s-not-shared", _4T, "4x4", aggregate(32), Refusal.NOT_SHARED, owner=OWNER),
    ReservationCase(
        "another-project-s-shared-with-others",
        _4T,
        "4x4",
        specific(_4T, **_shared("someone-else")),
        Refusal.NOT_SHARED,
        owner=OWNER,
    ),
)

BY_ID = {case.id: case for case in CASES}


def reserve(emulator: RunningEmulator, case: ReservationCase) -> None:
    """Insert the case's reservation (if any) into the emulator's Compute Engine, in the owner's project and ZONE."""
    if case.reservation is None:
        return
    path = f"/compute/v1/projects/{case.owner}/zones/{ZONE}/reservations"
    status, op = call(emulator, "POST", path, {"name": NAME, **case.reservation})
    assert status == 200 and op["status"] == "DONE", op
