"""Advice-ordered dispatch against AllAtOnce and an oracle, on seeded stockout traces, TPU and GPU jobs apart.

    .venv/bin/python hack/bench_dispatch.py                  # the table (BENCHMARKS.md, "Dispatch")
    .venv/bin/python hack/bench_dispatch.py --update BENCHMARKS.md   # the same, written between its markers
    .venv/bin/python hack/bench_dispatch.py --sweep          # the policy's knobs (GRID) on TUNING_SEEDS 1-12
    .venv/bin/python hack/bench_dispatch.py --advice-model realtime   # Google's score as its page describes it

Pure Python, no cluster: a replay of planb.regions.dispatcher.offer_order's policy and
planb.regions.dispatcher.ledger.

**The trace and Google's advice** (``bench_dispatch_trace``, beside this script, whose docstring has the model and
the noise model): two populations replayed side by side, each with its own pairs (regions by rungs, its shape) and
reported apart, because Google answers them apart: TPU jobs (``ct6e-standard-4t``, 4 VMs) get no advice at all, by
design (Google's advice.capacity shows no TPU availability; the keeper asks nothing), so planb orders them by the
reservation reads and its ledger; GPU jobs (``a3-highgpu-8g``, 2 VMs) get Google's obtainability (half an hour stale
with noise on its logit; ``--advice-model realtime``: the pair's state now and over the last hour, with the same
noise) and Spot's estimatedUptime (the true uptime with noise). Each pair's grant probability drifts over the day,
stockouts come in episodes, DWS queues through one and the other rungs fail; the last region's reservation never
grants.

**The dispatchers.** *AllAtOnce* (today): every region gets the job at once; each region's ladder asks its rungs in
order, one request at a time, the next rung when one fails, the first rung again after the last; the first grant
wins. *Advice-ordered*: ``advice_order.plan`` at submission, with a ledger that learns from every request as jobs go
(what it knew at each submission only); it asks what ``OfferPlan.due`` names at submission, at each answer and at
each time ``due`` gives, the first grant wins; where the plan is the race, it runs AllAtOnce. *Oracle*: knows the
trace: the one pair, skipping Spot whose true uptime is below the job's checkpoint interval plus restore, that
grants first if asked when it first can. *Informed*, for scale, not a row: what knowing the state would buy without the
job's own draw (``informed``): the fastest pair by mean delay among those with capacity at submission, asked once.
Each ask counts as one request (a ProvisioningRequest, or the ladder's ask on a rung without one).

**Goals** (``GOALS``): GPU jobs at most 1.5 requests a job, a median within 10% of the oracle's and a p95
no worse than the race's; TPU jobs at most 2.0 requests a job and a p95 no worse than the race's (their median is
reported against the oracle's, with no goal: without advice it is what the ledger can learn).

**Seeds.** ``--sweep`` tunes on ``TUNING_SEEDS`` (1-12); the tables report ``--seed`` (54) and, below them, the same
policy on ``CHECK_SEEDS`` (101-105), neither of which the sweep sees. The dispatchers themselves:
``bench_dispatch_replay``; the tables: ``bench_dispatch_report``.
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
from dataclasses import replace
from pathlib import Path

from planb.regions.dispatcher import offer_order as ao
from planb.regions.dispatcher.ledger import Ledger

# The trace lives beside this script (hack/ is no package); run as a script, its directory is on sys.path already.
_HERE = os.path.dirname(os.path.realpath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
from bench_dispatch_replay import Result, advice_ordered, all_at_once, informed, oracle  # noqa: E402
from bench_dispatch_report import CHECK_HEAD, Summary, check_line, met, report  # noqa: E402
from bench_dispatch_trace import (  # noqa: E402
    ADVICE_MODELS,
    POPULATIONS,
    REGIONS,
    RUNG_MODELS,
    Trace,
)

BEGIN, END = "<!-- bench_dispatch: begin -->", "<!-- bench_dispatch: end -->"


def informed_median(trace: Trace, population: str) -> float:
    return statistics.median(informed(trace, job).wait_s for job in trace.jobs if job.population == population)


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def summarise(name: str, trace: Trace, population: str, results: list[Result]) -> Summary:
    """One row of ``population``'s table from every job's result (``results`` in the order of ``trace.jobs``)."""
    mine = [(job, r) for job, r in zip(trace.jobs, results, strict=True) if job.population == population]
    waits = [r.wait_s for _, r in mine]
    if not all(math.isfinite(w) for w in waits):
        raise SystemExit(f"{name}: a {population} job was never admitted within the trace; lengthen it")
    return Summary(
        name,
        statistics.fmean(r.requests for _, r in mine),
        statistics.median(waits),
        _p95(waits),
        sum(1 for job, r in mine if r.key and trace.short_spot(job, r.key)),
        sum(r.race for _, r in mine),
    )


#: Each population's race and oracle rows (they do not depend on the policy).
Fixed = dict[str, tuple[Summary, Summary]]


def populations(trace: Trace) -> list[str]:
    return [p for p in POPULATIONS if any(job.population == p for job in trace.jobs)]


def run(trace: Trace, policy: ao.Policy, fixed: Fixed | None = None) -> dict[str, list[Summary]]:
    """The three dispatchers over every job of the trace, in arrival order (one ledger for both populations, as the
    keeper keeps one), reported per population; ``fixed``: the race's and the oracle's rows already run."""
    if fixed is None:
        race = [all_at_once(trace, job) for job in trace.jobs]
        best = [oracle(trace, job) for job in trace.jobs]
        fixed = {
            p: (
                summarise("AllAtOnce (MultiKueue's default)", trace, p, race),
                summarise("oracle (knows the trace)", trace, p, best),
            )
            for p in populations(trace)
        }
    ledger = Ledger()
    advised = [advice_ordered(trace, job, ledger, policy) for job in trace.jobs]
    name = "advice-ordered (planb's policy, ledger learning)"
    return {p: [race_row, summarise(name, trace, p, advised), best_row] for p, (race_row, best_row) in fixed.items()}


#: The knobs --sweep tries by default (each a field of advice_order.Policy), and the seeds it tunes on.
GRID: dict[str, list[float]] = {
    "request_cost_s": [15.0, 30.0],
    "optimism": [0.5, 0.8],
    "unseen_miss_s": [60.0, 600.0],
    "min_score": [0.0, 0.1],
    "hedge_target_s": [math.inf, 90.0],
}
TUNING_SEEDS = list(range(1, 13))
#: Seeds neither tuned on nor reported: the same policy on them, to show the reported seed is not luck.
CHECK_SEEDS = [101, 102, 103, 104, 105]


def trace_of(args: argparse.Namespace, seed: int) -> Trace:
    """The seeded trace the command line describes (the report's, a check seed's or a tuning seed's)."""
    reads = args.reservations == "read"
    return Trace(
        seed, args.jobs, args.rungs, args.interarrival, args.advice_outage, args.advice_model, reads, args.populations
    )


def check_seeds(args: argparse.Namespace, policy: ao.Policy) -> str:
    """One line a check seed and population: its goals on the same policy."""
    lines = [CHECK_HEAD]
    for seed in args.check_seeds:
        trace = trace_of(args, seed)
        for population, rows in run(trace, policy).items():
            lines.append(check_line(seed, population, rows, informed_median(trace, population)))
    return "\n".join(lines)


def knobs(policy: ao.Policy) -> str:
    return ", ".join(f"{name} {getattr(policy, name):g}" for name in ao.Policy.__dataclass_fields__)


def sweep(args: argparse.Namespace, base: ao.Policy) -> ao.Policy:
    """The policy's knobs on the tuning seeds, never the reported one. The pick: the most goals met over the seeds
    and populations (``GOALS``), then the smallest mean excess of the median over the oracle's, then of p95 over
    AllAtOnce's (both over every seed and population)."""
    traces = [trace_of(args, s) for s in args.tuning_seeds]
    grid = {**GRID, **dict(args.grid or [])}
    print(
        f"| {' | '.join(grid)} | goals met | requests/job, TPU / GPU (max) | median over oracle (max) | p95 / race's |"
    )
    print("|---" * (len(grid) + 4) + "|")
    scored = []
    fixed = [{p: (r[0], r[2]) for p, r in run(t, base).items()} for t in traces]
    for values in itertools.product(*grid.values()):
        policy = replace(base, **dict(zip(grid, values, strict=True)))
        runs = [run(t, policy, f) for t, f in zip(traces, fixed, strict=True)]
        flat = [(p, rows) for r in runs for p, rows in r.items()]
        requests = {p: [rows[1].requests for q, rows in flat if q == p] for p in args.populations}
        median = [rows[1].median_s / rows[2].median_s - 1 for _, rows in flat]
        p95 = [rows[1].p95_s / rows[0].p95_s for _, rows in flat]
        held = [ok for p, rows in flat for _, ok in met(p, rows)]
        scored.append((-sum(held), statistics.fmean(median), statistics.fmean(p95), policy))
        per = " / ".join(f"{statistics.fmean(r):.2f} ({max(r):.2f})" for r in requests.values())
        print(
            f"| {' | '.join(f'{v:g}' for v in values)} | {sum(held)} of {len(held)} | {per} "
            f"| {statistics.fmean(median):+.0%} ({max(median):+.0%}) | {statistics.fmean(p95):.2f} ({max(p95):.2f}) |",
            flush=True,
        )
    best = min(scored, key=lambda row: row[:3])[3]
    print(f"pick: {knobs(best)}")
    return best


def _knob(text: str) -> tuple[str, float]:
    name, _, value = text.partition("=")
    if name not in ao.Policy.__dataclass_fields__:
        raise argparse.ArgumentTypeError(
            f"{name!r} is no knob of the policy: {', '.join(ao.Policy.__dataclass_fields__)}"
        )
    return name, float(value)


def _knobs(text: str) -> tuple[str, list[float]]:
    name, _, values = text.partition("=")
    return _knob(f"{name}=0")[0], [float(v) for v in values.split(",")]


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
    parser.add_argument("--jobs", type=int, default=240, help="jobs of each population")
    parser.add_argument("--rungs", type=lambda s: tuple(s.split(",")), default=("reservation", "dws", "spot"))
    parser.add_argument("--interarrival", type=float, default=900.0, help="mean seconds between one population's jobs")
    parser.add_argument(
        "--populations",
        type=lambda s: tuple(s.split(",")),
        default=POPULATIONS,
        help=f"which to replay, of {','.join(POPULATIONS)} (bench_dispatch_trace's docstring)",
    )
    parser.add_argument("--advice-outage", type=float, default=0.03, help="share of jobs whose advice calls all fail")
    parser.add_argument(
        "--advice-model",
        choices=ADVICE_MODELS,
        default="stale",
        help="Google's score: bench_dispatch_trace's docstring",
    )
    parser.add_argument(
        "--reservations",
        choices=("read", "unread"),
        default="read",
        help="read each reservation's room before offering it (planb.regions.dispatcher.reservation_room), or not",
    )
    parser.add_argument("--policy", type=_knob, action="append", metavar="KNOB=VALUE", help="a Policy field's value")
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--tuning-seeds", type=lambda s: [int(x) for x in s.split(",")], default=TUNING_SEEDS)
    parser.add_argument("--check-seeds", type=lambda s: [int(x) for x in s.split(",") if x], default=CHECK_SEEDS)
    parser.add_argument("--grid", type=_knobs, action="append", metavar="KNOB=V1,V2", help="a knob's values to sweep")
    parser.add_argument("--update", type=Path, help="write the table between the markers of this file")
    args = parser.parse_args(argv)
    if unknown := [r for r in args.rungs if r not in RUNG_MODELS]:
        parser.error(f"unknown rung {unknown[0]}; one of {', '.join(RUNG_MODELS)}")
    if unknown := [p for p in args.populations if p not in POPULATIONS]:
        parser.error(f"unknown population {unknown[0]}; one of {', '.join(POPULATIONS)}")
    policy = replace(ao.Policy(), **dict(args.policy or []))
    if args.sweep:
        sweep(args, policy)
        return 0
    trace = trace_of(args, args.seed)
    rows = run(trace, policy)
    head = (
        f"Seed {args.seed}: {args.jobs} jobs of each population ({', '.join(args.populations)}), {len(REGIONS)} "
        f"regions x {len(args.rungs)} rungs ({', '.join(args.rungs)}), a job of each every {args.interarrival:.0f} s "
        f"on average, advice outage {args.advice_outage:.0%}, Google's score (GPU) the {args.advice_model} model, "
        f"reservations {args.reservations}; policy: {knobs(policy)}."
    )
    text = report(head, rows, {p: informed_median(trace, p) for p in rows})
    if args.check_seeds:
        text += f"\n\nThe same policy on seeds neither tuned on nor reported:\n\n{check_seeds(args, policy)}"
    print(text)
    if args.update:
        update(args.update, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
