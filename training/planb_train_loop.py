"""planb training job, the loop both runners share: restore, steps, logging, checkpoints, metrics.

Throughput. Tokens/s = global batch x seq_len / mean steady-state step time (steps after the first
two, which include compilation). Model FLOPs per step (PaLM, appendix B; causal masking not
discounted) = tokens x (6 x N + 12 x L x D x T), N = parameters used in matrix multiplies (all
parameters except the token and position embedding tables; the output projection counts), L layers,
D width, T sequence length. MFU = model FLOPs/s / (peak per chip x jax.device_count()), printed when
PLANB_PEAK_TFLOPS gives the peak (the accelerator catalog, src/planb/catalog, holds it per TPU
generation and GPU machine with the vendor's page; this script keeps no table of its own).
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from planb_train_checkpoints import Checkpointer
from planb_train_config import TrainConfig
from planb_train_models import linear_task, transformer_task
from planb_train_progress import Progress

WARMUP_STEPS = 2  # steps excluded from throughput (compilation)


class StopNotice:
    """A stop the job is told of first: SIGTERM, then a grace period. Kueue's eviction deletes the pods, a Spot VM's
    preemption notice and a DWS booking's end drain the node; each reaches the containers as SIGTERM followed by
    terminationGracePeriodSeconds (https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination).
    The loop then saves a checkpoint at the next step boundary, waits for Orbax to commit it and ends the process by
    the same signal, so whoever watches it sees the stop it asked for. A step in flight finishes first: at most that
    step is lost. Only the process's main thread can take signals, so a loop in a worker thread (a Ray actor) keeps
    the default behaviour, as does PLANB_SAVE_ON_NOTICE=0 (the benchmark's control: nothing saved on SIGTERM)."""

    def __init__(self) -> None:
        self.signum: int | None = None

    def install(self) -> bool:
        if threading.current_thread() is not threading.main_thread():
            return False
        signal.signal(signal.SIGTERM, self._noticed)
        return True

    def _noticed(self, signum: int, _frame: object) -> None:
        self.signum = signum

    def stop(self) -> None:
        """End the process by the signal it was told of, after its output is out."""
        sys.stdout.flush()
        sys.stderr.flush()
        assert self.signum is not None
        signal.signal(self.signum, signal.SIG_DFL)
        os.kill(os.getpid(), self.signum)


@dataclasses.dataclass
class RunResult:
    state: Any
    start_step: int
    end_step: int
    losses: dict[int, float]
    step_times: list[float]
    metrics: dict[str, Any]


def train_loop(
    cfg: TrainConfig,
    rank: int = 0,
    world_size: int = 1,
    report: Callable[[dict[str, Any]], None] | None = None,
) -> RunResult:
    """Train ``cfg.model`` from the newest checkpoint (if any) up to ``cfg.epochs`` steps."""
    print(f"Local Devices: {jax.local_devices()}")
    task = linear_task(cfg) if cfg.model == "linear" else transformer_task(cfg)
    print(f"Model: {task.describe}")
    # With jax.distributed every process takes part in saving; independent replicas: worker 0 only.
    ckpt = Checkpointer(cfg, writer=jax.process_count() > 1 or rank == 0)
    progress = Progress(cfg, writer=rank == 0)
    state, start = task.state, 0
    latest = ckpt.latest_step()
    if latest is not None:
        state = ckpt.restore(latest, state)
        start = latest
        print(f"Resumed from checkpoint step {latest} in {cfg.checkpoint_dir}")
        if progress.writer:
            print("\n".join(progress.resume(latest)))
    elif ckpt.enabled:
        print(f"No checkpoint in {cfg.checkpoint_dir}; starting at step 0")

    peak = cfg.peak_tflops if cfg.model == "transformer" else None
    n_dev = jax.device_count()
    end = cfg.epochs if not cfg.stop_after else min(cfg.epochs, start + cfg.stop_after)
    losses: dict[int, float] = {}
    step_times: list[float] = []
    report_s = 0.0  # time spent in ray.train.report
    notice = StopNotice()
    if cfg.save_on_notice:  # PLANB_SAVE_ON_NOTICE=0: SIGTERM keeps its default, the process ends at once
        notice.install()
    print("Starting training...")
    last = time.perf_counter()
    for step in range(start, end):
        state, loss = task.step_fn(state, step)
        if step % cfg.log_every == 0 or step == end - 1:
            value = float(loss)
            losses[step] = value
            metrics: dict[str, Any] = {"loss": value, "epoch": step}
            if cfg.model == "linear":
                if step % cfg.log_every == 0:  # the seed's lines only
                    print(f"Epoch {step}: Loss {value:.4f}")
            else:
                text = f"Step {step}: loss {value:.4f}"
                if len(step_times) > WARMUP_STEPS:
                    tps = task.tokens_per_step / float(np.mean(step_times[WARMUP_STEPS:]))
                    metrics["tokens_per_s"] = tps
                    text += f", {tps:,.0f} tokens/s"
                    if peak:
                        mfu = tps / task.tokens_per_step * task.flops_per_step / (peak * 1e12 * n_dev)
                        metrics["mfu"] = mfu
                        text += f", MFU {100 * mfu:.1f}%"
                print(text)
            if report is not None:
                t_report = time.perf_counter()
                report(metrics)
                report_s += time.perf_counter() - t_report
        else:
            loss.block_until_ready()
        saving = ckpt.maybe_save(step + 1, state)
        now = time.perf_counter()
        step_times.append(now - last)
        progress.record(step + 1, now - last, saved=saving)  # the step's time, its save included
        last = now
        if progress.writer and (step % cfg.log_every == 0 or step == end - 1):
            print(progress.line())
        if notice.signum is not None:
            saved = ckpt.maybe_save(step + 1, state, force=True) or ckpt.latest_step() == step + 1
            ckpt.close()
            progress.record(step + 1, saved=saved, force=True)
            where = f"checkpoint step {step + 1} saved" if saved else "no checkpoint directory, nothing saved"
            if progress.writer:
                print(progress.line())
            print(f"Stop notice ({signal.Signals(notice.signum).name}) after step {step + 1}: {where}; stopping")
            notice.stop()
    saving = ckpt.maybe_save(end, state, force=True)
    ckpt.close()
    progress.record(end, saved=saving, force=True)

    steady = step_times[WARMUP_STEPS:] if len(step_times) > WARMUP_STEPS else step_times
    mean_step = float(np.mean(steady)) if steady else float("nan")
    summary: dict[str, Any] = {
        "model": cfg.model,
        "runner": cfg.runner,
        "rank": rank,
        "world_size": world_size,
        "devices": n_dev,
        "start_step": start,
        "end_step": end,
        "first_loss": losses[min(losses)] if losses else None,
        "final_loss": losses[max(losses)] if losses else None,
        "steady_steps": len(steady),
        "mean_step_s": mean_step,
        "median_step_s": float(np.median(steady)) if steady else float("nan"),
        "p25_step_s": float(np.percentile(steady, 25)) if steady else float("nan"),
        "max_step_s": float(np.max(steady)) if steady else float("nan"),
        "report_s": report_s,
    }
    if cfg.model == "transformer" and steady:
        tps = task.tokens_per_step / mean_step
        summary.update(tokens_per_step=task.tokens_per_step, tokens_per_s=tps)
        summary["model_tflops_per_step"] = task.flops_per_step / 1e12
        summary["peak_tflops_per_chip"] = peak
        if peak:
            summary["mfu"] = tps / task.tokens_per_step * task.flops_per_step / (peak * 1e12 * n_dev)
    if cfg.metrics_file and rank == 0:
        with open(cfg.metrics_file, "w", encoding="utf-8") as fh:
            json.dump(summary, fh)
    return RunResult(state, start, end, losses, step_times, summary)
