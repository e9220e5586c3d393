"""planb training job, the loop both runners share: set up and resume (planb_train.startup), take the steps
(planb_train.steps), save on a stop notice (planb_train.notice), and keep the metrics (planb_train.metrics)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from planb_train.config import TrainConfig
from planb_train.metrics import summary, write_metrics
from planb_train.notice import StopNotice, save_on_notice
from planb_train.startup import start_run
from planb_train.steps import Steps


@dataclasses.dataclass
class RunResult:
    state: Any
    start_step: int
    end_step: int
    losses: dict[int, float]
    step_times: list[float]
    metrics: dict[str, Any]
    stopped: bool = False  # stopped on a notice (after saving), before PLANB_EPOCHS


def train_loop(
    cfg: TrainConfig,
    rank: int = 0,
    world_size: int = 1,
    report: Callable[[dict[str, Any]], None] | None = None,
    agree: Callable[[bool], bool] | None = None,
) -> RunResult:
    """Train ``cfg.model`` from the newest checkpoint (if any) up to ``cfg.epochs`` steps. ``report`` is Ray Train's
    (a barrier of all ranks at every logged step); ``agree``, given to independent replicas, shares rank 0's view of
    a stop notice, and the notice is then looked at on the logged steps only (StopNotice)."""
    run = start_run(cfg, rank)
    state, start = run.state, run.start
    run.state = None  # the steps' state only: none kept beside it (a donated step frees the one it was given)
    end = cfg.epochs if not cfg.stop_after else min(cfg.epochs, start + cfg.stop_after)
    notice = StopNotice(cfg.notice_file if cfg.save_on_notice else "")
    if cfg.save_on_notice:  # PLANB_SAVE_ON_NOTICE=0: SIGTERM keeps its default, the process ends at once
        notice.install()
    stopped, notice_save_s = False, None
    print("Starting training...")
    steps = Steps(cfg, run, report)
    for step in range(start, end):
        state, logged = steps.take(state, step, end)
        if cfg.save_on_notice and notice.noticed(step + 1, logged, agree):
            notice_save_s = save_on_notice(notice, run.ckpt, run.progress, step + 1, state)
            end, stopped = step + 1, True
            break
    if not stopped:
        saving = run.ckpt.maybe_save(end, state, force=True)
        run.ckpt.close()
        run.progress.record(end, saved=saving, force=True)

    metrics = summary(cfg, run, steps.record, (rank, world_size, start, end), stopped, notice_save_s)
    if cfg.metrics_file and run.lead:
        write_metrics(cfg.metrics_file, metrics)
    if stopped and notice.signum is not None:
        notice.stop()  # the plain runner's main thread: end by the signal, as before
    return RunResult(state, start, end, steps.record.losses, steps.record.step_times, metrics, stopped)
