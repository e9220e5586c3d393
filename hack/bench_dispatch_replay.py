"""hack/bench_dispatch.py's dispatchers, each replaying one job on a trace: AllAtOnce (every region at once, each
region's ladder one request at a time), advice-ordered (planb.regions.dispatcher.offer_order's plan and its ledger),
the oracle (knows the trace) and the informed reference (knows the state at submission, not the job's own draw).
The trace: ``bench_dispatch_trace``; the tables: ``bench_dispatch_report``; the runs and the sweep: ``bench_dispatch``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from bench_dispatch_trace import RETRY_S, JobSpec, Trace

from planb.regions.dispatcher import offer_order as ao
from planb.regions.dispatcher.ledger import FAILED, GRANTED, WITHDRAWN, Key, Ledger


@dataclass(frozen=True)
class Result:
    wait_s: float
    requests: int
    key: Key | None
    race: bool = False


def all_at_once(trace: Trace, job: JobSpec, keys: Sequence[Key] | None = None, ledger: Ledger | None = None) -> Result:
    """Today: every region at once, each region's ladder one request at a time; the first grant wins."""
    keys = trace.keys(job) if keys is None else list(keys)
    asks: list[tuple[float, float, bool, Key]] = []
    best, winner = math.inf, None
    for region in dict.fromkeys(k.region for k in keys):
        ladder = [k for k in keys if k.region == region]
        ready: dict[Key, float] = {}
        t, i = job.t0, 0
        while t < best:
            key = ladder[i]
            t = max(t, ready.get(key, t))
            if t >= best:
                break
            end, granted = trace.ask(job, key, t)
            asks.append((t, end, granted, key))
            if granted:
                best, winner = (end, key) if end < best else (best, winner)
                break
            ready[key], t, i = end + RETRY_S, end, (i + 1) % len(ladder)
    made = [a for a in asks if a[0] <= best]
    if ledger is not None:
        for asked, end, granted, key in made:
            if key == winner and granted and end == best:
                ledger.record(key, asked, GRANTED, end)
            elif end <= best and not granted:
                ledger.record(key, asked, FAILED, end)
            else:
                ledger.record(key, asked, WITHDRAWN, best)
    return Result(best - job.t0, len(made), winner)


def advice_ordered(trace: Trace, job: JobSpec, ledger: Ledger, policy: ao.Policy) -> Result:
    """planb's policy: the pairs OfferPlan.due names, at each answer and each time it names; the ledger learns from
    every request."""
    candidates = [ao.Candidate(key, trace.advice(job, key), trace.room(job, key)) for key in trace.keys(job)]
    offer = ao.plan(candidates, job.needs, ledger, job.t0, policy)
    if offer.race:
        result = all_at_once(trace, job, offer.keys, ledger)
        return Result(result.wait_s, result.requests, result.key, True)
    attempts: list[ao.Attempt] = []
    pending: dict[Key, tuple[int, float, bool]] = {}  # key: its attempt, when it ends (after submission), granted
    now = 0.0  # seconds after submission, as OfferPlan.due counts them
    while math.isfinite(now):
        keys, wake = offer.due(now, attempts, trace.full(job, job.t0 + now))
        for key in keys:
            end, granted = trace.ask(job, key, job.t0 + now)
            pending[key] = (len(attempts), end - job.t0, granted)
            attempts.append(ao.Attempt(key, now))
        now = min([end for _, end, _ in pending.values()] + [wake])
        granted_now = sorted((end, key) for key, (_, end, ok) in pending.items() if ok and end <= now)
        if granted_now:
            end, winner = granted_now[0]
            for key, (i, _, _) in pending.items():
                outcome = GRANTED if key == winner else WITHDRAWN
                ledger.record(key, job.t0 + attempts[i].asked_s, outcome, job.t0 + end)
            return Result(end, len(attempts), winner)
        for key, (i, end, _) in list(pending.items()):
            if end <= now:
                ledger.record(key, job.t0 + attempts[i].asked_s, FAILED, job.t0 + end)
                attempts[i] = ao.Attempt(key, attempts[i].asked_s, end)
                del pending[key]
    return Result(math.inf, len(attempts), None)


def oracle(trace: Trace, job: JobSpec) -> Result:
    """The trace known: the pair that grants first, asked when it first can; Spot shorter than the job's
    checkpoint interval plus restore left out."""
    best, winner = math.inf, None
    for key in trace.keys(job):
        if trace.short_spot(job, key):
            continue
        start = trace.next_up(key, job.t0)
        end = start + trace.delay(job, key, start) if math.isfinite(start) else math.inf
        best, winner = (end, key) if end < best else (best, winner)
    return Result(best - job.t0, 1, winner)


def informed(trace: Trace, job: JobSpec) -> Result:
    """What a dispatcher could do knowing what the trace knows at submission but not the job's own draw: which pairs
    have capacity now and their mean grant delays then; it asks the fastest once (the oracle if none has). Spot short
    for the job is left out, and so is Spot whose uptime Google's advice does not give (no dispatcher knows it)."""
    slot, best = trace._slot(job.t0), None
    for key in trace.keys(job):
        pair = trace.pairs[key]
        unknown = key.rung == "spot" and trace.advice(replace(job, outage=False), key).estimated_uptime_s is None
        if pair.up[slot] and not trace.short_spot(job, key) and not unknown:
            best = min(best or (math.inf, key), (pair.delay_s[slot], key))
    if best is None:
        return oracle(trace, job)
    end, _ = trace.ask(job, best[1], job.t0)
    return Result(end - job.t0, 1, best[1])
