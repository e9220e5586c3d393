"""Kueue's record of a job's runs: each admission of its Workloads, and the ProvisioningRequests' attempts.

A run is one admission. A Workload's conditions keep only the latest transition of each type, so the latest
run comes from them: queued since creationTimestamp, or since the Requeued condition when there is one
(Kueue's workload.QueuedWaitTime), quota reserved at QuotaReserved, admitted at Admitted. Earlier runs come from
the Events Kueue v0.19.2 records on the Workload: ``QuotaReserved`` ("Quota reserved in ClusterQueue CQ, wait time
since queued was Ns", pkg/scheduler/scheduler.go recordQuotaReservationMetrics) and ``Admitted`` ("Admitted by
ClusterQueue CQ, wait time since reservation was Ns", the scheduler for a flavor without checks,
pkg/controller/core/workload_controller.go once the checks are Ready), whose N seconds are Kueue's own figures.
Kueue writes them through client-go's events API (tools/events): a repeat of the same reason on the same Workload
within 6 minutes is folded into the first Event's series (its count and lastObservedTime; the note stays the
first one's), and kube-apiserver drops Events after its --event-ttl (one hour upstream), so older runs can be
missing and folded ones lack their wait figures. An Event is recorded after the condition it reports, so an
Admitted condition no Event at or after it covers is a run of its own. A concurrent ladder's runs are its
variants' admissions, one variant per flavor (planb.status.variants).

Each ProvisioningRequest is one attempt: its creationTimestamp to its Provisioned condition (or its Failed one,
or so far).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from planb.kube import Obj
from planb.kube_objects import conditions, parse_time, since
from planb.status import lifecycle

RESERVED_EVENT = "QuotaReserved"
ADMITTED_EVENT = "Admitted"
#: The accelerator resources whose flavor names the plan (report.JobStatus.accelerator_flavor).
ACCELERATORS = ("google.com/tpu", "nvidia.com/gpu")
_QUEUED_WAIT = re.compile(r"wait time since queued was (\d+)s")
_RESERVED_WAIT = re.compile(r"wait time since reservation was (\d+)s")


@dataclass(frozen=True)
class Admission:
    """One admission of one of the job's Workloads: a run as Kueue records it."""

    workload: str
    #: The flavor of its accelerators ('' when Kueue's records of it do not say).
    flavor: str
    at: float
    #: Queued until quota was reserved, and reserved until admitted (the admission checks: provisioning).
    waited_s: float | None
    checks_s: float | None


@dataclass(frozen=True)
class Attempt:
    """One ProvisioningRequest: created until Provisioned (or Failed, or so far)."""

    name: str
    workload: str
    created: float
    seconds: float
    #: Provisioned, Failed, or the state it still waits in (then ``seconds`` is so far).
    outcome: str
    done: bool


def event_object(ev: Obj) -> Obj:
    return ev.get("involvedObject") or ev.get("regarding") or {}


def _wait(pattern: re.Pattern[str], note: str) -> float | None:
    found = pattern.search(note)
    return float(found.group(1)) if found else None


def _occurrences(
    events: list[Obj], namespace: str, name: str, reason: str, pattern: re.Pattern[str]
) -> tuple[list[tuple[float, float | None]], int]:
    """(time, Kueue's wait figure) of each occurrence of ``reason`` on Workload ``name`` the Events show, and how
    many more they count without a time (a series keeps its first occurrence and its latest)."""
    out: list[tuple[float, float | None]] = []
    hidden = 0
    for ev in events:
        obj = event_object(ev)
        if ev.get("reason") != reason or obj.get("name") != name or obj.get("namespace", namespace) != namespace:
            continue
        first = parse_time(ev.get("eventTime") or ev.get("firstTimestamp") or ev.get("lastTimestamp"))
        if first is None:
            continue
        out.append((first, _wait(pattern, str(ev.get("message") or ev.get("note") or ""))))
        series = ev.get("series") or {}
        count = int(series.get("count") or ev.get("count") or 1)
        last = parse_time(series.get("lastObservedTime") or (ev.get("lastTimestamp") if count > 1 else ""))
        if count > 1 and last is not None and last > first:
            out.append((last, None))
            hidden += count - 2
        elif count > 1:
            hidden += count - 1
    return sorted(out), hidden


def _flavor_now(wl: Obj) -> str:
    assignments = ((wl.get("status") or {}).get("admission") or {}).get("podSetAssignments") or []
    flavors = [(r, f) for psa in assignments for r, f in (psa.get("flavors") or {}).items()]
    return next((f for r, f in flavors if r in ACCELERATORS), next((f for _, f in flavors), ""))


def admissions(workloads: list[Obj], events: list[Obj], variant_flavor: str = "") -> tuple[list[Admission], int]:
    """Every admission of ``workloads`` Kueue's Events and conditions show, oldest first, and the number of
    admissions the Events count without a time. ``variant_flavor`` names the annotation of a variant's one flavor."""
    out: list[Admission] = []
    hidden = 0
    for wl in workloads:
        meta = wl["metadata"]
        name, namespace = meta["name"], meta.get("namespace", "")
        fixed = str((meta.get("annotations") or {}).get(variant_flavor, "")) if variant_flavor else ""
        admitted, folded = _occurrences(events, namespace, name, ADMITTED_EVENT, _RESERVED_WAIT)
        reserved, _ = _occurrences(events, namespace, name, RESERVED_EVENT, _QUEUED_WAIT)
        hidden += folded
        runs: list[Admission] = []
        previous = float("-inf")
        for at, checks in admitted:
            quota = [w for t, w in reserved if previous < t <= at]
            runs.append(Admission(name, fixed, at, quota[-1] if quota else None, checks))
            previous = at
        conds = conditions(wl)
        now_at = since(conds, "Admitted")
        if now_at is not None:
            reserved_at = since(conds, "QuotaReserved")
            requeued = parse_time((conds.get("Requeued") or {}).get("lastTransitionTime"))
            queued = requeued if requeued is not None else parse_time(meta.get("creationTimestamp"))
            waited = reserved_at - queued if reserved_at is not None and queued is not None else None
            checks = now_at - reserved_at if reserved_at is not None else None
            flavor = fixed or _flavor_now(wl)
            if not runs or runs[-1].at < now_at:  # an Event comes after its condition: none covers this admission
                runs.append(Admission(name, flavor, now_at, waited, checks))
            else:
                last = runs[-1]
                runs[-1] = Admission(
                    name,
                    flavor,
                    last.at,
                    last.waited_s if last.waited_s is not None else waited,
                    last.checks_s if last.checks_s is not None else checks,
                )
        out += runs
    return sorted(out, key=lambda a: a.at), hidden


def attempt(pr: Obj, now: float) -> Attempt | None:
    meta = pr["metadata"]
    created = parse_time(meta.get("creationTimestamp"))
    owner = next((o.get("name", "") for o in meta.get("ownerReferences", []) if o.get("kind") == "Workload"), "")
    if created is None:
        return None
    conds = conditions(pr)
    for kind in ("Provisioned", "Failed"):
        end = since(conds, kind)
        if end is not None:
            return Attempt(meta["name"], owner, created, end - created, kind, True)
    return Attempt(meta["name"], owner, created, now - created, lifecycle.request_state(pr)[0], False)


def event_namespace(ev: Obj, default: str) -> str:
    return str((ev.get("metadata") or {}).get("namespace") or event_object(ev).get("namespace") or default)


__all__ = ["Admission", "Attempt", "admissions", "attempt", "event_namespace"]
