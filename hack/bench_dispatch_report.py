"""hack/bench_dispatch.py's tables: one per population (TPU jobs without advice, GPU jobs with it), the goals each
meets, and the check seeds' lines. Formatting only: the dispatchers are
``bench_dispatch_replay``'s, the runs ``bench_dispatch``'s."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Summary:
    """One dispatcher's row over one population's jobs."""

    name: str
    requests: float
    median_s: float
    p95_s: float
    short_spot: int
    races: int


@dataclass(frozen=True)
class Goal:
    """A population's goals: at most ``max_requests`` requests a job, a p95 no worse than the race's, and,
    where ``median_over_oracle`` is set, a median within that share over the oracle's."""

    max_requests: float
    median_over_oracle: float | None


#: GPU jobs have Google's advice, so the goals of the advice-ordered policy hold for them; TPU jobs have none (Google
#: shows no TPU availability), so the ledger and the reservation reads must do with up to 2 requests a job.
GOALS = {"tpu": Goal(2.0, None), "gpu": Goal(1.5, 0.10)}
TITLES = {
    "tpu": "TPU jobs (`ct6e-standard-4t`, 4 VMs): no advice, by design (Google's advice.capacity shows no TPU "
    "availability; the keeper asks nothing), ordered by the reservation reads and planb's ledger",
    "gpu": "GPU jobs (`a3-highgpu-8g`, 2 VMs; reservation, DWS and Spot rungs): Google's advice (obtainability, and "
    "Spot's estimatedUptime)",
}


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.2f} min"


def _over(a: float, b: float) -> float:
    return a / b - 1 if b else math.inf


def met(population: str, rows: Sequence[Summary]) -> list[tuple[str, bool]]:
    """Each of the population's goals (``GOALS``) by name, and whether the advice-ordered row meets it."""
    race, advised, best = rows
    goal = GOALS[population]
    held = [("requests", advised.requests <= goal.max_requests)]
    if goal.median_over_oracle is not None:
        held.append(("median", _over(advised.median_s, best.median_s) <= goal.median_over_oracle))
    return [*held, ("p95", advised.p95_s <= race.p95_s)]


def table(rows: Sequence[Summary]) -> str:
    lines = [
        "| dispatcher | requests per job (mean) | submission to admission, median | p95 "
        "| admitted on Spot shorter than checkpoint + restore | jobs raced for want of advice |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {s.name} | {s.requests:.2f} | {minutes(s.median_s)} | {minutes(s.p95_s)} | {s.short_spot} | {s.races} |"
        for s in rows
    ]
    return "\n".join(lines)


def goals(population: str, rows: Sequence[Summary], informed_s: float | None = None) -> list[str]:
    """The population's goals, each said with its figures and whether it holds; the median against the oracle's
    also where it is no goal (TPU)."""
    race, advised, best = rows
    goal, held = GOALS[population], dict(met(population, rows))
    word = {True: "holds", False: "missed"}
    extra = _over(advised.median_s, best.median_s)
    median = f"{minutes(advised.median_s)} against {minutes(best.median_s)}, {extra:+.0%}"
    lines = [
        f"- at most {goal.max_requests:.1f} requests per job: {advised.requests:.2f} against the race's "
        f"{race.requests:.2f} ({word[held['requests']]})",
        f"- median within {goal.median_over_oracle:.0%} of the oracle's: {median} ({word[held['median']]})"
        if goal.median_over_oracle is not None
        else f"- median against the oracle's (no goal): {median}",
        f"- p95 no worse than AllAtOnce's: {minutes(advised.p95_s)} against {minutes(race.p95_s)} "
        f"({word[held['p95']]})",
    ]
    if informed_s is not None:
        lines.append(
            f"- for scale, the fastest pair with capacity asked once, its state and mean delay known (not the job's "
            f"own draw; Spot without estimatedUptime left out): median {minutes(informed_s)}, "
            f"{_over(informed_s, best.median_s):+.0%} over the oracle's"
        )
    return lines


def report(head: str, rows: Mapping[str, Sequence[Summary]], informed: Mapping[str, float]) -> str:
    """The reported seed: its head line, then per population its title, table and goals."""
    parts = [head]
    for population, summaries in rows.items():
        parts += [
            f"**{TITLES[population]}**",
            table(summaries),
            "\n".join(goals(population, summaries, informed.get(population))),
        ]
    return "\n\n".join(parts)


CHECK_HEAD = (
    "| seed | jobs | requests per job: race / advice-ordered | median: advice-ordered / oracle | median, state known "
    "(one ask) | p95: advice-ordered / AllAtOnce | goals met |\n|---|---|---|---|---|---|---|"
)


def check_line(seed: int, population: str, rows: Sequence[Summary], informed_s: float) -> str:
    """One check seed's line for one population."""
    race, advised, best = rows
    held = met(population, rows)
    names = ", ".join(name for name, ok in held if ok) or "none"
    return (
        f"| {seed} | {population.upper()} | {race.requests:.2f} / {advised.requests:.2f} "
        f"| {minutes(advised.median_s)} / {minutes(best.median_s)} ({_over(advised.median_s, best.median_s):+.0%}) "
        f"| {_over(informed_s, best.median_s):+.0%} "
        f"| {minutes(advised.p95_s)} / {minutes(race.p95_s)} | {sum(ok for _, ok in held)} of {len(held)} ({names}) |"
    )
