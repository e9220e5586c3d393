"""planb training job, the checkpoint interval: at which steps the loop saves, from what its own saves cost.

planb's policy: periodic saves take at most PLANB_CHECKPOINT_BUDGET (3%) of a run's training time, at every size,
because what a save costs grows with the state, the host and the disk, not with the steps between saves. On one TPU
v5e chip at the chart's 500 steps, saves cost 1.8% of training for the 2.4 GB default state and 7.8% for a 6.1 GB one
(BENCHMARKS.md, "TPU v5e, one chip"): no interval fixed in steps or in seconds holds for both without a table of
sizes, chips and disks. So the loop measures each save it makes and spaces the next one by that measure.

What a save costs. Saves are asynchronous (planb_train.checkpoints): the step that saves waits for the state's copy
to host memory, and the steps beside the background write run slower, since they share the host with it. A save's
cost is the time of the steps from the save to the step boundary that finds it committed, less the same number of
quiet steps (the median of the recent steps no save touched): its copy and the slowdown, as the training saw them.

The interval. Saves land on multiples of PLANB_CHECKPOINT_EVERY, as they always did: the user's interval is the most
often the job saves, and each save it keeps is on the user's grid. After each save is measured, the next is the first
multiple at which both hold, the next save's cost predicted as the mean of the recent ones: the run's saves so far and
the next take at most the budget of the run's training up to it (its time since its first step, less the saves', and
the steps to come at the quiet step's time); and the next save's own cost is at most the budget of the steps since
this one, so that a run that saved little for a while does not spend what it saved up in a burst of saves. No save
starts while the one before is being written. PLANB_CHECKPOINT_BUDGET=0 saves at every multiple, whatever it costs.
The price of a wider interval is what a hard failure loses (a lost VM with no notice): a stop notice saves at once
whatever the interval (planb_train.notice.StopNotice).

The first save of a run, before any save of it is measured, follows the same rule with its cost estimated: the
state's bytes at the rate of this job's last measured save (kept in planb-progress.json by planb_train.progress, so
a restarted or resumed run has it), or, for a job that has measured none, at PRIOR_BYTES in PRIOR_COST_S, the slower
of the two rates measured on a TPU v5e chip. It is the first multiple at which that estimate is within the budget
of the run's training so far (its steps after the first, which holds the compilation). So on the chip the
2.4 GB default state's first save comes at step 1,000 of the chart's 500-step grid (3.2 s estimated against 3% of
74 s of training at step 500) and the 6.1 GB one's at 1,500, where a first save at 500 cost 3.5% and 7.0% of the
training before it. A small state (the linear model, a transformer of a few MB) is estimated at milliseconds or
less and saves at PLANB_CHECKPOINT_EVERY, as before. From the first measured save on, the run's saves stay within
the budget.

Under jax.distributed every process must save the same steps: process 0 decides, and at each multiple its decision
is broadcast to the others (planb_train.checkpoints.Checkpointer), one small collective per PLANB_CHECKPOINT_EVERY
steps.
"""

from __future__ import annotations

import collections
import dataclasses
import math
import statistics
from typing import Any

#: Quiet steps the baseline is the median of: the most recent ones, so that it follows a run whose steps drift.
QUIET_WINDOW = 256
#: Measured saves the next one's cost is predicted from (their mean).
RECENT_SAVES = 4
#: What a save cost a job that has measured none, as bytes in seconds: on one TPU v5e chip (2026-12-07, the
#: save-policy lines of docs/tpu-v5e-save-policy-2026-12-07.jsonl) a 6,079,524,868-byte state's first save cost the
#: training 7.29 s (0.83 GB/s) and a 2,631,180,292-byte state's 2.65 s (0.99 GB/s); the slower rate, so that a first
#: save is later rather than over the budget. A host, disk or bucket slower than the chip's local disk is measured at
#: its first save; from then on its own rate counts, across restarts.
PRIOR_BYTES = 6_079_524_868
PRIOR_COST_S = 7.2899119775003385


@dataclasses.dataclass(frozen=True)
class MeasuredSave:
    """One periodic save, measured: the decision it led to, and the inputs of that decision."""

    step: int  # the step saved
    cost_s: float  # what it cost the training: the steps it touched, less as many quiet steps
    blocking_s: float  # of which the step that saved waited for the copy to host memory
    steps_touched: int  # the steps from the save to the boundary that found it committed
    quiet_step_s: float  # the median quiet step at that boundary
    run_cost_s: float  # every measured save of this run so far, this one included
    trained_s: float  # the run's training up to that boundary, less its saves' cost
    next_step: int  # the first step the next periodic save may take

    def to_dict(self) -> dict[str, Any]:
        """As JSON holds it: a figure not measured (no quiet step to count by) is None."""
        fields = dataclasses.asdict(self)
        return {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in fields.items()}


