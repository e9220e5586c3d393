"""hack/bench_concurrent.py's figures, from what one run recorded (pure: tests/unit/hack/test_bench_concurrent.py).

A run's timeline holds the samples of the flavor the job was admitted on, when its first training step showed,
when it completed, train.py's resume lines and its training time kept; the figures are the time to the first
step, the share of the run on the preferred rung, the migrations, the steps lost per migration and goodput as
docs/goodput.md defines it (training kept / wall time), since submission and since the first admission.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))  # the job's own modules, beside hack/
from planb_train.progress import RESUMED_LINE as LOST  # the one pattern, beside the line it reads

PREFERRED = "reserved"


@dataclass(frozen=True)
class Sample:
    """One poll: seconds since submission, and the accelerator flavor the job is admitted on ('' for none)."""

    t: float
    flavor: str


@dataclass
class Timeline:
    """What one run recorded; times are seconds since the job was submitted."""

    samples: list[Sample] = field(default_factory=list)
    first_step: float | None = None
    finished: float | None = None
    #: Per restart of train.py: (the step it resumed from, the steps it lost).
    resumed: list[tuple[int, int]] = field(default_factory=list)
    #: The training time kept at train.py's last line (seconds), None without one.
    kept: float | None = None


@dataclass(frozen=True)
class Figures:
    time_to_first_step: float | None
    preferred_share: float | None
    #: (when, from flavor, to flavor) per move of the admitted job.
    migrations: list[tuple[float, str, str]]
    steps_lost: list[int]
    #: Goodput's terms (seconds): training kept, wall time since submission and from the first admission.
    kept: float | None = None
    wall: float | None = None
    wall_after_admission: float | None = None

    @property
    def goodput(self) -> float | None:
        """Training kept / wall time since submission (docs/goodput.md); None when a term is missing."""
        return ratio(self.kept, self.wall)

    @property
    def goodput_after_admission(self) -> float | None:
        """Training kept / wall time from the first admission to completion."""
        return ratio(self.kept, self.wall_after_admission)


def parse_resumed(text: str) -> list[tuple[int, int]]:
    """train.py's resume lines in `text`: (the step it resumed from, the steps lost) each."""
    return [(int(step), int(lost)) for step, lost in LOST.findall(text)]


def parse_kept(text: str) -> float | None:
    """The training time kept at train.py's last "training time up to step R: K s kept" line in `text`, read as
    `planb status` reads it (planb.status.trainlog); None without one, or where train.py wrote "unknown"."""
    from planb.status import trainlog

    record = trainlog.parse_log(text)
    return None if record is None else record.kept_s


def ratio(part: float | None, whole: float | None) -> float | None:
    return None if part is None or whole is None or whole <= 0 else part / whole


def segments(samples: Sequence[Sample], end: float) -> list[tuple[str, float, float]]:
    """(flavor, start, stop) of each stretch the job stayed admitted on one flavor; a stretch ends at the next
    sample that differs, the last one at `end`."""
    out: list[tuple[str, float, float]] = []
    for i, sample in enumerate(samples):
        stop = samples[i + 1].t if i + 1 < len(samples) else max(end, sample.t)
        if not sample.flavor:
            continue
        if out and out[-1][0] == sample.flavor and out[-1][2] == sample.t:
            out[-1] = (sample.flavor, out[-1][1], stop)
        else:
            out.append((sample.flavor, sample.t, stop))
    return out


def migrations(samples: Sequence[Sample]) -> list[tuple[float, str, str]]:
    """Each change of the admitted flavor, an unadmitted gap between two flavors included."""
    moves: list[tuple[float, str, str]] = []
    last = ""
    for sample in samples:
        if sample.flavor and last and sample.flavor != last:
            moves.append((sample.t, last, sample.flavor))
        last = sample.flavor or last
    return moves


def figures(timeline: Timeline, preferred: str = PREFERRED) -> Figures:
    share: float | None = None
    start, end = timeline.first_step, timeline.finished
    if start is not None and end is not None and end > start:
        on = sum(
            max(0.0, min(stop, end) - max(begin, start))
            for flavor, begin, stop in segments(timeline.samples, end)
            if flavor == preferred
        )
        share = on / (end - start)
    admitted = next((sample.t for sample in timeline.samples if sample.flavor), None)
    after = None if end is None or admitted is None else end - admitted
    return Figures(
        time_to_first_step=start,
        preferred_share=share,
        migrations=migrations(timeline.samples),
        steps_lost=[lost for _, lost in timeline.resumed],
        kept=timeline.kept,
        wall=end,
        wall_after_admission=after,
    )


def table(results: dict[str, Figures], checkpoint_every: int) -> str:
    """The side-by-side table BENCHMARKS.md holds (markdown)."""

    def cell(value: float | None, fmt: str) -> str:
        return "-" if value is None else fmt.format(value)

    def percent(share: float | None) -> float | None:
        return None if share is None else 100 * share

    def lost(f: Figures) -> str:
        if not f.migrations:
            return "no migration"
        worst = max(f.steps_lost, default=0)
        return f"{', '.join(map(str, f.steps_lost)) or '-'} (max {worst}; checkpoint interval {checkpoint_every})"

    def goodput(kept: float | None, wall: float | None) -> str:
        share = ratio(kept, wall)
        return "-" if share is None or kept is None else f"{100 * share:.1f} % ({kept:.0f} s / {wall:.0f} s)"

    modes = list(results)
    rows = [
        "| figure | " + " | ".join(modes) + " |",
        "|---|" + "---|" * len(modes),
        "| time to first training step | " + " | ".join(cell(results[m].time_to_first_step, "{:.0f} s") for m in modes)
        + " |",
        f"| share of the run on {PREFERRED} | " + " | ".join(cell(percent(results[m].preferred_share), "{:.0f} %")
                                                             for m in modes) + " |",
        "| migrations | " + " | ".join(
            ", ".join(f"{a} -> {b} at {t:.0f} s" for t, a, b in results[m].migrations) or "none" for m in modes
        ) + " |",
        "| steps lost per migration | " + " | ".join(lost(results[m]) for m in modes) + " |",
        "| goodput since submission (training kept / wall) | " + " | ".join(
            goodput(results[m].kept, results[m].wall) for m in modes) + " |",
        "| goodput after the first admission (training kept / wall) | " + " | ".join(
            goodput(results[m].kept, results[m].wall_after_admission) for m in modes) + " |",
    ]  # fmt: skip
    return "\n".join(rows)
