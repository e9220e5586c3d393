"""The keeper's dispatcher: advice-ordered dispatch of the manager's Workloads as Kueue's External MultiKueue
dispatcher (``planb regions keep --dispatch``; the decisions: ``planb.regions.dispatcher.nomination``, the policy:
``planb.regions.dispatcher.offer_order``).

Each keeper tick first reads (``planb.regions.dispatcher.reads``: the regions' ladders and copies, Google's advice and
the reservations' rooms that its decisions need), then decides over what it read, nothing read meanwhile, then writes
the nominations and the ledger. For every Workload of the MultiKueue check that Kueue would sync now
(``planb.regions.dispatcher.nomination.awaits_nomination``):

1. **Plan once per dispatch.** The job's pairs are every region of the MultiKueueConfig that Kueue reaches
   (MultiKueueCluster Active) times the rungs of that region's ladder (its ClusterQueue's flavors for the
   accelerators, read with the region's MultiKueue access), for the job's shape (``nomination.job_shape``). Google's
   advice for each pair comes from the ``advise`` the caller gives; the plan (``offer_order.plan``) and each pair's
   advice go into the manager's ConfigMap ``kueue-system/planb-regions-ledger`` (``ledger_store``), which
   ``planb status --capacity`` shows. Where advice is missing for every pair the plan is AllAtOnce, as Kueue's
   MultiKueue dispatches by default: every region nominated, and the ConfigMap says why per pair.
2. **Read the outcomes.** Each region with a pair waiting is read for its copy of the Workload: a no there
   (``nomination.copy_outcome``) ends the pair ``FAILED`` in the ledger; a region that left the MultiKueueConfig or is
   not Active fails its pairs too, because Kueue no longer syncs it.
3. **Nominate.** ``OfferPlan.due`` says which pairs to ask now; the regions of every pair waiting are written to the
   Workload's ``status.nominatedClusterNames`` in the plan's order, by the apply Kueue's Incremental dispatcher sends
   (``nomination.admission_apply``); each new pair is an ask in the ledger.
4. **Close.** When Kueue sets ``clusterName``, the pair of that region (the rung of its copy's admission) is
   ``GRANTED`` and every other pair waiting ``WITHDRAWN``; a Workload that goes, finishes or loses its quota before
   that withdraws its pairs. The ledger is written whenever it changed.

The plan, the attempts and the copies seen live in memory, as the Incremental dispatcher's round timer does in Kueue
(``kubernetes-sigs/kueue@v0.19.2 pkg/controller/workloaddispatcher/incrementaldispatcher.go#L60``). The ledger is read
from the ConfigMap at the first tick, and the asks an earlier keeper left open end ``WITHDRAWN``; a Workload still
waiting is planned again, the regions already nominated taken as asked then (``nomination.adopt``), so their copies
and requests keep their place.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from planb.kube import Kube, KubeError, Obj
from planb.printable import printable
from planb.regions.access.connection import KUEUE, region_kube
from planb.regions.access.kueue_objects import unreadable
from planb.regions.dispatcher import ledger_store as cs
from planb.regions.dispatcher import nomination as dp
from planb.regions.dispatcher.advise import Advise
from planb.regions.dispatcher.job_dispatch import DispatchSettings, JobDispatch
from planb.regions.dispatcher.ledger import FAILED, GRANTED, PENDING, WITHDRAWN, Key, Ledger, LedgerError
from planb.regions.dispatcher.offer_order import plan
from planb.regions.dispatcher.reads import DispatchReads, Look, Reading
from planb.regions.dispatcher.reservation_reads import Read, Rooms

APPLY = "application/apply-patch+yaml"


@dataclass(frozen=True)
class Apply:
    """A nomination to write: the regions for the Workload's ``status.nominatedClusterNames``."""

    job: JobDispatch
    workload: Obj
    regions: list[str]


