"""The dispatcher's deciding step (planb.regions.dispatcher.tick): over what the tick read (``reads.Reading``), each
Workload of the MultiKueue check in turn is planned, its copies' outcomes taken, and its nomination chosen, a pure fold:
``decide(look, view)`` gives the Workload's changes (the ledger's entries, its dispatch, the nomination to write, the
lines to say), and ``view.apply`` the view the next Workload is decided over. Nothing is read or written here.

The rules (the module docstring of planb.regions.dispatcher.tick has them in full): a Workload planned once per
dispatch (``offer_order.plan`` over the ledger as the tick's earlier decisions left it), the regions already nominated
taken as asked then (``adopt``); a copy's no ends its pairs ``FAILED``, a region no longer Active fails its
pairs too; ``OfferPlan.due`` says which pairs to ask now, each an ask in the ledger; Kueue's ``clusterName`` is the
grant, and every other pair waiting is ``WITHDRAWN``, as when the Workload goes before a grant. An ask the ledger no
longer holds (dropped past ``MAX_ASKS``) is said, not raised.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from planb.kube import Obj
from planb.regions.access.kueue_objects import unreadable
from planb.regions.dispatcher.job_dispatch import DispatchSettings, JobDispatch, Seen
from planb.regions.dispatcher.ledger import FAILED, GRANTED, PENDING, WITHDRAWN, Key, Ledger, LedgerError
from planb.regions.dispatcher.ledger_store import LastAdvice, Stored, last_advice
from planb.regions.dispatcher.nomination import DISPATCHER
from planb.regions.dispatcher.offer_order import Attempt, OfferPlan, plan
from planb.regions.dispatcher.offer_plan import regions_in_order, waiting
from planb.regions.dispatcher.reads import LADDER, Look, Reading, admitted_rung
from planb.regions.dispatcher.view import Changes, Entry, Nomination, View, apply, with_entries


@dataclass(frozen=True)
class Decided:
    """One tick's decisions: the view after them, the nominations to write in the Workloads' order, the lines to say."""

    view: View
    nominations: tuple[Nomination, ...]
    said: tuple[str, ...]


@dataclass
class _Making:
    """One Workload's changes as its decisions make them (local to ``decide``): the ledger as they leave it, its
    entries, the lines, whether the ConfigMap is behind."""

    ledger: Ledger
    entries: list[Entry]
    said: list[str]
    dirty: bool = False


def decide_tick(reading: Reading, view: View, settings: DispatchSettings, now: float, opened_at: float) -> Decided:
    """The tick's decisions over `reading`, from `view` (what was kept between ticks); at the first tick the ledger is
    the ConfigMap's as read, its asks left open closed at `opened_at`."""
    said: list[str] = []
    if reading.stored is not None:
        view, said = _opened(reading.stored, view, opened_at)
    nominations, live = [], set()
    for look in reading.looks:
        live.add(look.uid)
        changes = decide(look, view, settings, now)
        view = apply(view, changes)
        said += changes.said
        if changes.nomination is not None:
            nominations.append(changes.nomination)
    for uid in [u for u in view.jobs if u not in live]:
        making = _Making(view.ledger, [], [])
        _withdraw(making, view.jobs[uid], "its Workload is gone", now)
        view = apply(view, _changes(uid, None, making))
        said += making.said
    return Decided(view, tuple(nominations), tuple(said))


def decide(look: Look, view: View, settings: DispatchSettings, now: float) -> Changes:
    """One Workload's changes over `view`: nothing read, nothing written, `view` left as it was."""
    job, making = view.jobs.get(look.uid), _Making(view.ledger, [], [])
    if look.winner:
        if job is not None:
            _granted(making, job, look, now)
        return _changes(look.uid, None, making)
    if not look.awaits:
        if job is not None and look.state != "Pending":
            return Changes(look.uid, job)  # Kueue holds the nomination meanwhile (a Retry); the plan goes on then
        if job is not None:
            _withdraw(making, job, "it no longer waits for a region (quota released, finished or deleted)", now)
        return _changes(look.uid, None, making)
    last = None
    if job is None:
        if look.candidates is None:
            return Changes(look.uid, None)  # nothing to offer yet; Kueue itself waits for a connected region
        job, last = _plan(making, look, settings, now)
    job = _observe(making, job, look, view.active, now)
    job, nomination = _nominate(making, job, look, view.active, now)
    return replace(_changes(look.uid, job, making), last=last, nomination=nomination)


