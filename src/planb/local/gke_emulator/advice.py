"""Compute Engine's capacity advice: ``advice.capacity`` and ``advice.calendarMode``, scored by planb's own model.

The emulator serves two methods of compute v1 (discovery revision 20261106, as google-api-python-client ships it):

* ``POST /compute/v1/projects/P/regions/R/advice/capacity``: CapacityAdviceRequest -> CapacityAdviceResponse
  (https://cloud.google.com/compute/docs/reference/rest/v1/advice/capacity);
* ``POST /compute/v1/projects/P/regions/R/advice/calendarMode``: CalendarModeAdviceRequest ->
  CalendarModeAdviceResponse (https://cloud.google.com/compute/docs/reference/rest/v1/advice/calendarMode).

Their bodies are held to the document like every other method's (``gke_emulator.conformance``: an unknown field is
Google's 400, an output-only field in a request is dropped). ``capacityHistory`` is not served.

The scores are planb's own model (``planb.local.gke_emulator.obtainability``), not Google's: the grants, stockouts and
Spot preemptions seen per zone, machine type and provisioning model, recorded with the emulator-only switch
``POST /planb/v1/capacity-signals`` (``{"zone", "machineType", "provisioningModel", "outcome": "GRANT" | "STOCKOUT" |
"PREEMPTION", "count"?, "uptimeSeconds"?}``). What the emulator answers:

* ``advice.capacity``: one recommendation (Google: "Initially the API will provide one recommendation"). With
  ``targetShape`` ``ANY_SINGLE_ZONE`` (Google's default for Capacity Advisor) or ``ANY``, one shard of ``size`` VMs
  in the zone and machine type with the best obtainability (ties: the lower ``rank``, then the order given); with
  ``BALANCED``, ``size`` spread evenly over the zones, best first, and the lowest score of the zones used. The zones
  are the request's (``zones/Z``, ``projects/P/zones/Z`` or a full URL; one outside the region is 400), else the
  region's zones the signals name and ``R-a``, ``R-b``, ``R-c``. ``estimatedUptime`` is answered for ``SPOT`` only,
  as one of the values Google's page documents (``ESTIMATED_UPTIMES``): planb's model's estimate rounded down to
  one of them.
* ``advice.calendarMode``: for its one spec (Google: "Currently only one value is allowed"), a ``FUTURE_RESERVATION``
  in the allowed zone with the best obtainability for guaranteed capacity (STANDARD, FLEX_START and
  RESERVATION_BOUND signals) when that is at least ``CALENDAR_THRESHOLD``, from ``startTimeNotEarlierThan`` (or now)
  for ``minDuration`` (or a day); the other zones in ``otherLocations`` as ``RECOMMENDED`` or ``NO_CAPACITY``. A TPU
  spec names its ``vmFamily`` (``VM_FAMILY_CLOUD_TPU_LITE_POD_SLICE_CT6E``: the signals of ``ct6e-*``). A spec
  outside what Google's pages say calendar mode reserves gets no location and every zone ``CONDITIONS_NOT_MET``
  with ``details`` saying which condition (the status the schema gives "if ... the parameters of the time window ...
  did not meet the required conditions"): a ``minDuration`` below 1 day or above 90 ("between 1 and 90 days"), a
  start more than 120 days ahead ("view the availability of TPUs 1 to 120 days in advance";
  https://cloud.google.com/tpu/docs/calendar-mode-reservation), or an ``acceleratorCount`` other than 1, 4, 8, ...,
  1,024 chips ("You can reserve 1, 4, 8, 16, 32, 64, 128, 256, 512, or 1,024 TPU chips per request",
  https://cloud.google.com/compute/docs/instances/create-future-reservations-calendar-mode, Limitations).

TPUs. Google's page on Spot availability says "When you send a request to the advice.capacity API, you can't view the
availability of TPUs" (https://cloud.google.com/compute/docs/instances/view-vm-availability, "Limitations"). It
documents no error for such a request, and the response's ``recommendations`` is an optional list (compute v1
``CapacityAdviceResponse``), so the emulator answers a request whose machine types are all TPU ones (``TPU_FAMILIES``)
as the page's words describe, with nothing to view: 200 and no recommendation (``{}``, an empty list being left out
of proto3 JSON); TPU machine types among others are left out of the choice. This is a reading of the page, not
Google's documented answer; planb's keeper never sends such a request
(``planb.regions.dispatcher.google_advice.no_tpu_advice``). Calendar mode does take TPUs (its ``vmFamily`` enum;
https://cloud.google.com/compute/docs/instances/create-future-reservations-calendar-mode), and the signals of TPU
machine types still score it. The switch ``POST /planb/v1/advice {"machineType": "n2-*", "refuse": true}`` makes the
emulator refuse a shape (a pattern): ``advice.capacity`` naming one answers 400 INVALID_ARGUMENT,
``advice.calendarMode`` marks every zone ``NOT_SUPPORTED``. Google's wording of such a refusal is not published; the
emulator's names the machine type.
"""

