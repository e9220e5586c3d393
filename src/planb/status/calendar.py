"""`planb status JOB`: what calendar mode offers a TPU job that has waited past the operator's bound.

The keeper's calendar watch (``planb regions keep --calendar-after``, ``planb.regions.calendar.watch``) asks Compute
Engine's ``advice.calendarMode`` for such a job in each region and keeps the answers in the manager's ConfigMap
``kueue-system/planb-regions-calendar``; this takes the job's entry there (planb.status.gather reads the ConfigMap)
and says, per region, the zone, start and duration offered and the command that would reserve it, or why no zone
was recommended. Nothing is shown for a job without an entry (not a TPU job, not waiting past the bound, or no keeper
asking), nor when the ConfigMap cannot be read (a user who may not read Kueue's namespace).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from planb.kube import Obj
from planb.regions.calendar.offers import CalendarOffer
from planb.regions.calendar.watch import JOBS_KEY, job_key


def for_workload(configmap: Obj | None, workload: Obj) -> list[str]:
    """The lines for the job of ``workload`` (the module's docstring) in the calendar ConfigMap as
    planb.status.gather read it (None: none, or not readable), [] when there is nothing to show."""
    found = entry(configmap, job_key(workload))
    return lines(found) if found is not None else []


def entry(configmap: Obj | None, key: str) -> dict[str, Any] | None:
    """The entry of the job ``key`` (``<namespace>/<RayJob>``) in the calendar ConfigMap, or None (no entry, no
    ConfigMap, not readable)."""
    try:
        jobs = json.loads(((configmap or {}).get("data") or {}).get(JOBS_KEY) or "{}")
    except (ValueError, RecursionError):
        return None
    value = jobs.get(key) if isinstance(jobs, dict) else None
    return value if isinstance(value, dict) else None


def _stamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _span(seconds: float) -> str:
    if seconds >= 86400 and seconds % 86400 == 0:
        days = int(seconds // 86400)
        return f"{days} day{'s' if days != 1 else ''}"
    return f"{seconds / 3600:.1f} h"


def lines(found: dict[str, Any]) -> list[str]:
    """The entry as text: the wait when the keeper asked, then one block per region."""
    since = float(found.get("waitingSince") or 0.0)
    asked = float(found.get("asked") or since)
    head = (
        f"Calendar mode: waiting since {_stamp(since)}; at {_stamp(asked)}, {(asked - since) / 60:.0f} min in, over "
        f"the keeper's bound of {float(found.get('afterSeconds') or 0) / 60:.0f} min, advice.calendarMode offered for "
        f"{found.get('chips')} chips of {str(found.get('shape', '')).partition(':')[0]} ({found.get('workloadType')}), "
        f"{found.get('days')} day(s) from then:"
    )
    out = [head]
    for data in found.get("offers") or []:
        offer = CalendarOffer.from_json(data if isinstance(data, dict) else {})
        if not offer.zone:
            out.append(f"  {offer.region}: {offer.why or 'no zone recommended'}")
            continue
        out.append(
            f"  {offer.region}: zone {offer.zone}, from {offer.start} for {_span(offer.duration_s)} (to {offer.end})"
        )
        if data.get("reserve"):
            out.append(f"    to reserve it: {data['reserve']}")
    return out