def _changes(uid: str, job: JobDispatch | None, making: _Making) -> Changes:
    return Changes(uid, job, tuple(making.entries), dirty=making.dirty, said=tuple(making.said))


def _opened(stored: Stored, view: View, at: float) -> tuple[View, list[str]]:
    """The view at the first tick: the ledger and last advice the ConfigMap holds (or a new ledger, and why), the asks
    a keeper before this one left open ended ``WITHDRAWN`` at `at` (their plans died with it; a region still
    nominated is asked again by the new plan, ``adopt``)."""
    said = [f"{problem}; starting a new ledger" for problem in stored.problems]
    making = _Making(stored.ledger or Ledger(), [], said)
    closed = 0
    for key, asks in stored.ledger.asks.items() if stored.ledger else ():
        for left in [a for a in asks if a.outcome == PENDING and a.asked_at <= at]:
            _end(making, key, left.asked_at, WITHDRAWN, at)
            closed += 1
    if closed:
        making.dirty = True
        making.said.append(f"closed {closed} ask(s) an earlier keeper left open in the ledger (withdrawn)")
    return replace(view, ledger=making.ledger, last=stored.advice, dirty=view.dirty or making.dirty), making.said


def _plan(making: _Making, look: Look, settings: DispatchSettings, now: float) -> tuple[JobDispatch, LastAdvice]:
    name, shape, candidates = look.name, look.shape, look.candidates or []
    offer = plan(candidates, settings.job, making.ledger, now, settings.policy)
    making.dirty = True
    first = regions_in_order(offer, offer.keys[: offer.first])
    making.said.append(
        f"dispatching {name} ({shape or 'shape unknown'}): "
        + (offer.note if offer.race else f"{', '.join(first) or 'no region'} first; {offer.note}")
    )
    making.said += [f"{name}: {key} {why}" for key, why in offer.skipped]
    adopted = tuple(adopt(offer, look.nominated))
    job = JobDispatch(name, offer, now, adopted, reservations=look.reservations)
    for attempt in job.attempts:
        _ask(making, attempt.key, now)
    if job.attempts:
        making.said.append(f"{name}: kept {', '.join(a.key.region for a in job.attempts)}, nominated before this plan")
    return job, last_advice(offer, candidates, name, now)


def _observe(making: _Making, job: JobDispatch, look: Look, active: tuple[str, ...], now: float) -> JobDispatch:
    """The job after its copies' outcomes: a region left or not Active, or a copy's no, fails its pairs."""
    for region in regions_in_order(job.plan, waiting(job.attempts)):
        if region not in active:
            job = _fail(making, job, region, "", f"{region} left the MultiKueueConfig or is not Active", now)
            continue
        seen = job.seen.get(region, Seen())
        try:
            copy = look.copies[region]
            if isinstance(copy, Exception):
                raise copy
            outcome, why = copy_outcome(copy, seen)
            rung = admitted_rung(copy)
            first = None if copy is None else Seen(str(copy["metadata"].get("uid") or ""), evictions(copy))
        # planb's policy: any error reading a region's copy leaves it unread, because one must never stop the others
        except Exception as exc:
            making.said.append(f"{job.name}: {unreadable(region, exc)}")
            continue
        if outcome == FAILED:
            job = _fail(making, job, region, rung, why, now)
        elif first is not None and not seen.uid:
            job = replace(job, seen={**job.seen, region: first})
    return job


def _fail(making: _Making, job: JobDispatch, region: str, rung: str, why: str, now: float) -> JobDispatch:
    attempts, ended = failed(job.attempts, region, rung, now - job.started)
    for attempt in ended:
        _end(making, attempt.key, job.started + attempt.asked_s, FAILED, now)
    making.dirty = True
    making.said.append(f"{job.name}: {', '.join(str(a.key) for a in ended)} failed ({why}); the offer moves on")
    seen = {r: s for r, s in job.seen.items() if r != region}
    return replace(job, attempts=tuple(attempts), seen=seen)