from __future__ import annotations

import fnmatch
import re
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from planb.local.gke_emulator import obtainability
from planb.local.gke_emulator.errors import ApiError
from planb.local.gke_emulator.obtainability import Signal, SignalError
from planb.local.gke_emulator.reservations import FAMILY_OF_VM_FAMILY
from planb.local.gke_emulator.store import Store

Body = dict[str, Any]

_ADVICE = re.compile(r"/compute/v1/projects/([^/]+)/regions/([^/]+)/advice/(capacity|calendarMode)")
#: calendarMode recommends a zone only when planb's obtainability there is at least this.
CALENDAR_THRESHOLD = 0.5
#: Calendar mode's bounds (the module's docstring): its duration in days, how far ahead, the chips of one request.
CALENDAR_DAYS, CALENDAR_AHEAD_DAYS = (1, 90), 120
CALENDAR_CHIPS = (1, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
#: The zones assumed for a region whose request names none (beside those the signals name).
DEFAULT_ZONE_SUFFIXES = ("a", "b", "c")
#: The most signals kept (the oldest go first).
MAX_SIGNALS = 10_000
_GUARANTEED = ("STANDARD", "FLEX_START", "RESERVATION_BOUND")
#: The TPU machine families (the first part of a machine type: ct6e of ct6e-standard-4t), GKE's autoscaler's names
#: (``reservations.FAMILY_OF_VM_FAMILY``): advice.capacity shows no availability for them (the module's docstring).
TPU_FAMILIES = frozenset(FAMILY_OF_VM_FAMILY.values())
#: The values Google's page gives ``estimatedUptime`` ("Compute Engine can set the estimated uptime to one of the
#: following values": "60 minutes (3,600 seconds)", "10 minutes (600 seconds)", ...;
#: https://cloud.google.com/compute/docs/instances/view-vm-availability, "Estimated uptime for Spot VMs"), longest
#: first. The page's list goes on past 600 s; the copy read for this did not show the rest, so the emulator answers
#: none of them: an estimate below 600 s is answered 600 s, the shortest value read (a Spot rule that skips below
#: 600 s skips it either way).
ESTIMATED_UPTIMES = (3600, 600)
#: calendarMode's TPU families (FutureResourcesSpecAggregateResources.vmFamily) -> the machine types they cover.
VM_FAMILIES = {
    "VM_FAMILY_CLOUD_TPU_DEVICE_CT3": "ct3-*",
    "VM_FAMILY_CLOUD_TPU_LITE_DEVICE_CT5L": "ct5l-*",
    "VM_FAMILY_CLOUD_TPU_LITE_POD_SLICE_CT5LP": "ct5lp-*",
    "VM_FAMILY_CLOUD_TPU_LITE_POD_SLICE_CT6E": "ct6e-*",
    "VM_FAMILY_CLOUD_TPU_POD_SLICE_CT3P": "ct3p-*",
    "VM_FAMILY_CLOUD_TPU_POD_SLICE_CT4P": "ct4p-*",
    "VM_FAMILY_CLOUD_TPU_POD_SLICE_CT5P": "ct5p-*",
    "VM_FAMILY_CLOUD_TPU_POD_SLICE_TPU7X": "tpu7x-*",
}


def _state(store: Store) -> Body:
    table: Body = store.data["capacityAdvice"]
    table.setdefault("signals", [])
    table.setdefault("refusedMachineTypes", [])
    return table


def _signals(store: Store) -> list[Signal]:
    return [Signal.from_json(s) for s in _state(store)["signals"]]


def _invalid(message: str) -> ApiError:
    return ApiError(400, message, "INVALID_ARGUMENT")


def route(store: Store, method: str, path: str, request: Body) -> Body | None:
    """The answer for an advice path or one of its switches; None for any other path."""
    if path == "/planb/v1/capacity-signals" and method == "POST":
        return record_signal(store, request)
    if path == "/planb/v1/capacity-signals" and method == "GET":
        return {"signals": list(_state(store)["signals"])}
    if path == "/planb/v1/advice" and method == "POST":
        return set_refusal(store, request)
    match = _ADVICE.fullmatch(path)
    if match is None or method != "POST":
        return None
    region = match.group(2)
    if match.group(3) == "capacity":
        return capacity(store, region, request)
    return calendar_mode(store, region, request)


def record_signal(store: Store, request: Body) -> Body:
    """Record one outcome seen (emulator-only switch ``POST /planb/v1/capacity-signals``)."""
    try:
        signal = Signal(
            zone=str(request.get("zone") or ""),
            machine_type=str(request.get("machineType") or ""),
            provisioning_model=str(request.get("provisioningModel") or ""),
            outcome=str(request.get("outcome") or ""),
            time=time.time(),
            count=request.get("count", 1),
            uptime_seconds=request.get("uptimeSeconds"),
        )
    except (SignalError, TypeError) as exc:
        raise _invalid(f"capacity signal refused: {exc}") from exc
    signals = _state(store)["signals"]
    signals.append(signal.to_json())
    del signals[:-MAX_SIGNALS]
    store.save()
    return signal.to_json()


def set_refusal(store: Store, request: Body) -> Body:
    """Refuse (or accept again) the machine types a pattern names (emulator-only switch ``POST /planb/v1/advice``)."""
    pattern = request.get("machineType")
    if not isinstance(pattern, str) or not pattern:
        raise _invalid("machineType must be a machine type or a pattern such as ct6e-*")
    refused = [p for p in _state(store)["refusedMachineTypes"] if p != pattern]
    if request.get("refuse", True):
        refused.append(pattern)
    _state(store)["refusedMachineTypes"] = refused
    store.save()
    return {"refusedMachineTypes": refused}


def _refused(store: Store, machine_type: str) -> bool:
    return any(fnmatch.fnmatchcase(machine_type, p) for p in _state(store)["refusedMachineTypes"])


def _zone_name(value: str, region: str) -> str:
    name = value.rstrip("/").rsplit("/zones/", 1)[-1].removeprefix("zones/")
    if not name.startswith(region + "-"):
        raise _invalid(f"Zone {value!r} is not in region {region}.")
    return name


def _default_zones(signals: list[Signal], region: str) -> list[str]:
    seen = {s.zone for s in signals if s.zone.startswith(region + "-")}
    return sorted(seen | {f"{region}-{suffix}" for suffix in DEFAULT_ZONE_SUFFIXES})


def _duration(seconds: float) -> str:
    return f"{round(seconds)}s"


def estimated_uptime(seconds: float) -> str:
    """planb's model's estimate as the value Google's page gives (``ESTIMATED_UPTIMES``): the longest not above it."""
    return _duration(next((v for v in ESTIMATED_UPTIMES if seconds >= v), ESTIMATED_UPTIMES[-1]))


def capacity(store: Store, region: str, request: Body) -> Body:
    """advice.capacity: one recommendation from planb's model."""
    size = request.get("size")
    if not isinstance(size, int) or size < 1:
        raise _invalid(f"size must be a positive number of VMs, not {size!r}.")
    model = ((request.get("instanceProperties") or {}).get("scheduling") or {}).get("provisioningModel")
    if not model:
        raise _invalid("instanceProperties.scheduling.provisioningModel is required.")
    selections = ((request.get("instanceFlexibilityPolicy") or {}).get("instanceSelections") or {}).values()
    ranked = sorted(enumerate(selections), key=lambda item: (int(item[1].get("rank") or 0), item[0]))
    machine_types = [m for _, selection in ranked for m in selection.get("machineTypes") or []]
    if not machine_types:
        raise _invalid("instanceFlexibilityPolicy.instanceSelections must name at least one machine type.")
    if refused := [m for m in machine_types if _refused(store, m)]:
        raise _invalid(f"Capacity advice is not available for machine type {refused[0]}.")
    machine_types = [m for m in machine_types if m.split("-", 1)[0] not in TPU_FAMILIES]
    if not machine_types:
        return {}  # TPUs: nothing to view (the module's docstring)
    policy = request.get("distributionPolicy") or {}
    signals = _signals(store)
    zones = [_zone_name(str(z.get("zone") or ""), region) for z in policy.get("zones") or []]
    zones = zones or _default_zones(signals, region)
    now = time.time()
    scored = {(m, z): obtainability.score(signals, z, m, [model], now) for m in machine_types for z in zones}
    if policy.get("targetShape") == "BALANCED":
        best_type = max(machine_types, key=lambda m: min(scored[(m, z)].obtainability for z in zones))
        order = sorted(zones, key=lambda z: -scored[(best_type, z)].obtainability)
        counts = {z: size // len(order) + (1 if i < size % len(order) else 0) for i, z in enumerate(order)}
        used = [z for z in order if counts[z]]
        shards = [_shard(z, best_type, model, counts[z]) for z in used]
        worst = min((scored[(best_type, z)] for z in used), key=lambda s: s.obtainability)
        uptimes = [scored[(best_type, z)].estimated_uptime_seconds for z in used]
        return _recommendation(
            worst.obtainability, min(u for u in uptimes if u is not None) if model == "SPOT" else None, shards
        )
    best = max(scored, key=lambda key: scored[key].obtainability)  # max keeps the first of equals: rank, then order
    chosen = scored[best]
    return _recommendation(
        chosen.obtainability, chosen.estimated_uptime_seconds, [_shard(best[1], best[0], model, size)]
    )


def _shard(zone: str, machine_type: str, model: str, count: int) -> Body:
    return {"zone": zone, "machineType": machine_type, "provisioningModel": model, "instanceCount": count}


def _recommendation(score: float, uptime: float | None, shards: list[Body]) -> Body:
    scores: Body = {"obtainability": round(score, 4)}
    if uptime is not None:
        scores["estimatedUptime"] = estimated_uptime(uptime)
    return {"recommendations": [{"scores": scores, "shards": shards}]}


def _timestamp(value: str | None, default: datetime) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else default


def calendar_mode(store: Store, region: str, request: Body) -> Body:
    """advice.calendarMode: a future reservation in the zone planb's model scores best, if any is good enough."""
    specs = request.get("futureResourcesSpecs") or {}
    if len(specs) != 1:
        raise _invalid("futureResourcesSpecs must hold exactly one spec.")
    key, spec = next(iter(specs.items()))
    target = spec.get("targetResources") or {}
    family = (target.get("aggregateResources") or {}).get("vmFamily")
    machine_type = VM_FAMILIES.get(family or "") or (target.get("specificSkuResources") or {}).get("machineType")
    if not machine_type:
        raise _invalid("targetResources must name a machineType or a vmFamily.")
    signals = _signals(store)
    preferences = ((spec.get("locationPolicy") or {}).get("locations")) or {}
    zones = [z for z in _default_zones(signals, region) if f"zones/{z}" not in preferences]
    zones += [_zone_name(k, region) for k, v in preferences.items() if (v or {}).get("preference") != "DENY"]
    now = datetime.now(UTC)
    if _refused(store, machine_type):
        others = {f"zones/{z}": {"status": "NOT_SUPPORTED"} for z in zones}
        return {"recommendations": [{"recommendationsPerSpec": {key: {"otherLocations": others}}}]}
    window = spec.get("timeRangeSpec") or {}
    start = max(now, _timestamp(window.get("startTimeNotEarlierThan"), now))
    duration = float(str(window.get("minDuration") or "86400s").removesuffix("s"))
    if unmet := _unmet(duration, start - now, (target.get("aggregateResources") or {}).get("acceleratorCount")):
        others = {f"zones/{z}": {"status": "CONDITIONS_NOT_MET", "details": unmet} for z in zones}
        return {"recommendations": [{"recommendationsPerSpec": {key: {"otherLocations": others}}}]}
    scores = {
        z: obtainability.score(signals, z, machine_type, _GUARANTEED, now.timestamp()).obtainability for z in zones
    }
    best = max(zones, key=lambda z: scores[z]) if zones else None
    advice: Body = {"recommendationId": str(uuid.uuid4()), "recommendationType": "FUTURE_RESERVATION"}
    if best is not None and scores[best] >= CALENDAR_THRESHOLD:
        end = start + timedelta(seconds=duration)
        advice.update(location=f"zones/{best}", startTime=_rfc3339(start), endTime=_rfc3339(end))
    advice["otherLocations"] = {
        f"zones/{z}": {"status": "RECOMMENDED" if scores[z] >= CALENDAR_THRESHOLD else "NO_CAPACITY"}
        for z in zones
        if f"zones/{z}" != advice.get("location")
    }
    return {"recommendations": [{"recommendationsPerSpec": {key: advice}}]}


def _unmet(duration_s: float, ahead: timedelta, chips: object) -> str:
    """Which of calendar mode's conditions (the module's docstring) the spec does not meet, "" when it meets them."""
    low, high = CALENDAR_DAYS
    if not low * 86400 <= duration_s <= high * 86400:
        return f"minDuration {duration_s:g}s: a calendar-mode reservation lasts {low} to {high} days"
    if ahead > timedelta(days=CALENDAR_AHEAD_DAYS):
        return f"the start is {ahead.days} days ahead: availability is shown up to {CALENDAR_AHEAD_DAYS} days ahead"
    if chips is not None and str(chips) not in {str(c) for c in CALENDAR_CHIPS}:
        return f"acceleratorCount {chips}: a request reserves {', '.join(map(str, CALENDAR_CHIPS))} chips"
    return ""


def _rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
