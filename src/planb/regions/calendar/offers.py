"""Calendar-mode advice for a TPU job: what Compute Engine's ``advice.calendarMode`` offers for the job's shape, and
the command that would reserve it.

Google's facts. ``advice.capacity`` shows no TPU availability ("you can't view the availability of TPUs",
https://cloud.google.com/compute/docs/instances/view-vm-availability, Limitations), but calendar mode does: "You can
view the availability of TPUs 1 to 120 days in advance", and a future reservation in calendar mode reserves TPUs "for a
specific start time and duration, between 1 and 90 days" (https://cloud.google.com/tpu/docs/calendar-mode-reservation).
The method is ``compute.advice.calendarMode`` (compute v1 discovery revision 20261106, ``POST
projects/{project}/regions/{region}/advice/calendarMode``,
https://cloud.google.com/compute/docs/reference/rest/v1/advice/calendarMode):

* the request, ``CalendarModeAdviceRequest``: ``futureResourcesSpecs``, a map of one spec ("Currently only one value
  is allowed in this map"); a TPU spec's ``targetResources.aggregateResources`` names ``vmFamily``, ``workloadType``
  and ``acceleratorCount`` (chips; "Use for TPU reservations"), its ``timeRangeSpec`` (``FlexibleTimeRange``)
  ``startTimeNotEarlierThan`` and ``minDuration``;
* the answer, ``CalendarModeAdviceResponse``: ``recommendations[].recommendationsPerSpec[<the spec's key>]``
  (``FutureResourcesRecommendation``): ``location`` (``zones/Z``; "If not set, it means that no location is
  recommended - see other_locations for details"), ``startTime``, ``endTime``, ``recommendationType``
  (``FUTURE_RESERVATION``) and ``otherLocations`` (zone -> ``status``: ``NO_CAPACITY``, ``NOT_SUPPORTED``, ...).

A multi-host slice is asked as ``BATCH`` and a single-host one as ``SERVING``, the workload types GKE's autoscaler
requires of an aggregate reservation for each (GoogleCloudPlatform/cluster-autoscaler at 7d25050,
``pkg/reservations/matcher.go``, MatchAggregateReservationShapeWithReasons; docs/capacity-ladder.md).

The command that reserves an offer is gcloud's ``beta compute future-reservations create`` in calendar mode
(https://cloud.google.com/compute/docs/instances/create-future-reservations-calendar-mode;
https://cloud.google.com/sdk/gcloud/reference/beta/compute/future-reservations/create), with the chip count, the
workload type, the zone and the window the answer gave; gcloud's ``--tpu-version`` takes V5E, V5P and V6E, so for
another family the values are given for the API's ``futureReservations.insert`` instead (``reserve_command``).
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from planb.catalog import profiles
from planb.kube import KubeLimitError
from planb.regions.access.kubeconfig import is_dns_subdomain
from planb.regions.dispatcher.google_advice import Post
from planb.regions.dispatcher.ledger import shape_parts

#: compute v1 ``FutureResourcesSpecAggregateResources.vmFamily`` by TPU machine family (a machine type's first part).
VM_FAMILIES = {
    "ct5lp": "VM_FAMILY_CLOUD_TPU_LITE_POD_SLICE_CT5LP",
    "ct5p": "VM_FAMILY_CLOUD_TPU_POD_SLICE_CT5P",
    "ct6e": "VM_FAMILY_CLOUD_TPU_LITE_POD_SLICE_CT6E",
    "ct4p": "VM_FAMILY_CLOUD_TPU_POD_SLICE_CT4P",
    "tpu7x": "VM_FAMILY_CLOUD_TPU_POD_SLICE_TPU7X",
}
#: gcloud's ``--tpu-version`` by planb's TPU generation (the flag's choices: V5E, V5P, V6E).
TPU_VERSIONS = {"v5e": "V5E", "v5p": "V5P", "v6e": "V6E"}
#: Google's bounds on a calendar-mode reservation's duration: 1 to 90 days (the TPU page above).
MIN_DAYS, MAX_DAYS = 1, 90
SPEC_KEY = "planb"
CREATE_DOC = "https://cloud.google.com/compute/docs/instances/create-future-reservations-calendar-mode"


@dataclass(frozen=True)
class TpuSpec:
    """A TPU job's shape as calendar mode reserves it: its VM family, workload type and chips."""

    machine_type: str
    generation: str
    vm_family: str
    workload_type: str
    chips: int


def tpu_spec(shape: str) -> TpuSpec | None:
    """The calendar-mode spec of a job's shape (``ct6e-standard-4t:4``: 4 VMs); None for a shape that is not a TPU
    one planb's catalog and calendar mode both know."""
    machine_type, vms = shape_parts(shape)
    found = [p for p in profiles.PROFILES.values() if p.kind == "tpu" and p.machine_type == machine_type]
    family = VM_FAMILIES.get(machine_type.split("-", 1)[0])
    if not found or family is None:
        return None
    chips = vms * found[0].chips_per_host
    return TpuSpec(machine_type, found[0].generation, family, "BATCH" if vms > 1 else "SERVING", chips)