def _granted(making: _Making, job: JobDispatch, look: Look, now: float) -> None:
    """The grant ends the pair of the winner's region and rung ``GRANTED`` (recorded whole where it was never asked),
    then withdraws every other pair waiting: the dispatch ends."""
    region, rung = look.winner, look.winner_rung
    shape = job.plan.keys[0].shape if job.plan.keys else "unknown"
    key = granted_key(job.attempts, region, rung, shape)
    waited = [a for a in job.attempts if a.failed_s is None and a.key == key]
    if waited:
        _end(making, key, job.started + waited[-1].asked_s, GRANTED, now)
    else:
        _made(making, Entry(key, job.started, GRANTED, now, whole=True))
    requests = len(job.attempts) or 1
    job = replace(job, attempts=tuple(a for a in job.attempts if not (a.failed_s is None and a.key == key)))
    making.dirty = True
    making.said.append(f"{job.name}: granted in {key} after {now - job.started:.0f} s, {requests} request(s) asked")
    _withdraw(making, job, f"{region} granted first", now)


def _withdraw(making: _Making, job: JobDispatch, why: str, now: float) -> None:
    """Every pair of the job still waiting ends ``WITHDRAWN``: the dispatch ends."""
    pending = [a for a in job.attempts if a.failed_s is None]
    for attempt in pending:
        _end(making, attempt.key, job.started + attempt.asked_s, WITHDRAWN, now)
    if pending:
        making.dirty = True
        making.said.append(f"{job.name}: withdrew {', '.join(str(a.key) for a in pending)}: {why}")


def _nominate(
    making: _Making, job: JobDispatch, look: Look, active: tuple[str, ...], now: float
) -> tuple[JobDispatch, Nomination | None]:
    """The job with the pairs due asked, and the nomination to write, if it changed and no other writer replaced the
    keeper's."""
    before = len(job.attempts)
    attempts, regions, _ = nominate(job.plan, now - job.started, job.attempts, look.full)
    for attempt in attempts[before:]:
        _ask(making, attempt.key, job.started + attempt.asked_s)
        making.dirty = True
    job = replace(job, attempts=tuple(attempts))
    regions = [r for r in regions if r in active]
    current = look.nominated
    if job.overruled or rewritten(job.written, current):
        if not job.overruled:
            making.said.append(
                f"{job.name}: its nomination was rewritten to {', '.join(current)} by another writer; the keeper "
                f"leaves it alone. Fix: give the manager's Kueue multiKueue.dispatcherName {DISPATCHER} "
                "(docs/regions.md, 'Advice-ordered dispatch in a cluster'), or run the keeper without --dispatch"
            )
        return replace(job, overruled=True), None
    if regions == current:
        return replace(job, written=tuple(regions)), None
    return job, Nomination(look.uid, look.workload, tuple(regions))


def _ask(making: _Making, key: Key, at: float) -> None:
    _made(making, Entry(key, at))


def _made(making: _Making, entry: Entry) -> None:
    making.ledger = with_entries(making.ledger, [entry])
    making.entries.append(entry)


def _end(making: _Making, key: Key, asked_at: float, outcome: str, now: float) -> None:
    """End an ask in the ledger; one it no longer holds (dropped past ``MAX_ASKS``) is said, not raised."""
    entry = Entry(key, asked_at, outcome, now)
    try:
        _made(making, entry)
    except LedgerError as exc:
        making.said.append(f"the ledger did not record {key} {outcome}: {exc}")


