# planb.gke: Compute Engine reservations, read and checked before a node pool consumes one.
"""A node pool that consumes a reservation by name, checked against the reservation before any write.

Compute Engine API v1 ``GET compute/v1/projects/P/zones/Z/reservations/NAME``
(https://cloud.google.com/compute/docs/reference/rest/v1/reservations/get) returns a Reservation: ``name``,
``zone`` (URL), ``status`` (CREATING, READY, UPDATING, DELETING), ``specificReservationRequired``, one shape
(``specificReservation`` for VMs of one machine type, ``aggregateReservation`` for TPU chips; what each needs of a
pool is in ``reservation_shapes``) and ``shareSettings {shareType LOCAL | SPECIFIC_PROJECTS | ORGANIZATION,
projectMap {<project id>: {projectId}}}`` (the v1 document lists no folder form).

What GKE and Compute Engine require of a pool that consumes a reservation by name
(https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations, and Compute Engine's
https://cloud.google.com/compute/docs/instances/reservations-consume): the reservation exists in the pool's zone,
its shape matches the pool, and a reservation of another project is shared with the cluster's project, by name
(SPECIFIC_PROJECTS) or with the whole organization (ORGANIZATION;
https://cloud.google.com/compute/docs/instances/reservations-shared). Those are refused here as GKE would.

planb's policy on top (said so in each message):

* ``specificReservationRequired`` true: a reservation any VM may consume (ANY_RESERVATION, the default of every
  VM and of GKE pools without an affinity) can be drained by VMs that never asked for it, and then the
  reservation rung's Kueue quota promises capacity that is gone;
* it holds the VMs (or TPU chips) the plan's slices need, for the same reason;
* ``status`` READY.
"""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.planb.gke.plugins.module_utils.client import api_path
from ansible_collections.planb.gke.plugins.module_utils.credentials import check_auth
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError
from ansible_collections.planb.gke.plugins.module_utils.node_pool_request import NodePoolRequest
from ansible_collections.planb.gke.plugins.module_utils.project_apis import ApiClient, endpoint, service_endpoint
from ansible_collections.planb.gke.plugins.module_utils.reservation_shapes import (
    DOC_RESERVATION,
    aggregate_problems,
    create_hint,
    specific_problems,
)
from ansible_collections.planb.gke.plugins.module_utils.validate_pool import DOC_RESERVATIONS as DOC_CONSUME
from ansible_collections.planb.gke.plugins.module_utils.validate_pool import RESERVATION

Body = dict[str, Any]
Params = dict[str, Any]

COMPUTE_ENDPOINT = "https://compute.googleapis.com/compute"
DOC_SHARED = "https://cloud.google.com/compute/docs/instances/reservations-shared"


def split_reservation(value: str, project: str) -> tuple[str, str]:
    """(owner project, name) of a reservation given by name (the cluster's project) or by its project path."""
    match = RESERVATION.fullmatch(value or "")
    if not match:
        raise GkeError(
            f"reservation {value!r} must be a reservation name (1-63 lowercase letters, digits or hyphens) or "
            f"projects/<project>/reservations/<name> for one shared from another project ({DOC_CONSUME})"
        )
    return match["project"] or project, match["name"]


def pool_zone(node_locations: list[str] | None, location: str) -> str:
    """The one zone of a pool (its node_locations, else a zonal cluster's location), where its reservation lives."""
    locations = node_locations or []
    if len(locations) == 1:
        return str(locations[0])
    if not locations and re.fullmatch(r"^[a-z]+-[a-z]+[0-9]+-(ai[0-9]+)?[a-z]$", location):
        return location
    raise GkeError(
        f"reservation_affinity SPECIFIC_RESERVATION: a reservation is zonal, so the pool needs one zone: "
        f"node_locations has {locations or 'none'} in {location}; give exactly one zone ({DOC_CONSUME})"
    )


def compute_client(params: Params) -> ApiClient:
    """The Compute Engine API (or the emulator's, under a loopback api_endpoint), with the module's credentials."""
    return ApiClient(params, endpoint(params, "compute_endpoint", COMPUTE_ENDPOINT, "compute"), "Compute Engine API")


def get_reservation(client: ApiClient, project: str, zone: str, name: str) -> Body | None:
    """The reservation, None when the zone holds none of that name."""
    found = client.request("GET", api_path("projects", project, "zones", zone, "reservations", name), allow_404=True)
    return found if isinstance(found, dict) else None


def _short(url: object) -> str:
    return str(url or "").rstrip("/").rsplit("/", 1)[-1]


def _shared(share: Body, consumer_project: str) -> bool:
    if share.get("shareType") == "ORGANIZATION":
        # Shared with every project of the owner's organization ("open to entire Organization", compute v1
        # ShareSettings.shareType); the reservation does not say which organization that is, so it is not checked.
        return True
    return share.get("shareType") == "SPECIFIC_PROJECTS" and consumer_project in (share.get("projectMap") or {})


