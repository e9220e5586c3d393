"""Which reservation a SPECIFIC_RESERVATION node pool may consume, as GKE matches the two reservation shapes.

``check_reservation_affinity`` runs at ``nodePools.create``. A pool names one reservation (key
``compute.googleapis.com/reservation-name``, the name or ``projects/P/reservations/N`` for a shared one); it must
exist in the pool's zone and, when another project's, be shared with the pool's project. Then the shape decides:

* ``specificReservation``: the reserved machine type is the pool's (GKE's autoscaler, ``MACHINE_MATCH``).
* ``aggregateReservation`` (how TPU capacity is reserved): GKE consumes it only for a TPU pool (``AGGREGATE_TPU``),
  and matches it as the autoscaler's ``MatchAggregateReservationShapeWithReasons`` does: a BATCH reservation
  serves multi-host slices only and a SERVING one single-host ones only (UNSPECIFIED both,
  ``AGGREGATE_WORKLOAD``); one reserved accelerator is of the pool's TPU machine family (``ct6e`` for
  ``ct6e-standard-4t``) with at least one slice's chips (``AGGREGATE_CHIPS``). The autoscaler does not compare
  ``vmFamily``, so neither does the emulator.

Google does not document the text GKE answers a create with; the emulator's messages quote the autoscaler's
reason strings (``matcher.go``) where there is one. A TPU7x pool placed by a workload policy gives no
``tpuTopology`` the emulator can read, so its chips and workload type are not compared (docs/local-mode.md).
"""

from __future__ import annotations

import re
from typing import Any

from planb.catalog import tpu
from planb.local.gke_emulator.rules import RuleViolation, tpu_machine

Body = dict[str, Any]

#: GKE: a Standard node pool consumes a specific reservation by name, or one shared from another project as
#: projects/<project>/reservations/<name>; the key is compute.googleapis.com/reservation-name.
DOC_RESERVATIONS = "https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations"
#: Compute Engine: sharing a reservation with other projects (shareSettings SPECIFIC_PROJECTS, projectMap) or with
#: the whole organization (ORGANIZATION).
DOC_SHARED_RESERVATIONS = "https://cloud.google.com/compute/docs/instances/reservations-shared"
RESERVATION_KEY = "compute.googleapis.com/reservation-name"
_RESERVATION_VALUE = re.compile(r"^(?:projects/(?P<project>[^/]+)/reservations/)?(?P<name>[^/]+)$")

#: GKE's cluster autoscaler (GoogleCloudPlatform/cluster-autoscaler) at 7d25050:
_CA = "https://github.com/GoogleCloudPlatform/cluster-autoscaler/blob/7d250507339b3a7583b380349f217ea191ff15ff/"
#: ... a specific reservation serves VMs of its machine type (MatchSpecificReservationShapeWithReasons),
MACHINE_MATCH = _CA + "pkg/reservations/matcher.go#L127-L130"
#: ... an aggregate reservation is "not usable" for a non-TPU workload,
AGGREGATE_TPU = _CA + "pkg/autoprovisioning/injection.go#L2658-L2667"
#: ... BATCH serves multi-host slices, SERVING single-host ones (multi-host: the topology's chips are not one VM's,
#: pkg/cloudprovider/gke/machinetypes/machine_config_provider.go#L641-L651),
AGGREGATE_WORKLOAD = _CA + "pkg/reservations/matcher.go#L207-L223"
#: ... and one reserved accelerator of the pool's machine family holds at least the slice's chips.
AGGREGATE_CHIPS = _CA + "pkg/reservations/matcher.go#L225-L251"


def _check(condition: bool, message: str, source: str) -> None:
    if not condition:
        raise RuleViolation(message, source)


def machine_family(machine_type: str) -> str:
    """The autoscaler's machine family of a machine type: its first segment (ct6e of ct6e-standard-4t, tpu7x)."""
    return machine_type.split("-", 1)[0]


def accelerator_family(accelerator_type: object) -> str:
    """The family an aggregate reservation's acceleratorType URL names (its segment after acceleratorTypes/)."""
    parts = str(accelerator_type or "").split("/")
    return parts[parts.index("acceleratorTypes") + 1] if "acceleratorTypes" in parts[:-1] else ""


def _shared_with(reservation: Body, project: str) -> bool:
    share = reservation.get("shareSettings") or {}
    if share.get("shareType") == "ORGANIZATION":
        # ORGANIZATION: "open to entire Organization" (compute v1 ShareSettings.shareType). The emulator holds no
        # organizations, so every project counts as one of the owner's organization.
        return True
    return share.get("shareType") == "SPECIFIC_PROJECTS" and project in (share.get("projectMap") or {})