def next_save_step(
    every: int, budget: float, saved_at: int, now: int, trained_s: float, costs: list[float], quiet_step_s: float
) -> int:
    """The first multiple of ``every`` after ``saved_at`` at which the next save keeps within ``budget``: the run's
    saves (``costs``, measured, in seconds) and one more at their recent mean, against its training (``trained_s`` up
    to step ``now``, then steps of ``quiet_step_s``); and that one more against the steps since ``saved_at``. With no
    budget, no cost or no step time to count by: the next multiple."""
    floor = (saved_at // every + 1) * every
    if budget <= 0 or not costs or not quiet_step_s > 0:
        return floor
    recent = costs[-RECENT_SAVES:]
    mean = sum(recent) / len(recent)
    cumulative = now + ((sum(costs) + mean) / budget - trained_s) / quiet_step_s
    spaced = saved_at + mean / (budget * quiet_step_s)
    return max(floor, math.ceil(max(cumulative, spaced) / every) * every)


def estimated_cost(state_bytes: int, measured: dict[str, Any] | None) -> float:
    """What a save of ``state_bytes`` will cost the training, before any save of the run is measured: at the rate of
    the job's last ``measured`` save (MeasuredSave.memory's), else at PRIOR_BYTES in PRIOR_COST_S."""
    if measured is not None:
        return state_bytes * float(measured["cost_s"]) / int(measured["state_bytes"])
    return state_bytes * PRIOR_COST_S / PRIOR_BYTES


def remembered(entry: object) -> dict[str, Any] | None:
    """A measured save as planb-progress.json keeps it (``memory``), or None for anything else."""
    if not isinstance(entry, dict):
        return None
    try:
        step, cost, size = int(entry["step"]), float(entry["cost_s"]), int(entry["state_bytes"])
    except (KeyError, TypeError, ValueError):
        return None
    if not (math.isfinite(cost) and cost >= 0 and size > 0):
        return None
    return {"step": step, "cost_s": cost, "state_bytes": size}


class SaveInterval:
    """planb's checkpoint interval (the module docstring): told each step boundary's time and each save, it says at
    which steps to save. ``tick`` at each boundary, before ``due``; ``saved`` after a save; ``committed`` at the
    boundary that finds it written. ``state_bytes``: the training state's (0: not known, the first save at the first
    multiple); ``remember`` gives it the job's last measured save from a run before this one."""

    def __init__(self, every: int, budget: float, state_bytes: int = 0) -> None:
        self.every = every
        self.budget = budget
        self.state_bytes = state_bytes
        self.earlier: dict[str, Any] | None = None  # the job's last measured save before this run (remember)
        #: The first save's decision while nothing of this run is measured: the multiple it waited at last (the run's
        #: training there) and the one it saved at.
        self.first: dict[str, Any] = {}
        self.notes: list[str] = []  # log lines for the loop to print (the first save's wait)
        self.start: int | None = None  # the steps done when the run's loop began (the first boundary's, less one)
        self.quiet: collections.deque[float] = collections.deque(maxlen=QUIET_WINDOW)
        self.measured: list[MeasuredSave] = []
        self.next_step = 0  # before the first save: any multiple
        self._last: float | None = None  # the previous boundary's time
        self._elapsed = 0.0  # seconds from the first boundary to the last, saves included
        self._open: tuple[int, float, list[float]] | None = None  # the save being written: step, blocking, steps

    def tick(self, step: int, now: float) -> None:
        """A step boundary: ``step`` steps done at ``now`` (seconds, time.perf_counter). The step that ended here is a
        quiet one, or one a save touched."""
        if self.start is None:
            self.start = step - 1
        if self._last is not None:
            elapsed = now - self._last
            self._elapsed += elapsed
            if self._open is not None:
                self._open[2].append(elapsed)
            else:
                self.quiet.append(elapsed)
        self._last = now

    def remember(self, entry: object) -> None:
        """The job's last measured save, as a run before this one left it (``memory``, in planb-progress.json)."""
        self.earlier = remembered(entry)

    def memory(self) -> dict[str, Any] | None:
        """What the job keeps for its next run: its last measured save (step, cost, the state's bytes), else the one
        a run before this one left."""
        done = [m for m in self.measured if math.isfinite(m.cost_s)]
        if done and self.state_bytes > 0:
            return {"step": done[-1].step, "cost_s": done[-1].cost_s, "state_bytes": self.state_bytes}
        return self.earlier

    def estimate(self) -> float:
        """The first save's estimated cost (estimated_cost); NaN without the state's bytes."""
        return estimated_cost(self.state_bytes, self.earlier) if self.state_bytes > 0 else math.nan

    def due(self, step: int) -> bool:
        """Whether to save after ``step`` steps: a multiple of the interval, and, with a budget, none being written and
        the budget's step reached; before any save of the run is measured, its estimated cost within the budget of
        the run's training so far."""
        if step % self.every:
            return False
        if self.budget <= 0:
            return True
        if self._open is not None or step < self.next_step:
            return False
        if self._costs() or not self.estimate() > self.budget * self._elapsed:
            return True
        if "waited_at" not in self.first:
            self.notes.append(self.waiting_line(step))
        self.first.update(waited_at=step, waited_trained_s=self._elapsed)
        return False

    def waiting_line(self, step: int) -> str:
        """The log line of the first multiple the first save waits past: its estimate, and what it is from."""
        e = self.earlier
        basis = (
            f"this job's save of step {e['step']}, {e['cost_s']:.3g} s for {size(e['state_bytes'])}"
            if e
            else f"{PRIOR_COST_S:.3g} s for {size(PRIOR_BYTES)}, measured on a TPU v5e chip"
        )
        return (
            f"Checkpoint step {step} skipped: a save of the state ({size(self.state_bytes)}) is estimated at "
            f"{self.estimate():.3g} s of training (at the rate of {basis}), over {100 * self.budget:g}% of the "
            f"{self._elapsed:.1f} s trained; the first save waits for a multiple of {self.every} steps within it"
        )

    def _costs(self) -> list[float]:
        """The run's measured saves' costs (a save with no quiet step to count by is not measured)."""
        return [m.cost_s for m in self.measured if math.isfinite(m.cost_s)]

    def saved(self, step: int, blocking_s: float) -> None:
        """A periodic save of ``step`` began; its copy to host memory took ``blocking_s``."""
        self._open = (step, blocking_s, [])
        if not self._costs() and "saved_at" not in self.first:
            self.first.update(saved_at=step, trained_s=self._elapsed)

    def committed(self) -> MeasuredSave | None:
        """The save being written has committed (seen at this boundary): its cost, and the next save's step."""
        if self._open is None:
            return None
        step, blocking_s, touched = self._open
        self._open = None
        quiet_s = statistics.median(self.quiet) if self.quiet else math.nan
        cost = max(0.0, sum(touched) - len(touched) * quiet_s) if self.quiet else math.nan
        costs = self._costs()
        if math.isfinite(cost):
            costs.append(cost)
        trained_s = self._elapsed - sum(costs)
        now = step + len(touched)
        self.next_step = next_save_step(self.every, self.budget, step, now, trained_s, costs, quiet_s)
        measured = MeasuredSave(step, cost, blocking_s, len(touched), quiet_s, sum(costs), trained_s, self.next_step)
        self.measured.append(measured)
        return measured

    def line(self, m: MeasuredSave) -> str:
        """The log line of a measured save."""
        if not math.isfinite(m.cost_s):
            return f"Checkpoint step {m.step}: no quiet step to measure its cost by; the next at step {m.next_step}"
        share = m.run_cost_s / m.trained_s if m.trained_s > 0 else math.inf
        return (
            f"Checkpoint step {m.step} cost {m.cost_s:.2f} s of training (copy to host {m.blocking_s:.2f} s, "
            f"{m.steps_touched} step(s) to its commit); saves so far {100 * share:.1f}% of {m.trained_s:.1f} s of "
            f"training; the next at step {m.next_step} (every {self.every} steps, at most {100 * self.budget:g}%)"
        )

    def record(self) -> dict[str, Any]:
        """The metrics file's account of the policy: its settings and every measured save."""
        return {
            "every": self.every,
            "budget": self.budget,
            "start_step": self.start,
            "state_bytes": self.state_bytes,
            "earlier_save": self.earlier,
            "first_save": {"estimated_cost_s": finite(self.estimate()), **self.first},
            "saves": [m.to_dict() for m in self.measured],
        }


def size(n: int) -> str:
    """Bytes, as a log line says them."""
    return f"{n / 1e9:.2f} GB" if n >= 10**8 else f"{n:,} bytes"


def finite(value: float) -> float | None:
    """``value``, or None (JSON's null) for a figure not known."""
    return value if math.isfinite(value) else None
