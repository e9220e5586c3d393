"""planb training job, metrics: each logged step's (loss, tokens/s, MFU) and the run's summary, the metrics file.

Throughput. Tokens/s = global batch x seq_len / mean steady-state step time (steps after the first
two, which include compilation). Model FLOPs per step, as MaxText counts them (causal attention
counted at half the full score matrix; planb_train.models.transformer.model_flops_per_step) = tokens x (6 x N + 6 x
L x D x T), N = parameters used in matrix multiplies (all parameters except the token and position embedding
tables; the output projection counts), L layers, D width, T sequence length; recomputation under
PLANB_REMAT is not model FLOPs. MFU = model FLOPs/s / (peak per chip x jax.device_count()), printed when
PLANB_PEAK_TFLOPS gives the peak (the accelerator catalog, src/planb/catalog, holds it per TPU
generation and GPU machine with the vendor's page; this script keeps no table of its own).

The metrics file keeps the restore's seconds and those from the process's start to its first step
(planb_train.startup), each save's blocking seconds (the device-to-host copy) and seconds to its commit, and what
each cost (``save_policy``).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import jax
import numpy as np

from planb_train.config import TrainConfig
from planb_train.models.attention import attention_impl
from planb_train.models.task import Task
from planb_train.startup import Start, process_age_s

WARMUP_STEPS = 2  # steps excluded from throughput (compilation)


@dataclasses.dataclass
class StepRecord:
    """What the steps of a run leave for its metrics."""

    losses: dict[int, float] = dataclasses.field(default_factory=dict)
    step_times: list[float] = dataclasses.field(default_factory=list)
    #: Indices in step_times of the steps that saved (their time includes the save).
    save_steps: list[int] = dataclasses.field(default_factory=list)
    report_s: float = 0.0  # time spent in ray.train.report
    first_step_s: float | None = None


def logged_metrics(
    cfg: TrainConfig, task: Task, step: int, value: float, step_times: list[float]
) -> tuple[dict[str, Any], str | None]:
    """A logged step's metrics (what ``report`` gets) and its line (None: the step prints none)."""
    metrics: dict[str, Any] = {"loss": value, "epoch": step}
    if cfg.model == "linear":
        # the tutorial's lines only
        return metrics, (f"Epoch {step}: Loss {value:.4f}" if step % cfg.log_every == 0 else None)
    text = f"Step {step}: loss {value:.4f}"
    if len(step_times) > WARMUP_STEPS:
        tps = task.tokens_per_step / float(np.mean(step_times[WARMUP_STEPS:]))
        metrics["tokens_per_s"] = tps
        text += f", {tps:,.0f} tokens/s"
        peak = peak_tflops(cfg)
        if peak:
            mfu = tps / task.tokens_per_step * task.flops_per_step / (peak * 1e12 * jax.device_count())
            metrics["mfu"] = mfu
            text += f", MFU {100 * mfu:.1f}%"
    return metrics, text


def peak_tflops(cfg: TrainConfig) -> float | None:
    """The chip's peak for MFU: the transformer's only."""
    return cfg.peak_tflops if cfg.model == "transformer" else None


def summary(
    cfg: TrainConfig,
    run: Start,
    record: StepRecord,
    where: tuple[int, int, int, int],
    stopped: bool,
    notice_save_s: float | None,
) -> dict[str, Any]:
    """The run's metrics; ``where``: (rank, world size, first step, end step)."""
    rank, world_size, start, end = where
    task, ckpt, step_times = run.task, run.ckpt, record.step_times
    losses, peak, n_dev = record.losses, peak_tflops(cfg), jax.device_count()
    steady = step_times[WARMUP_STEPS:] if len(step_times) > WARMUP_STEPS else step_times
    mean_step = float(np.mean(steady)) if steady else float("nan")
    out: dict[str, Any] = {
        "model": cfg.model,
        "runner": cfg.runner,
        "rank": rank,
        "world_size": world_size,
        "devices": n_dev,
        "platform": jax.default_backend(),
        "start_step": start,
        "end_step": end,
        "stopped_on_notice": stopped,
        "first_loss": losses[min(losses)] if losses else None,
        "final_loss": losses[max(losses)] if losses else None,
        "steady_steps": len(steady),
        "mean_step_s": mean_step,
        "median_step_s": float(np.median(steady)) if steady else float("nan"),
        "p25_step_s": float(np.percentile(steady, 25)) if steady else float("nan"),
        "max_step_s": float(np.max(steady)) if steady else float("nan"),
        "report_s": record.report_s,
        "state_bytes": task.state_bytes,
        "restore_s": run.restore_s,
        "first_step_s": record.first_step_s,
        "startup_s": run.startup,
        "compile_s": run.compile_s,
        "compile_parts_s": run.compile_parts,
        "notice_save_s": notice_save_s,
        "saves": len(ckpt.blocking_s),
        "save_step_s": [step_times[i] for i in record.save_steps if i >= WARMUP_STEPS],
        "train_s": float(np.sum(step_times)),
        "save_blocking_s": ckpt.blocking_s,
        "save_committed_s": ckpt.committed_s,
        "save_policy": ckpt.interval.record(),  # planb_train.interval: each periodic save's cost and the next's step
    }
    if cfg.model == "transformer" and steady:
        tps = task.tokens_per_step / mean_step
        out.update(tokens_per_step=task.tokens_per_step, tokens_per_s=tps)
        out["model_tflops_per_step"] = task.flops_per_step / 1e12
        out["peak_tflops_per_chip"] = peak
        out.update(attention=attention_impl(cfg), remat=cfg.remat)
        if peak:
            out["mfu"] = tps / task.tokens_per_step * task.flops_per_step / (peak * 1e12 * n_dev)
    return out


def write_metrics(path: str, metrics: dict[str, Any]) -> None:
    """The metrics file (PLANB_METRICS_FILE), with the seconds after the process started when it was written."""
    metrics["written_at_s"] = process_age_s()  # the process's end follows: its teardown is the rest of its wall
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(metrics, fh)
