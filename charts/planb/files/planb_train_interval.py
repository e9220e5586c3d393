"""planb training job, the checkpoint interval: at which steps the loop saves, from what its own saves cost.

planb's policy: periodic saves take at most PLANB_CHECKPOINT_BUDGET (3%) of a run's training time, at every size,
because what a save costs grows with the state, the host and the disk, not with the steps between saves. On one TPU
v5e chip at the chart's 500 steps, saves cost 1.8% of training for the 2.4 GB default state and 7.8% for a 6.1 GB one
(BENCHMARKS.md, "TPU v5e, one chip"): no interval fixed in steps or in seconds holds for both without a table of
sizes, chips and disks. So the loop measures each save it makes and spaces the next one by that measure.

What a save costs. Saves are asynchronous (planb_train_checkpoints): the step that saves waits for the state's copy
to host memory, and the steps beside the background write run slower, since they share the host with it. A save's
cost is the time of the steps from the save to the step boundary that finds it committed, less the same number of
quiet steps (the median of the recent steps no save touched): its copy and the slowdown, as the training saw them.

The interval. Saves land on multiples of PLANB_CHECKPOINT_EVERY, as they always did: the user's interval is the most
often the job saves, and each save it keeps is on the user's grid. After each save is measured, the next is the first
multiple at which both hold, the next save's cost predicted as the mean of the recent ones: the run's saves so far and
the next take at most the budget of the run's training up to it (its time since its first step, less the saves', and
the steps to come at the quiet step's time); and the next save's own cost is at most the budget of the steps since
this one, so that a run that saved little for a while does not spend what it saved up in a burst of saves. No save
starts while the one before is being written. So the first save of a run comes at PLANB_CHECKPOINT_EVERY, before
anything is measured, and from the second on the run's saves stay within the budget. PLANB_CHECKPOINT_BUDGET=0 saves
at every multiple, whatever it costs. The price of a wider interval is what a hard failure loses (a lost VM with no
notice): a stop notice saves at once whatever the interval (planb_train_loop.StopNotice).

Under jax.distributed every process must save the same steps: process 0 decides, and at each multiple its decision
is broadcast to the others (planb_train_checkpoints.Checkpointer), one small collective per PLANB_CHECKPOINT_EVERY
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


class SaveInterval:
    """planb's checkpoint interval (the module docstring): told each step boundary's time and each save, it says at
    which steps to save. ``tick`` at each boundary, before ``due``; ``saved`` after a save; ``committed`` at the
    boundary that finds it written."""

    def __init__(self, every: int, budget: float) -> None:
        self.every = every
        self.budget = budget
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

    def due(self, step: int) -> bool:
        """Whether to save after ``step`` steps: a multiple of the interval, and, with a budget, none being written and
        the budget's step reached."""
        if step % self.every:
            return False
        return self.budget <= 0 or (self._open is None and step >= self.next_step)

    def saved(self, step: int, blocking_s: float) -> None:
        """A periodic save of ``step`` began; its copy to host memory took ``blocking_s``."""
        self._open = (step, blocking_s, [])

    def committed(self) -> MeasuredSave | None:
        """The save being written has committed (seen at this boundary): its cost, and the next save's step."""
        if self._open is None:
            return None
        step, blocking_s, touched = self._open
        self._open = None
        quiet_s = statistics.median(self.quiet) if self.quiet else math.nan
        cost = max(0.0, sum(touched) - len(touched) * quiet_s) if self.quiet else math.nan
        costs = [m.cost_s for m in self.measured if math.isfinite(m.cost_s)]
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
            "saves": [m.to_dict() for m in self.measured],
        }