def copy_outcome(copy: Obj | None, seen: Seen) -> tuple[str, str]:
    """Whether a region's copy says GKE's no: (``FAILED``, why) or ("", "") while it waits (planb's policy, above).
    An Admitted copy is never a failure, whatever its uid or evictions: one evicted from a rung and admitted on the
    next between two looks is the one Kueue converges on (kueue@v0.19.2
    pkg/controller/admissionchecks/multikueue/workload.go#L571-L635), and the clusterName it then sets must be among
    the nominated regions (pkg/webhooks/workload_webhook.go#L501-L515), so its region is never dropped."""
    if copy is None or admitted(copy):
        return "", ""
    uid = str(copy["metadata"].get("uid") or "")
    status = copy.get("status") or {}
    for state in status.get("admissionChecks") or []:
        if state.get("state") in ("Retry", "Rejected"):
            return FAILED, f"check {state.get('name')} {state.get('state')}: {state.get('message', '')}".rstrip(": ")
    if (copy.get("spec") or {}).get("active") is False:
        return FAILED, "the copy was deactivated in its region"
    if seen.uid and uid and uid != seen.uid:
        return FAILED, "Kueue made a new copy: the one asked failed"
    if seen.uid and evictions(copy) > seen.evictions:
        return FAILED, "the copy was evicted in its region"
    return "", ""


def admitted(copy: Obj | None) -> bool:
    """Whether the copy's Admitted condition is True."""
    conditions = ((copy or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Admitted" and c.get("status") == "True" for c in conditions)


def evictions(copy: Obj | None) -> int:
    """How often the copy was evicted in its region (Kueue's schedulingStats, a counter that outlives a Retry)."""
    stats = ((copy or {}).get("status") or {}).get("schedulingStats") or {}
    return sum(int(e.get("count") or 0) for e in stats.get("evictions") or [])


def adopt(plan: OfferPlan, nominated: Sequence[str]) -> list[Attempt]:
    """The attempts a new plan starts from when regions are already nominated (a keeper restarted mid-dispatch): each
    such region's first pair in the plan's order, asked now, so its copy and its request keep their place."""
    keys = {}
    for key in plan.keys:
        if key.region in nominated and key.region not in keys:
            keys[key.region] = key
    return [Attempt(keys[r], 0.0) for r in nominated if r in keys]


def failed(attempts: Sequence[Attempt], region: str, rung: str, at_s: float) -> tuple[list[Attempt], list[Attempt]]:
    """The attempts with the waiting pairs of ``region`` ended as failures at ``at_s`` (those of ``rung`` only, when
    the copy reserved on a rung one of them names), and the attempts so ended."""
    mine = [a.key for a in attempts if a.failed_s is None and a.key.region == region]
    if any(k.rung == rung for k in mine):
        mine = [k for k in mine if k.rung == rung]
    out, ended = [], []
    for attempt in attempts:
        if attempt.failed_s is None and attempt.key in mine:
            attempt = Attempt(attempt.key, attempt.asked_s, at_s)
            ended.append(attempt)
        out.append(attempt)
    return out, ended


def granted_key(attempts: Sequence[Attempt], region: str, rung: str, shape: str) -> Key:
    """The pair a grant in ``region`` on ``rung`` goes to: the waiting pair of that rung, else the region's first
    waiting pair, else the pair the copy's admission names."""
    mine = [a.key for a in attempts if a.failed_s is None and a.key.region == region]
    for key in mine:
        if key.rung == rung:
            return key
    return mine[0] if mine else Key(region, rung or LADDER, shape)


def nominate(
    plan: OfferPlan, elapsed_s: float, attempts: Sequence[Attempt], full: Collection[Key] = ()
) -> tuple[list[Attempt], list[str], float]:
    """What to ask ``elapsed_s`` after the job's plan began: the attempts with the pairs due added, the regions to
    nominate (every region with a pair waiting, in the plan's order), and when to look again (seconds after the start;
    inf: only an answer changes anything). ``full``: the reservation pairs read full now, left unasked."""
    due, wake = plan.due(elapsed_s, attempts, full)
    grown = [*attempts, *(Attempt(k, elapsed_s) for k in due)]
    return grown, regions_in_order(plan, waiting(grown)), wake


def rewritten(written: Sequence[str] | None, current: Sequence[str]) -> bool:
    """Whether another writer replaced the keeper's last nomination: a list not empty that differs from what the
    keeper wrote. Kueue clears the list itself at admission and eviction; a different one is another dispatcher's,
    AllAtOnce's when the manager's Kueue is not given planb's name (workload.go#L912-L925)."""
    return written is not None and bool(current) and list(current) != list(written)