class Dispatcher:
    def __init__(
        self,
        manager: Kube,
        settings: DispatchSettings,
        advise: Advise,
        say: Callable[[str], None],
        wall: Callable[[], float] = time.time,
        regions: Callable[[Kube, str], Kube] = region_kube,
        read: Read | None = None,
    ) -> None:
        self.manager = manager
        self.settings = settings
        self.say: Callable[[str], None] = lambda line: say(printable(line, one_line=True))  # cluster text
        #: Reservation reads (``reservation_reads``), None where the keeper has no Compute Engine to ask.
        self.rooms = None if read is None else Rooms(read, self.say)
        self.reads = DispatchReads(manager, settings, advise, self.rooms, regions)
        self.wall = wall
        self.jobs: dict[str, JobDispatch] = {}
        self.ledger: Ledger | None = None
        self.last: cs.LastAdvice | None = None
        self.dirty = False

    # ------------------------------------------------------------------ the tick
    def tick(self, workloads: list[Obj], clusters: dict[str, Obj], config: Obj) -> None:
        """One look at the manager's Workloads (the keeper read them): what it reads of the regions and of Google
        (reads), the nominations and ledger entries it decides over that, then its writes."""
        now = self.wall()
        reading = self.reads.read(workloads, clusters, config, self.jobs, self.ledger is None, now)
        applies = self._decide(reading, now)
        self._write(applies)

    def _decide(self, reading: Reading, now: float) -> list[Apply]:
        """The nominations to write, the ledger entries and the plans kept between ticks, over what was read."""
        ledger = self._ledger(reading.stored)
        live = set()
        applies = []
        for look in reading.looks:
            live.add(look.uid)
            job = self.jobs.get(look.uid)
            if look.winner:
                if job is not None:
                    self._granted(job, look, now, ledger)
                    del self.jobs[look.uid]
                continue
            if not look.awaits:
                if job is not None and look.state != "Pending":
                    continue  # Kueue holds the nomination meanwhile (a Retry); the plan goes on once it is Pending
                if job is not None:
                    self._withdraw(job, "it no longer waits for a region (quota released, finished or deleted)", now)
                    del self.jobs[look.uid]
                continue
            if job is None:
                job = self._plan(look, now, ledger)
                if job is None:
                    continue
                self.jobs[look.uid] = job
            self._observe(job, look, reading.active, now, ledger)
            applies += self._nominate(job, look, reading.active, now, ledger)
        for uid in [u for u in self.jobs if u not in live]:
            self._withdraw(self.jobs.pop(uid), "its Workload is gone", now)
        return applies

    # ------------------------------------------------------------------ plan
    def _plan(self, look: Look, now: float, ledger: Ledger) -> JobDispatch | None:
        if look.candidates is None:
            return None  # nothing to offer yet; Kueue itself waits for a connected region
        name, shape, candidates = look.name, look.shape, look.candidates
        offer = plan(candidates, self.settings.job, ledger, now, self.settings.policy)
        self.last = cs.last_advice(offer, candidates, name, now)
        self.dirty = True
        first = dp.regions_in_order(offer, offer.keys[: offer.first])
        self.say(
            f"dispatching {name} ({shape or 'shape unknown'}): "
            + (offer.note if offer.race else f"{', '.join(first) or 'no region'} first; {offer.note}")
        )
        for key, why in offer.skipped:
            self.say(f"{name}: {key} {why}")
        job = JobDispatch(name, offer, now, dp.adopt(offer, look.nominated), reservations=look.reservations)
        for attempt in job.attempts:
            ledger.ask(attempt.key, now)
        if job.attempts:
            self.say(f"{name}: kept {', '.join(a.key.region for a in job.attempts)}, nominated before this plan")
        return job

    # ------------------------------------------------------------------ outcomes
    def _observe(self, job: JobDispatch, look: Look, active: list[str], now: float, ledger: Ledger) -> None:
        for region in dp.regions_in_order(job.plan, dp.waiting(job.attempts)):
            if region not in active:
                self._fail(job, region, "", f"{region} left the MultiKueueConfig or is not Active", now, ledger)
                continue
            seen = job.seen.get(region, dp.Seen())
            try:
                copy = look.copies[region]
                if isinstance(copy, Exception):
                    raise copy
                outcome, why = dp.copy_outcome(copy, seen)
                rung = dp.admitted_rung(copy)
                first = None if copy is None else dp.Seen(str(copy["metadata"].get("uid") or ""), dp.evictions(copy))
            # planb's policy: any error reading a region's copy leaves it unread, because one must never stop the others
            except Exception as exc:
                self.say(f"{job.name}: {unreadable(region, exc)}")
                continue
            if outcome == FAILED:
                self._fail(job, region, rung, why, now, ledger)
            elif first is not None and not seen.uid:
                job.seen[region] = first

    def _fail(self, job: JobDispatch, region: str, rung: str, why: str, now: float, ledger: Ledger) -> None:
        job.attempts, ended = dp.failed(job.attempts, region, rung, now - job.started)
        for attempt in ended:
            self._end(ledger, attempt.key, job.started + attempt.asked_s, FAILED, now)
        job.seen.pop(region, None)
        self.dirty = True
        self.say(f"{job.name}: {', '.join(str(a.key) for a in ended)} failed ({why}); the offer moves on")

    def _granted(self, job: JobDispatch, look: Look, now: float, ledger: Ledger) -> None:
        region, rung = look.winner, look.winner_rung
        shape = job.plan.keys[0].shape if job.plan.keys else "unknown"
        key = dp.granted_key(job.attempts, region, rung, shape)
        waited = [a for a in job.attempts if a.failed_s is None and a.key == key]
        if waited:
            self._end(ledger, key, job.started + waited[-1].asked_s, GRANTED, now)
        else:
            ledger.record(key, job.started, GRANTED, now)
        requests = len(job.attempts) or 1
        job.attempts = [a for a in job.attempts if not (a.failed_s is None and a.key == key)]
        self.dirty = True
        self.say(f"{job.name}: granted in {key} after {now - job.started:.0f} s, {requests} request(s) asked")
        self._withdraw(job, f"{region} granted first", now)

    def _withdraw(self, job: JobDispatch, why: str, now: float) -> None:
        ledger = self._ledger()
        pending = [a for a in job.attempts if a.failed_s is None]
        for attempt in pending:
            self._end(ledger, attempt.key, job.started + attempt.asked_s, WITHDRAWN, now)
        job.attempts = [a for a in job.attempts if a.failed_s is not None]
        if pending:
            self.dirty = True
            self.say(f"{job.name}: withdrew {', '.join(str(a.key) for a in pending)}: {why}")

    def _end(self, ledger: Ledger, key: Key, asked_at: float, outcome: str, now: float) -> None:
        """End an ask in the ledger; one it no longer holds (dropped past ``MAX_ASKS``) is said, not raised."""
        try:
            ledger.end(key, asked_at, outcome, now)
        except LedgerError as exc:
            self.say(f"the ledger did not record {key} {outcome}: {exc}")

    # ------------------------------------------------------------------ nominate
    def _nominate(self, job: JobDispatch, look: Look, active: list[str], now: float, ledger: Ledger) -> list[Apply]:
        """The nomination to write for the job, if it changed and no other writer replaced the keeper's."""
        before = len(job.attempts)
        job.attempts, regions, _ = dp.nominate(job.plan, now - job.started, job.attempts, look.full)
        for attempt in job.attempts[before:]:
            ledger.ask(attempt.key, job.started + attempt.asked_s)
            self.dirty = True
        regions = [r for r in regions if r in active]
        current = look.nominated
        if job.overruled or dp.rewritten(job.written, current):
            if not job.overruled:
                self.say(
                    f"{job.name}: its nomination was rewritten to {', '.join(current)} by another writer; the keeper "
                    f"leaves it alone. Fix: give the manager's Kueue multiKueue.dispatcherName {dp.DISPATCHER} "
                    "(docs/regions.md, 'Advice-ordered dispatch in a cluster'), or run the keeper without --dispatch"
                )
            job.overruled = True
            return []
        if regions == current:
            job.written = regions
            return []
        return [Apply(job, look.workload, regions)]

    # ------------------------------------------------------------------ the ConfigMap
    def _ledger(self, stored: cs.Stored | None = None) -> Ledger:
        if self.ledger is None:
            stored = stored or cs.read(self.manager)
            for problem in stored.problems:
                self.say(f"{problem}; starting a new ledger")
            self.ledger = stored.ledger or Ledger()
            self.last = stored.advice
            self._close_open(self.ledger)
        return self.ledger

    def _close_open(self, ledger: Ledger) -> None:
        """The asks a keeper before this one left open end ``WITHDRAWN`` now: their plans died with it, and a region
        still nominated is asked again by the new plan (``nomination.adopt``)."""
        now, closed = self.wall(), 0
        for key, asks in ledger.asks.items():
            for left in [a for a in asks if a.outcome == PENDING and a.asked_at <= now]:
                self._end(ledger, key, left.asked_at, WITHDRAWN, now)
                closed += 1
        if closed:
            self.dirty = True
            self.say(f"closed {closed} ask(s) an earlier keeper left open in the ledger (withdrawn)")

    def _write(self, applies: list[Apply]) -> None:
        """The nominations, each by Kueue's own apply (a Workload changed meanwhile is nominated again at the next
        look), then the ledger when it changed."""
        for apply in applies:
            job, meta, regions = apply.job, apply.workload["metadata"], apply.regions
            path = f"{KUEUE}/namespaces/{meta['namespace']}/workloads/{meta['name']}/status"
            query = {"fieldManager": dp.FIELD_MANAGER, "force": "true"}
            try:
                self.manager.request(
                    "PATCH", path, dp.admission_apply(apply.workload, regions), query, content_type=APPLY
                )
            except KubeError as exc:
                if exc.status != 409:
                    raise
                self.say(f"{job.name}: its Workload changed meanwhile; nominating again at the next look")
                continue
            job.written = regions
            said = ", ".join(regions) or "none (waiting to ask again)"
            if said != job.said:
                self.say(f"{job.name}: nominated {said}")
                job.said = said
        if not self.dirty or self.ledger is None:
            return
        body = cs.configmap(self.ledger, self.last)
        meta = body["metadata"]
        path = f"/api/v1/namespaces/{meta['namespace']}/configmaps/{meta['name']}"
        try:
            if self.manager.get(path) is None:
                self.manager.create(f"/api/v1/namespaces/{meta['namespace']}/configmaps", body)
            else:
                self.manager.merge_patch(path, {"data": body["data"]})
        except KubeError as exc:
            self.say(f"the ledger could not be written to {meta['namespace']}/{meta['name']}: {exc}")
            return
        self.dirty = False
