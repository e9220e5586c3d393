"""The keeper's calendar watch: for each TPU job that has waited longer than the operator's bound, what Compute Engine's
``advice.calendarMode`` offers for its shape in each region, kept on the manager for ``planb status JOB`` to show.

``planb regions keep --calendar-after SECONDS --advice-url URL --project P`` runs it beside the keeper (the bound is
the operator's: the keeper's flag). At each look (at most one every ``CalendarSettings.look_every_s``):

1. **The long waits.** The manager's Workloads not yet placed in a region (no ``status.clusterName``), not finished and
   not being deleted, whose job's shape is a TPU one calendar mode takes (``offers.tpu_spec``, the shape as
   the dispatcher reads it, ``planb.regions.dispatcher.reads.job_shape``), created more than ``after_s`` ago.
   A TPU job has no other advice: ``advice.capacity`` shows no TPU availability
   (``planb.regions.dispatcher.google_advice``).
2. **Ask.** Each region of the MultiKueueConfig is asked ``advice.calendarMode`` for the job's chips, ``days`` days
   from now (``offers.ask_calendar``); a job is asked again only after ``ask_every_s``. planb's policy: an
   hour, because calendar mode plans days ahead (1 to 120 days, 1 to 90 long) and an answer an hour old still says
   where a reservation could be had, while every look would cost a call per region per job.
3. **Keep.** The answers, each offer with the command that would reserve it (``offers.reserve_command``), go
   to the ConfigMap ``kueue-system/planb-regions-calendar`` (``data.jobs``, JSON, keyed ``<namespace>/<RayJob>``);
   a job no longer waiting leaves it. planb's policy: a ConfigMap of its own beside the ledger's (the dispatcher
   rewrites that one at each request), in Kueue's namespace for the reason docs/regions.md gives for the keeper's; at
   most ``MAX_JOBS`` jobs, the longest waiting, so the ConfigMap stays far below its 1 MiB.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from planb.kube import Kube, KubeError, Obj
from planb.regions.access.connection import KUEUE, KUEUE_NAMESPACE
from planb.regions.calendar.offers import CalendarOffer, TpuSpec, reserve_command, tpu_spec
from planb.regions.dispatcher.reads import job_shape

CONFIGMAP = "planb-regions-calendar"
JOBS_KEY = "jobs"
#: The most jobs kept (the longest waiting): an entry is some hundred bytes a region.
MAX_JOBS = 200
#: calendarMode for one region: (region, the job's spec, the start asked, days) -> its offer.
AskCalendar = Callable[[str, TpuSpec, float, int], CalendarOffer]


@dataclass(frozen=True)
class CalendarSettings:
    """The operator's bound and planb's pace (the module's docstring)."""

    after_s: float
    project: str
    config: str = "planb-regions"
    days: int = 1
    ask_every_s: float = 3600.0
    look_every_s: float = 30.0


def _created(workload: Obj) -> float | None:
    text = str(workload["metadata"].get("creationTimestamp") or "")
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def rayjob_of(workload: Obj) -> str:
    """The RayJob the Workload is Kueue's for (its ownerReference), else the Workload's own name."""
    owners = workload["metadata"].get("ownerReferences") or []
    names = [o.get("name") for o in owners if o.get("kind") == "RayJob" and o.get("name")]
    return str(names[0]) if names else str(workload["metadata"]["name"])


def job_key(workload: Obj) -> str:
    """The job's key in the ConfigMap: ``<namespace>/<RayJob>``."""
    return f"{workload['metadata'].get('namespace', '')}/{rayjob_of(workload)}"


def waiting(workload: Obj) -> bool:
    """Whether the Workload still waits for a region: not placed, not finished, not being deleted."""
    status = workload.get("status") or {}
    finished = any(c.get("type") == "Finished" and c.get("status") == "True" for c in status.get("conditions") or [])
    return not (workload["metadata"].get("deletionTimestamp") or status.get("clusterName") or finished)


@dataclass
class CalendarWatch:
    """Asks calendarMode for the TPU jobs that waited past the bound, and keeps the answers (the module's docstring)."""

    manager: Kube
    settings: CalendarSettings
    ask: AskCalendar
    say: Callable[[str], None]
    clock: Callable[[], float] = time.time
    kept: dict[str, dict[str, Any]] = field(default_factory=dict)
    last_look: float = float("-inf")

    def tick(self) -> None:
        now = self.clock()
        if now - self.last_look < self.settings.look_every_s:
            return
        self.last_look = now
        long_waits: list[tuple[float, str, TpuSpec, str]] = []
        for workload in self.manager.items(f"{KUEUE}/workloads"):
            created, spec = _created(workload), tpu_spec(job_shape(workload))
            if spec is None or created is None or not waiting(workload) or now - created <= self.settings.after_s:
                continue
            name = job_key(workload)
            long_waits.append((created, name, spec, job_shape(workload)))
        long_waits = sorted(long_waits)[:MAX_JOBS]
        kept = {name: self.kept[name] for _, name, _, _ in long_waits if name in self.kept}
        regions = self._regions()
        for created, name, spec, shape in long_waits:
            if name in kept and now - float(kept[name]["asked"]) < self.settings.ask_every_s:
                continue
            offers = [self.ask(region, spec, now, self.settings.days) for region in regions]
            kept[name] = self._entry(name, shape, spec, created, now, offers)
            found = [f"{o.region} {o.zone} from {o.start}" for o in offers if o.zone]
            self.say(
                f"calendar mode for {name} (waiting {(now - created) / 60:.0f} min, over the bound of "
                f"{self.settings.after_s:g} s): {'; '.join(found) or 'no zone recommended in any region'}"
            )
        if kept != self.kept:
            self._write(kept)

    def _regions(self) -> list[str]:
        config = self.manager.get(f"{KUEUE}/multikueueconfigs/{self.settings.config}") or {}
        return [str(c) for c in (config.get("spec") or {}).get("clusters") or []]

    def _entry(
        self, name: str, shape: str, spec: TpuSpec, created: float, now: float, offers: list[CalendarOffer]
    ) -> dict[str, Any]:
        reservation = "planb-" + name.replace("/", "-")[:50].rstrip("-")
        return {
            "shape": shape,
            "chips": spec.chips,
            "workloadType": spec.workload_type,
            "waitingSince": created,
            "asked": now,
            "afterSeconds": self.settings.after_s,
            "days": self.settings.days,
            "offers": [
                {
                    **o.to_json(),
                    "reserve": reserve_command(o, spec, self.settings.project, reservation) if o.zone else "",
                }
                for o in offers
            ],
        }

    def _write(self, kept: dict[str, dict[str, Any]]) -> None:
        path = f"/api/v1/namespaces/{KUEUE_NAMESPACE}/configmaps/{CONFIGMAP}"
        data = {JOBS_KEY: json.dumps(kept, sort_keys=True)}
        try:
            if self.manager.get(path) is None:
                meta = {"namespace": KUEUE_NAMESPACE, "name": CONFIGMAP}
                body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}
                self.manager.create(f"/api/v1/namespaces/{KUEUE_NAMESPACE}/configmaps", body)
            else:
                self.manager.merge_patch(path, {"data": data})
        except KubeError as exc:
            self.say(f"the calendar-mode advice could not be written to {KUEUE_NAMESPACE}/{CONFIGMAP}: {exc}")
            return
        self.kept = kept
