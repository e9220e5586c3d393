"""Advice-ordered dispatch against today's race and an oracle, on seeded stockout traces (issue 54, item 4).

    .venv/bin/python hack/bench_dispatch.py                  # the table (BENCHMARKS.md, "Dispatch")
    .venv/bin/python hack/bench_dispatch.py --update BENCHMARKS.md   # the same, written between its markers
    .venv/bin/python hack/bench_dispatch.py --sweep          # the policy's knobs on the tuning seeds 1-3

Pure Python, no cluster: a replay of planb.regions.advice_order's policy and planb.regions.ledger.

**The trace and Google's advice** (``bench_dispatch_trace``, beside this script, whose docstring has the model and
the noise model): regions by rungs, one shape; each pair's grant probability drifts over the day, stockouts come in
episodes, DWS queues through one and the other rungs fail; Google's obtainability is the true probability half an
hour stale with noise on its logit; the last region's advice is missing (a refused shape) and its reservation never
grants; Spot's estimatedUptime is the true uptime with noise.

**The dispatchers.** *AllAtOnce* (today): every region gets the job at once; each region's ladder asks its rungs in
order, one request at a time, the next rung when one fails, the first rung again after the last; the first grant
wins. *Advice-ordered*: ``advice_order.plan`` at submission, with a ledger that learns from every request as jobs go
(what it knew at each submission only); it offers the plan's pairs as ``OfferPlan.offered`` says, the first grant
wins; where the plan is the race, it runs AllAtOnce. *Oracle*: knows the trace: the one pair, skipping Spot whose
true uptime is below the job's checkpoint interval plus restore, that grants first if asked when it first can.
Each ask counts as one request (a ProvisioningRequest, or the ladder's ask on a rung without one).
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import re
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from planb.regions import advice_order as ao
from planb.regions.ledger import FAILED, GRANTED, WITHDRAWN, Key, Ledger

# The trace lives beside this script (hack/ is no package); run as a script, its directory is on sys.path already.
_HERE = os.path.dirname(os.path.realpath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
from bench_dispatch_trace import REGIONS, RETRY_S, RUNG_MODELS, JobSpec, Trace  # noqa: E402

BEGIN, END = "<!-- bench_dispatch: begin -->", "<!-- bench_dispatch: end -->"


@dataclass(frozen=True)
class Result:
    wait_s: float
    requests: int
    key: Key | None
    race: bool = False


def all_at_once(trace: Trace, job: JobSpec, keys: Sequence[Key] | None = None, ledger: Ledger | None = None) -> Result:
    """Today: every region at once, each region's ladder one request at a time; the first grant wins."""
    keys = list(trace.pairs) if keys is None else list(keys)
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
    """planb's policy: the plan's pairs as OfferPlan.offered says; the ledger learns from every request."""
    candidates = [ao.Candidate(key, trace.advice(job, key)) for key in trace.pairs]
    offer = ao.plan(candidates, job.needs, ledger, job.t0, policy)
    if offer.race:
        result = all_at_once(trace, job, offer.keys, ledger)
        return Result(result.wait_s, result.requests, result.key, True)
    pending: dict[Key, tuple[float, float, bool]] = {}
    ready: dict[Key, float] = {}
    t, failed, requests = job.t0, 0, 0
    while math.isfinite(t):
        offered = offer.offered(t - job.t0, failed)
        for key in offered:
            if key not in pending and ready.get(key, t) <= t:
                end, granted = trace.ask(job, key, t)
                pending[key], requests = (t, end, granted), requests + 1
        elapsed = t - job.t0
        upcoming = [end for _, end, _ in pending.values()] + [
            ready[k] for k in offered if k not in pending and k in ready
        ]
        if elapsed < offer.full_after_s:
            upcoming.append(job.t0 + min((elapsed // offer.bound_s + 1) * offer.bound_s, offer.full_after_s))
        t = min(u for u in upcoming if u > t) if any(u > t for u in upcoming) else math.inf
        granted_now = sorted((end, key) for key, (_, end, ok) in pending.items() if ok and end <= t)
        for key, (asked, end, ok) in list(pending.items()):
            if not ok and end <= t:
                ledger.record(key, asked, FAILED, end)
                ready[key], failed = end + offer.retry_after_s, failed + 1
                del pending[key]
        if granted_now:
            end, winner = granted_now[0]
            for key, (asked, _, _) in pending.items():
                ledger.record(key, asked, GRANTED if key == winner else WITHDRAWN, end)
            return Result(end - job.t0, requests, winner)
    return Result(math.inf, requests, None)


def oracle(trace: Trace, job: JobSpec) -> Result:
    """The trace known: the pair that grants first, asked when it first can; Spot shorter than the job's
    checkpoint interval plus restore left out."""
    best, winner = math.inf, None
    for key in trace.pairs:
        if trace.short_spot(job, key):
            continue
        start = trace.next_up(key, job.t0)
        end = start + trace.delay(job, key, start) if math.isfinite(start) else math.inf
        best, winner = (end, key) if end < best else (best, winner)
    return Result(best - job.t0, 1, winner)


@dataclass(frozen=True)
class Summary:
    name: str
    requests: float
    median_s: float
    p95_s: float
    short_spot: int
    races: int


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def summarise(name: str, trace: Trace, results: list[Result]) -> Summary:
    waits = [r.wait_s for r in results]
    if not all(math.isfinite(w) for w in waits):
        raise SystemExit(f"{name}: a job was never admitted within the trace; lengthen it")
    short = sum(1 for job, r in zip(trace.jobs, results, strict=True) if r.key and trace.short_spot(job, r.key))
    return Summary(
        name,
        statistics.fmean(r.requests for r in results),
        statistics.median(waits),
        _p95(waits),
        short,
        sum(r.race for r in results),
    )


def run(trace: Trace, policy: ao.Policy) -> list[Summary]:
    """The three dispatchers over every job of the trace, in arrival order."""
    ledger = Ledger()
    race = [all_at_once(trace, job) for job in trace.jobs]
    advised = [advice_ordered(trace, job, ledger, policy) for job in trace.jobs]
    best = [oracle(trace, job) for job in trace.jobs]
    return [
        summarise("AllAtOnce (today's race)", trace, race),
        summarise("advice-ordered (planb's policy, ledger learning)", trace, advised),
        summarise("oracle (knows the trace)", trace, best),
    ]


def _min(seconds: float) -> str:
    return f"{seconds / 60:.2f} min"


def table(rows: list[Summary]) -> str:
    lines = [
        "| dispatcher | requests per job (mean) | submission to admission, median | p95 "
        "| admitted on Spot shorter than checkpoint + restore | jobs raced for want of advice |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {s.name} | {s.requests:.2f} | {_min(s.median_s)} | {_min(s.p95_s)} | {s.short_spot} | {s.races} |"
        for s in rows
    ]
    return "\n".join(lines)


def goals(rows: list[Summary]) -> list[str]:
    race, advised, best = rows
    extra = advised.median_s / best.median_s - 1 if best.median_s else math.inf
    return [
        f"- at most 1.5 requests per job: {advised.requests:.2f} ({'holds' if advised.requests <= 1.5 else 'missed'})",
        f"- median within 10% of the oracle's: {_min(advised.median_s)} against {_min(best.median_s)}, "
        f"{extra:+.0%} ({'holds' if extra <= 0.10 else 'missed'})",
        f"- p95 no worse than AllAtOnce's: {_min(advised.p95_s)} against {_min(race.p95_s)} "
        f"({'holds' if advised.p95_s <= race.p95_s else 'missed'})",
    ]


def sweep(args: argparse.Namespace) -> ao.Policy:
    """The policy's knobs on the tuning seeds, never the reported one. The pick: the most goals met over the seeds
    (three goals a seed), then the smallest mean excess of the median over the oracle's, then of p95 over
    AllAtOnce's."""
    traces = [Trace(s, args.jobs, args.rungs, args.interarrival, args.advice_outage) for s in args.tuning_seeds]
    print(
        "| bound s | confidence | request cost s | advice weight | goals met | requests/job (max) "
        "| median over oracle | p95 / AllAtOnce's (max) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    scored = []
    for bound, confidence, cost, weight in itertools.product(
        args.sweep_bounds, args.sweep_confidences, args.sweep_costs, args.sweep_advice_weights
    ):
        policy = ao.Policy(bound_s=bound, confidence=confidence, request_cost_s=cost, advice_weight=weight)
        runs = [run(t, policy) for t in traces]
        requests = [r[1].requests for r in runs]
        median = [r[1].median_s / r[2].median_s - 1 for r in runs]
        p95 = [r[1].p95_s / r[0].p95_s for r in runs]
        met = sum(x <= 1.5 for x in requests) + sum(x <= 0.10 for x in median) + sum(x <= 1.0 for x in p95)
        scored.append((-met, statistics.fmean(median), statistics.fmean(p95), policy))
        print(
            f"| {bound:.0f} | {confidence} | {cost:.0f} | {weight:.0f} | {met} of {3 * len(runs)} "
            f"| {statistics.fmean(requests):.2f} ({max(requests):.2f}) | {statistics.fmean(median):+.0%} "
            f"| {statistics.fmean(p95):.2f} ({max(p95):.2f}) |",
            flush=True,
        )
    best = min(scored, key=lambda row: row[:3])[3]
    print(
        f"pick: bound {best.bound_s:.0f} s, confidence {best.confidence}, request cost {best.request_cost_s:.0f} s, "
        f"advice weight {best.advice_weight:.0f}"
    )
    return best


def update(path: Path, text: str) -> None:
    """Replace what stands between the markers in ``path`` with ``text``."""
    old = path.read_text()
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if not pattern.search(old):
        raise SystemExit(f"{path} has no {BEGIN} ... {END} markers")
    path.write_text(pattern.sub(lambda _: f"{BEGIN}\n{text}\n{END}", old, count=1))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=54)
    parser.add_argument("--jobs", type=int, default=240)
    parser.add_argument("--rungs", type=lambda s: tuple(s.split(",")), default=("reservation", "dws", "spot"))
    parser.add_argument("--interarrival", type=float, default=900.0, help="mean seconds between jobs")
    parser.add_argument("--advice-outage", type=float, default=0.03, help="share of jobs whose advice calls all fail")
    parser.add_argument("--bound", type=float, default=ao.Policy().bound_s)
    parser.add_argument("--confidence", type=float, default=ao.Policy().confidence)
    parser.add_argument("--request-cost", type=float, default=ao.Policy().request_cost_s)
    parser.add_argument("--advice-weight", type=float, default=ao.Policy().advice_weight)
    parser.add_argument("--sweep", action="store_true")
    floats = lambda s: [float(x) for x in s.split(",")]  # noqa: E731
    parser.add_argument("--tuning-seeds", type=lambda s: [int(x) for x in s.split(",")], default=[1, 2, 3])
    parser.add_argument("--sweep-bounds", type=floats, default=[300.0, 600.0, 900.0, 1200.0])
    parser.add_argument("--sweep-confidences", type=floats, default=[0.5, 0.7, 0.9])
    parser.add_argument("--sweep-costs", type=floats, default=[0.0, 150.0, 300.0, 600.0])
    parser.add_argument("--sweep-advice-weights", type=floats, default=[2.0, 4.0])
    parser.add_argument("--update", type=Path, help="write the table between the markers of this file")
    args = parser.parse_args(argv)
    if unknown := [r for r in args.rungs if r not in RUNG_MODELS]:
        parser.error(f"unknown rung {unknown[0]}; one of {', '.join(RUNG_MODELS)}")
    if args.sweep:
        sweep(args)
        return 0
    trace = Trace(args.seed, args.jobs, args.rungs, args.interarrival, args.advice_outage)
    policy = ao.Policy(
        bound_s=args.bound,
        confidence=args.confidence,
        request_cost_s=args.request_cost,
        advice_weight=args.advice_weight,
    )
    rows = run(trace, policy)
    head = (
        f"Seed {args.seed}: {args.jobs} jobs, {len(REGIONS)} regions x {len(args.rungs)} rungs "
        f"({', '.join(args.rungs)}), a job every {args.interarrival:.0f} s on average, advice outage "
        f"{args.advice_outage:.0%}; policy bound {policy.bound_s:.0f} s, confidence {policy.confidence}, request cost "
        f"{policy.request_cost_s:.0f} s, advice weight {policy.advice_weight:.0f}, all after "
        f"{policy.full_after_s:.0f} s."
    )
    text = "\n".join([head, "", table(rows), "", *goals(rows)])
    print(text)
    if args.update:
        update(args.update, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