def reservation_problems(
    reservation: Body | None,
    where: str,
    machine_type: str | None,
    vm_count: int | None,
    consumer_project: str | None,
    require_specific: bool,
    tpu_topology: str | None = None,
    by_policy: bool = False,
) -> list[str]:
    """What keeps a pool of ``machine_type`` (a TPU slice of ``tpu_topology``) in ``consumer_project`` from consuming
    ``reservation`` (at ``where``, projects/P/zones/Z/reservations/N), each with its fix; [] when nothing does."""
    project, zone, name = where.split("/")[1], where.split("/")[3], where.split("/")[5]
    if reservation is None:
        hint = create_hint(name, project, zone, machine_type, tpu_topology, vm_count)
        return [
            f"reservation {name} does not exist in project {project}, zone {zone} (Compute Engine API: "
            f"GET {where} answered 404). A pool can only consume a reservation of its own zone ({DOC_CONSUME}): "
            f"create it ({hint}), or fix the plan's reservation / reservation_project / the zone"
        ]
    problems: list[str] = []
    if reservation.get("aggregateReservation"):
        problems += aggregate_problems(reservation, name, machine_type, tpu_topology, vm_count, by_policy)
    else:
        problems += specific_problems(reservation, name, machine_type, vm_count)
    reserved_zone = _short(reservation.get("zone")) or zone
    if reserved_zone != zone:
        problems.append(f"reservation {name} is in zone {reserved_zone}, the pool in {zone}: use one of the pool's")
    if consumer_project and consumer_project != project:
        share = reservation.get("shareSettings") or {}
        if not _shared(share, consumer_project):
            problems.append(
                f"reservation {name} of project {project} is not shared with project {consumer_project} "
                f"(shareSettings {share or 'unset, a single-project reservation'}): share it with "
                f"`gcloud compute reservations update {name} --project={project} --zone={zone} "
                f"--add-share-with={consumer_project}` ({DOC_SHARED})"
            )
    if require_specific and not reservation.get("specificReservationRequired"):
        problems.append(
            f"reservation {name} has specificReservationRequired false: planb's policy refuses it, because any VM "
            "with the default affinity (ANY_RESERVATION) may consume it, and then the reservation rung promises "
            "Kueue capacity other VMs took (GKE's node auto-provisioning refuses to target such a reservation too: "
            '"SpecificReservationRequired is not enabled so reservation cannot be specifically targeted"); create '
            "it with --require-specific-reservation "
            f"({DOC_RESERVATION}), or set require_specific false to accept that"
        )
    status = reservation.get("status") or "READY"
    if status != "READY":
        problems.append(f"reservation {name} is {status}, not READY: planb's policy waits for READY; re-run later")
    return problems


def check_reservation(request: NodePoolRequest) -> Body:
    """Read the reservation a pool of ``request`` consumes (SPECIFIC_RESERVATION) in its zone and raise GkeError
    naming every problem; returns the reservation."""
    zone = pool_zone(request.node_locations, request.location)
    consumer = request.project or ""
    project, name = split_reservation(request.reservation or "", consumer)
    base = service_endpoint(request.compute_endpoint, request.access.api_endpoint, COMPUTE_ENDPOINT, "compute")
    client = ApiClient(request.access, base, "Compute Engine API")
    where = f"projects/{project}/zones/{zone}/reservations/{name}"
    found = get_reservation(client, project, zone, name)
    problems = reservation_problems(
        found,
        where,
        request.machine_type,
        None,
        consumer,
        request.reservation_require_specific,
        request.tpu_topology,
        bool(request.placement_policy),
    )
    if problems or found is None:  # a missing reservation is always a problem
        raise GkeError("Reservation check failed (nothing was changed): " + "; ".join(problems) + ".")
    return found


def run_reservation_info(module: Any) -> Body:
    """gcp_reservation_info: read the reservation; with machine_type, fail on what keeps a pool from consuming it."""
    params = module.params
    zone = str(params["location"])
    if not re.fullmatch(r"^[a-z]+-[a-z]+[0-9]+-(ai[0-9]+)?[a-z]$", zone):
        raise GkeError(
            f"location {zone!r} must be a zone such as us-east5-b: a reservation is zonal. Nothing was sent."
        )
    if params.get("vm_count") is not None and params["vm_count"] < 1:
        raise GkeError(f"vm_count must be at least 1, got {params['vm_count']}")
    check_auth(params)
    project, name = split_reservation(params["name"], params["project"])
    found = get_reservation(compute_client(params), project, zone, name)
    out: Body = {"changed": False, "exists": found is not None, "reservation": found or {}, "checked": False}
    if not params.get("machine_type"):
        return out
    where = f"projects/{project}/zones/{zone}/reservations/{name}"
    problems = reservation_problems(
        found,
        where,
        params["machine_type"],
        params.get("vm_count"),
        params["project"],
        params["require_specific"],
        params.get("tpu_topology"),
    )
    if problems:
        raise GkeError("Reservation check failed (nothing was changed): " + "; ".join(problems) + ".")
    out["checked"] = True
    return out
