"""planb training job, one training step as the loop takes it: the step dispatched, its loss logged (and reported
to Ray Train) or waited for with one step kept in flight, the first step's startup line, a periodic save, and the
progress record of the steps known to be done."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import jax

from planb_train.config import TrainConfig
from planb_train.metrics import StepRecord, logged_metrics
from planb_train.startup import Start, process_age_s


class Steps:
    """The steps of one run from ``run``'s state; ``report`` is Ray Train's (a barrier of all ranks at every logged
    step). ``record`` keeps what the steps leave for the metrics."""

    def __init__(self, cfg: TrainConfig, run: Start, report: Callable[[dict[str, Any]], None] | None) -> None:
        self.cfg, self.run, self.report = cfg, run, report
        self.record = StepRecord()
        self.in_flight: jax.Array | None = None  # the loss of the step dispatched before this one
        self.last = time.perf_counter()

    def take(self, state: Any, step: int, end: int) -> tuple[Any, bool]:
        """Run step ``step`` of a run ending at ``end``: the new state, and whether the step was a logged one (every
        rank's report boundary)."""
        cfg, run, record = self.cfg, self.run, self.record
        state, loss = run.task.step_fn(state, step)
        logged = step % cfg.log_every == 0 or step == end - 1
        if logged:
            value = float(loss)
            record.losses[step] = value
            metrics, text = logged_metrics(cfg, run.task, step, value, record.step_times)
            if text is not None and run.shows:
                print(text)
            if self.report is not None:
                t_report = time.perf_counter()
                self.report(metrics)
                record.report_s += time.perf_counter() - t_report
        elif record.first_step_s is None or self.in_flight is None:
            loss.block_until_ready()
        else:
            # One step in flight: wait for the step before this one, so that the host prepares the next batch (and
            # any save's background commit takes the host) while the device runs this step.
            self.in_flight.block_until_ready()
        # Steps known to be done: this one where it was waited for, else only up to the one before it.
        done = step + 1 if logged or self.in_flight is None or record.first_step_s is None else step
        self.in_flight = loss
        if record.first_step_s is None:
            record.first_step_s = run.startup["first_step"] = process_age_s()
            print(f"First step ({step + 1}) done {record.first_step_s:.1f} s after the process started")
            points = ", ".join(f"{k} {v:.1f}" for k, v in run.startup.items())
            print(f"Startup, seconds after the process started: {points}")
        saving = run.ckpt.maybe_save(step + 1, state)
        now = time.perf_counter()
        record.step_times.append(now - self.last)
        if saving:
            record.save_steps.append(len(record.step_times) - 1)
        # the step's time, its save included; a save copies this step's state, so the step is done
        run.progress.record(step + 1 if saving else done, now - self.last, saved=saving)
        self.last = now
        if run.progress.writer and logged:
            print(run.progress.line())
        return state, logged