def _check_aggregate(pool: Body, name: str, reservation: Body) -> None:
    """The autoscaler's aggregate match for the pool's TPU slice (AGGREGATE_TPU, AGGREGATE_WORKLOAD, ..._CHIPS)."""
    config = pool.get("config") or {}
    machine = str(config.get("machineType") or "")
    found = tpu_machine(machine)
    label = f"Node pool {pool.get('name', '')!r}"
    _check(
        found is not None,
        f"{label} of machine type {machine} cannot consume reservation {name}: it is an aggregate (TPU) reservation, "
        '"Unable to consume aggregate reservation for non-TPU workloads"',
        AGGREGATE_TPU,
    )
    assert found is not None
    generation, machine_info = found
    aggregate = reservation.get("aggregateReservation") or {}
    topology = str((pool.get("placementPolicy") or {}).get("tpuTopology") or "")
    if not topology and (pool.get("placementPolicy") or {}).get("policyName"):
        slice_chips, multi_host = None, None  # a workload policy's topology is not known here
    elif topology:
        shape = tpu.TpuSlice(generation, machine, topology)
        slice_chips, multi_host = shape.chips_per_slice, shape.multi_host
    else:
        slice_chips, multi_host = machine_info.chips_per_vm, False
    # The CA's request triple is {type, topology, count} (matcher.go: fmt.Sprintf("{%s, %s, %d}", ...)); a
    # single-host pool's topology is the one its VM's chips form.
    single = next((t for t in machine_info.topologies if tpu.topology_chips(t) == machine_info.chips_per_vm), "")
    request = f"{{{generation.gke_accelerator}, {topology or single}, {machine_info.chips_per_vm}}}"
    workload = str(aggregate.get("workloadType") or "UNSPECIFIED")
    if multi_host is not None and workload in ("BATCH", "SERVING"):
        _check(
            not multi_host or workload == "BATCH",
            f"{label} is a multi-host TPU slice ({topology}) and reservation {name} has workloadType {workload}: "
            '"requested multihost TPU, reservation has singlehost"; a multi-host slice needs a BATCH reservation',
            AGGREGATE_WORKLOAD,
        )
        _check(
            multi_host or workload == "SERVING",
            f"{label} is a single-host TPU pool and reservation {name} has workloadType BATCH: "
            '"requested singlehost TPU, reservation has multihost"',
            AGGREGATE_WORKLOAD,
        )
    family = machine_family(machine)
    reserved = [
        (
            (item.get("accelerator") or {}).get("acceleratorType"),
            (item.get("accelerator") or {}).get("acceleratorCount"),
        )
        for item in aggregate.get("reservedResources") or []
    ]
    fits = any(
        accelerator_family(kind) == family and (slice_chips is None or slice_chips <= int(count or 0))
        for kind, count in reserved
    )
    held = ", ".join(f"{count} x {accelerator_family(kind) or kind}" for kind, count in reserved) or "nothing"
    _check(
        fits,
        f"{label} needs {slice_chips or 'some'} {family} chips for one slice and reservation {name} reserves "
        f'{held}: "requested TPU accelerator {request}, but it\'s missing from reservation"',
        AGGREGATE_CHIPS,
    )


def check_reservation_affinity(pool: Body, project: str, zone: str, reservations: dict[str, Body]) -> None:
    """A SPECIFIC_RESERVATION pool names one existing reservation of its zone, shared with it, that it matches.

    ``reservations`` maps projects/P/zones/Z/reservations/N to Compute Engine Reservation bodies. GKE creates a
    consuming pool's VMs only from the reservation it names (DOC_RESERVATIONS): one that does not exist in the
    pool's zone, or (another project's) is not shared with the pool's project (DOC_SHARED_RESERVATIONS), cannot
    serve it; nor one whose shape does not match the pool (module docstring). specificReservationRequired false is
    not refused here; planb's modules refuse it as planb's policy.
    """
    affinity = (pool.get("config") or {}).get("reservationAffinity") or {}
    if affinity.get("consumeReservationType") != "SPECIFIC_RESERVATION":
        return
    values = affinity.get("values") or []
    _check(
        affinity.get("key") == RESERVATION_KEY and len(values) == 1,
        f"reservationAffinity SPECIFIC_RESERVATION needs key {RESERVATION_KEY} and one value, the reservation "
        f"(got key {affinity.get('key')!r}, values {values!r})",
        DOC_RESERVATIONS,
    )
    match = _RESERVATION_VALUE.fullmatch(str(values[0]))
    _check(
        match is not None,
        f"Reservation {values[0]!r} is neither a name nor projects/P/reservations/N",
        DOC_RESERVATIONS,
    )
    assert match is not None
    owner = match["project"] or project
    name = f"projects/{owner}/zones/{zone}/reservations/{match['name']}"
    found = reservations.get(name)
    _check(
        found is not None,
        f"Node pool {pool.get('name', '')!r}: reservation {name} does not exist; a node pool consumes a reservation "
        "of its own zone",
        DOC_RESERVATIONS,
    )
    assert found is not None
    if owner != project:
        _check(
            _shared_with(found, project),
            f"Reservation {name} is not shared with project {project}",
            DOC_SHARED_RESERVATIONS,
        )
    if found.get("aggregateReservation"):
        _check_aggregate(pool, name, found)
        return
    reserved = str(((found.get("specificReservation") or {}).get("instanceProperties") or {}).get("machineType"))
    machine = str((pool.get("config") or {}).get("machineType") or "")
    _check(
        reserved.rsplit("/", 1)[-1] == machine,
        f"Node pool {pool.get('name', '')!r} of machine type {machine} cannot consume reservation {name}, which "
        f"reserves {reserved}",
        MACHINE_MATCH,
    )