def _rfc3339(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def calendar_request(spec: TpuSpec, start: float, days: int) -> dict[str, Any]:
    """The CalendarModeAdviceRequest for ``spec``: ``days`` days, starting no earlier than ``start``."""
    if not MIN_DAYS <= days <= MAX_DAYS:
        raise ValueError(f"{days} days: calendar mode reserves {MIN_DAYS} to {MAX_DAYS} days")
    aggregate = {"vmFamily": spec.vm_family, "workloadType": spec.workload_type, "acceleratorCount": str(spec.chips)}
    window = {"startTimeNotEarlierThan": _rfc3339(start), "minDuration": f"{days * 86400}s"}
    return {
        "futureResourcesSpecs": {
            SPEC_KEY: {"targetResources": {"aggregateResources": aggregate}, "timeRangeSpec": window}
        }
    }


def _moment(text: object) -> float | None:
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


@dataclass(frozen=True)
class CalendarOffer:
    """What calendar mode answered for one region: a zone and window (``zone`` empty: none recommended, ``why``
    says the other zones' statuses or why there is no answer)."""

    region: str
    zone: str = ""
    start: str = ""
    end: str = ""
    why: str = ""

    @property
    def duration_s(self) -> float:
        start, end = _moment(self.start), _moment(self.end)
        return end - start if start is not None and end is not None else 0.0

    @staticmethod
    def from_answer(region: str, body: dict[str, Any]) -> CalendarOffer:
        """Read a CalendarModeAdviceResponse: the first recommendation for planb's one spec."""
        recommendations = body.get("recommendations") or []
        per_spec = (recommendations[0].get("recommendationsPerSpec") or {}) if recommendations else {}
        found = per_spec.get(SPEC_KEY) if isinstance(per_spec, dict) else None
        if not isinstance(found, dict):
            return CalendarOffer(region, why="the answer holds no recommendation for the job's spec")
        location = str(found.get("location") or "")
        if location and _moment(found.get("startTime")) is not None and _moment(found.get("endTime")) is not None:
            zone = location.rsplit("/", 1)[-1]
            return CalendarOffer(region, zone, str(found["startTime"]), str(found["endTime"]))
        others = found.get("otherLocations") or {}
        statuses = sorted(f"{z.rsplit('/', 1)[-1]} {(v or {}).get('status', '?')}" for z, v in others.items())
        return CalendarOffer(region, why="no zone recommended" + (f" ({', '.join(statuses)})" if statuses else ""))

    def to_json(self) -> dict[str, str]:
        return {"region": self.region, "zone": self.zone, "start": self.start, "end": self.end, "why": self.why}

    @staticmethod
    def from_json(data: dict[str, Any]) -> CalendarOffer:
        return CalendarOffer(*(str(data.get(k) or "") for k in ("region", "zone", "start", "end", "why")))


def ask_calendar(post: Post, project: str, region: str, spec: TpuSpec, start: float, days: int) -> CalendarOffer:
    """calendarMode's answer for ``spec`` in ``region``; a refusal, no answer or an answer past the advice limits is
    an offer without a zone that says why. A region or project that is not a DNS-1123 name is not asked (planb's
    policy, as ``planb.regions.dispatcher.google_advice.ask``: it would go into the request's path)."""
    for what, name in (("region", region), ("project", project)):
        if not is_dns_subdomain(name):
            return CalendarOffer(region, why=f"not asked: the {what} {name!r} is not a DNS-1123 name")
    path = (
        f"/compute/v1/projects/{urllib.parse.quote(project, safe='')}/regions/"
        f"{urllib.parse.quote(region, safe='')}/advice/calendarMode"
    )
    try:
        status, body = post(path, calendar_request(spec, start, days))
    except OSError as exc:
        return CalendarOffer(region, why=f"no answer: {exc}")
    except KubeLimitError as exc:  # too slow or too large: not read
        return CalendarOffer(region, why=f"answer not read: {exc}")
    if status != 200:
        error = body.get("error") if isinstance(body, dict) else None
        message = str((error or {}).get("message") or "") if isinstance(error, dict) else ""
        return CalendarOffer(region, why=f"calendarMode answered {status}" + (f": {message}" if message else ""))
    return CalendarOffer.from_answer(region, body)


def reserve_command(offer: CalendarOffer, spec: TpuSpec, project: str, name: str) -> str:
    """The command (or, for a family gcloud's --tpu-version lacks, the API values) that would reserve ``offer``."""
    version = TPU_VERSIONS.get(spec.generation)
    if version is None:
        return (
            f"futureReservations.insert in projects/{project}/zones/{offer.zone} ({CREATE_DOC}): reservationMode "
            f"CALENDAR, aggregateReservation vmFamily {spec.vm_family}, workloadType {spec.workload_type}, "
            f"{spec.chips} chips, timeWindow {offer.start} to {offer.end}"
        )
    return (
        f"gcloud beta compute future-reservations create {name} --project={project} --zone={offer.zone} "
        f"--tpu-version={version} --chip-count={spec.chips} --workload-type={spec.workload_type} "
        f"--start-time={offer.start} --end-time={offer.end} --reservation-mode=CALENDAR "
        f"--planning-status=SUBMITTED --require-specific-reservation --auto-delete-auto-created-reservations "
        f"({CREATE_DOC})"
    )
