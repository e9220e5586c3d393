"""planb training job, the loop both runners share: restore, steps, logging, checkpoints, metrics.

Throughput. Tokens/s = global batch x seq_len / mean steady-state step time (steps after the first
two, which include compilation). Model FLOPs per step, as MaxText counts them (causal attention
counted at half the full score matrix; planb_train_models.model_flops_per_step) = tokens x (6 x N + 6 x L x
D x T), N = parameters used in matrix multiplies (all parameters except the token and position embedding
tables; the output projection counts), L layers, D width, T sequence length; recomputation under
PLANB_REMAT is not model FLOPs. MFU = model FLOPs/s / (peak per chip x jax.device_count()), printed when
PLANB_PEAK_TFLOPS gives the peak (the accelerator catalog, src/planb/catalog, holds it per TPU
generation and GPU machine with the vendor's page; this script keeps no table of its own).

Restarts. With a checkpoint the loop restores into the model's abstract state and never builds an initial one;
it prints the restore's seconds and, for every run, the seconds from the process's start to its first step
(imports, restore, compilation or a hit in PLANB_COMPILATION_CACHE_DIR). The metrics file keeps both, each save's
blocking seconds (the device-to-host copy) and seconds to its commit, and what each cost (``save_policy``).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import importlib
import json
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from planb_train_checkpoints import Checkpointer
from planb_train_config import TrainConfig
from planb_train_models import attention_impl, linear_task, transformer_task
from planb_train_processes import announce_stop, leave, stop_agreed
from planb_train_progress import Progress

WARMUP_STEPS = 2  # steps excluded from throughput (compilation)


def process_age_s() -> float:
    """Seconds since this process started (Linux: /proc/self/stat's start time against /proc/uptime), so that the
    time to the first step counts Python's and JAX's imports too; elsewhere, since this module was imported."""
    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            start_ticks = int(fh.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime, in clock ticks
        with open("/proc/uptime", encoding="ascii") as fh:
            uptime = float(fh.read().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return time.perf_counter() - _IMPORTED


_IMPORTED = time.perf_counter()


def configure_compilation_cache(cfg: TrainConfig) -> None:
    """JAX's persistent compilation cache in PLANB_COMPILATION_CACHE_DIR: a restarted job loads its compiled step
    from there instead of compiling it again (https://docs.jax.dev/en/latest/persistent_compilation_cache.html).
    Every compiled function is kept (the default keeps only those that took a second or more)."""
    if not cfg.compilation_cache_dir:
        return
    jax.config.update("jax_compilation_cache_dir", cfg.compilation_cache_dir)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)


class StopNotice:
    """A stop the job is told of first: SIGTERM, then a grace period. Kueue's eviction deletes the pods, a Spot VM's
    preemption notice and a DWS booking's end drain the node; each reaches the containers as SIGTERM followed by
    terminationGracePeriodSeconds (https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination).
    The loop then saves a checkpoint at the next step boundary, waits for Orbax to commit it and stops. A step in
    flight finishes first: at most that step is lost.

    Two ways in. Only the process's main thread can take signals: the plain runner's loop takes SIGTERM itself and
    ends the process by the same signal, so whoever watches it sees the stop it asked for. A loop in a worker thread
    (a Ray actor's) cannot, and on GKE its pod's SIGTERM goes to ``ray start``, not to it: it polls PLANB_NOTICE_FILE
    at every step boundary instead. The chart's preStop hook creates that file in each Ray pod before the kubelet
    sends SIGTERM and waits for ``<file>.saved`` (https://kubernetes.io/docs/concepts/containers/container-lifecycle-hooks/);
    the Ray driver creates it on its own SIGTERM. The loop then returns normally after the save. With several
    processes (jax.distributed) a notice may reach one of them only: it tells the others, and all of them stop at
    JAX's preemption sync point, the same step, with no host round-trip on the steps before (planb_train_processes).
    Independent replicas under Ray Train (one JAX process each) agree at the report boundaries only, where Ray already
    holds every rank together: rank 0's view, broadcast (``ray.train.collective.broadcast_from_rank_zero``), decides for
    all. Each rank looking on its own stopped them at different steps, and the rank still training then waited in
    ``ray.train.report`` for one that had returned, until the grace period ran out. A notice file
    older than this process is a previous container's and is removed. PLANB_SAVE_ON_NOTICE=0 (the benchmark's
    control) leaves SIGTERM's default and ignores the file."""

    def __init__(self, notice_file: str = "") -> None:
        self.signum: int | None = None
        self.file = notice_file
        if self.file:
            for stale in (self.file, self.file + ".saved"):
                try:  # the entry's own time: a link is judged, and removed, as itself
                    if os.lstat(stale).st_mtime < time.time() - process_age_s():
                        os.remove(stale)
                except OSError:
                    pass

    def install(self) -> bool:
        if threading.current_thread() is not threading.main_thread():
            return False
        signal.signal(signal.SIGTERM, self._noticed)
        return True

    def _noticed(self, signum: int, _frame: object) -> None:
        self.signum = signum

    #: Under jax.distributed: whether this process has told the others of its notice (planb_train_processes).
    announced = False

    def noticed(self, step: int, logged: bool, agree: Callable[[bool], bool] | None = None) -> bool:
        """Whether to stop after ``step`` (the steps done; ``logged``: a logged step). One process: whether it has
        been told to stop. Under jax.distributed: whether every process stops here, having told the others of its own
        notice (planb_train_processes.stop_agreed). With ``agree`` (how independent replicas share rank 0's view), on
        logged steps only: what it returns for this process's view."""
        local = self.signum is not None or bool(self.file and os.path.exists(self.file))
        if jax.process_count() > 1:
            if local and not self.announced:
                print(f"Stop notice ({self.source()}) at step {step}: telling the other processes")
                announce_stop()
                self.announced = True
            return stop_agreed(step, logged, local)
        if agree is not None:
            return logged and bool(agree(local))
        return local

    def source(self) -> str:
        """What told this process to stop: its signal, its notice file, or another process."""
        if self.signum is not None:
            return signal.Signals(self.signum).name
        if self.file and os.path.exists(self.file):
            return f"file {self.file}"
        return "another process"

    def acknowledge(self, saved_step: int | None) -> None:
        """Tell the preStop hook waiting on ``<file>.saved`` that the save is committed (or that nothing was saved):
        written new (0600) beside it, then renamed onto it, so a link found there is replaced, never written through."""
        if self.file:
            fd, written = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(self.file)))
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(f"{saved_step if saved_step is not None else ''}\n")
            os.replace(written, self.file + ".saved")

    def stop(self) -> None:
        """End the process by the signal it was told of, after its output is out."""
        assert self.signum is not None
        end_by_signal(self.signum)


def end_by_signal(signum: int) -> None:
    """End this process by ``signum`` (its default action), after its output is out and, under jax.distributed, once
    every process has left (planb_train_processes.leave): whoever watches the process sees the stop it asked for."""
    leave()
    sys.stdout.flush()
    sys.stderr.flush()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def import_in_background(cfg: TrainConfig) -> threading.Thread:
    """Import the model's and the checkpoints' libraries in a thread while the main thread opens the devices (seconds
    on a TPU): a restarted job reaches its first step sooner. A failed import is left to the main thread's own."""
    names = (["flax.linen", "optax"] if cfg.model == "transformer" else []) + (
        ["orbax.checkpoint"] if cfg.checkpoint_dir else []
    )

    def run() -> None:
        for name in names:
            try:
                importlib.import_module(name)
            except Exception:  # the main thread's import raises it where the library is used
                continue

    thread = threading.Thread(target=run, name="planb-imports", daemon=True)
    thread.start()
    return thread


def first_state(task: Any, ckpt: Checkpointer, latest: int | None) -> tuple[Any, float | None, float, dict[str, float]]:
    """The state to train from, with the restore's seconds (None without a checkpoint), the step's compilation
    seconds and their parts (Task.precompile's: tracing and lowering, then compiling or loading). A thread restores
    checkpoint ``latest`` into the abstract state (no initial state is ever built beside it) or, without one, builds
    the initial state, while this thread compiles the step (Task.precompile): the restore reads files and copies
    them to the devices, the compilation traces and compiles, so they overlap."""

    def produce() -> tuple[Any, float]:
        started = time.perf_counter()
        state = task.init() if latest is None else ckpt.restore(latest, task.abstract)
        jax.block_until_ready(state)
        return state, time.perf_counter() - started

    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="planb-restore") as pool:
        made = pool.submit(produce)
        started = time.perf_counter()
        parts = task.precompile()
        compile_s = time.perf_counter() - started
        state, produce_s = made.result()
    return state, (produce_s if latest is not None else None), compile_s, parts


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
    configure_compilation_cache(cfg)
    startup = {"loop": process_age_s()}  # seconds after the process started, at each point of the way to step 1
    imports = import_in_background(cfg)
    print(f"Local Devices: {jax.local_devices()}")
    startup["devices"] = process_age_s()
    imports.join()
    task = linear_task(cfg) if cfg.model == "linear" else transformer_task(cfg)
    print(f"Model: {task.describe}")
    startup["model"] = process_age_s()
    # With jax.distributed every process takes part in saving; independent replicas: worker 0 only.
    ckpt = Checkpointer(cfg, writer=jax.process_count() > 1 or rank == 0, state_bytes=task.state_bytes)
    # One process prints the steps (each independent replica its own); the lead alone records progress and metrics.
    shows = jax.process_index() == 0
    lead = shows and rank == 0
    progress = Progress(cfg, writer=lead, interval=ckpt.interval)  # which keeps the job's last save's cost
    start = 0
    latest = ckpt.latest_step()
    if latest is None and ckpt.enabled:
        print(f"No checkpoint in {cfg.checkpoint_dir}; starting at step 0")
    startup["checkpointer"] = process_age_s()
    state, restore_s, compile_s, compile_parts = first_state(task, ckpt, latest)
    startup["state"] = process_age_s()
    if latest is not None:
        start = latest
        print(
            f"Resumed from checkpoint step {latest} in {cfg.checkpoint_dir} ({restore_s:.1f} s, "
            f"beside the step's compilation: {compile_s:.1f} s)"
        )
        if progress.writer:
            print("\n".join(progress.resume(latest)))

    peak = cfg.peak_tflops if cfg.model == "transformer" else None
    n_dev = jax.device_count()
    end = cfg.epochs if not cfg.stop_after else min(cfg.epochs, start + cfg.stop_after)
    losses: dict[int, float] = {}
    step_times: list[float] = []
    report_s = 0.0  # time spent in ray.train.report
    first_step_s = None
    notice = StopNotice(cfg.notice_file if cfg.save_on_notice else "")
    if cfg.save_on_notice:  # PLANB_SAVE_ON_NOTICE=0: SIGTERM keeps its default, the process ends at once
        notice.install()
    stopped, notice_save_s = False, None
    save_steps: list[int] = []  # indices in step_times of the steps that saved (their time includes the save)
    print("Starting training...")
    last = time.perf_counter()
    in_flight: jax.Array | None = None  # the loss of the step dispatched before this one
    for step in range(start, end):
        state, loss = task.step_fn(state, step)
        logged = step % cfg.log_every == 0 or step == end - 1  # a logged step: every rank's report boundary
        if logged:
            value = float(loss)
            losses[step] = value
            metrics: dict[str, Any] = {"loss": value, "epoch": step}
            if cfg.model == "linear":
                if step % cfg.log_every == 0 and shows:  # the tutorial's lines only
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
                if shows:
                    print(text)
            if report is not None:
                t_report = time.perf_counter()
                report(metrics)
                report_s += time.perf_counter() - t_report
        elif first_step_s is None or in_flight is None:
            loss.block_until_ready()
        else:
            # One step in flight: wait for the step before this one, so that the host prepares the next batch (and
            # any save's background commit takes the host) while the device runs this step.
            in_flight.block_until_ready()
        # Steps known to be done: this one where it was waited for, else only up to the one before it.
        done = step + 1 if logged or in_flight is None or first_step_s is None else step
        in_flight = loss
        if first_step_s is None:
            first_step_s = startup["first_step"] = process_age_s()
            print(f"First step ({step + 1}) done {first_step_s:.1f} s after the process started")
            points = ", ".join(f"{k} {v:.1f}" for k, v in startup.items())
            print(f"Startup, seconds after the process started: {points}")
        saving = ckpt.maybe_save(step + 1, state)
        now = time.perf_counter()
        step_times.append(now - last)
        if saving:
            save_steps.append(len(step_times) - 1)
        # the step's time, its save included; a save copies this step's state, so the step is done
        progress.record(step + 1 if saving else done, now - last, saved=saving)
        last = now
        if progress.writer and logged:
            print(progress.line())
        if cfg.save_on_notice and notice.noticed(step + 1, logged, agree):
            t_notice = time.perf_counter()
            saved = ckpt.maybe_save(step + 1, state, force=True) or ckpt.latest_step() == step + 1
            ckpt.close()
            notice_save_s = time.perf_counter() - t_notice
            progress.record(step + 1, saved=saved, force=True)
            notice.acknowledge(step + 1 if saved else None)
            if saved:
                where = f"checkpoint step {step + 1} saved"
            elif ckpt.enabled and not ckpt.writer:
                where = "worker 0 saves the checkpoints"
            else:
                where = "no checkpoint directory, nothing saved"
            if progress.writer:
                print(progress.line())
            how = notice.source()
            print(f"Stop notice ({how}) after step {step + 1}: {where}; stopping")
            print(f"The save on notice took {notice_save_s:.1f} s from the step boundary to its commit")
            end, stopped = step + 1, True
            break
    if not stopped:
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
        "report_s": report_s,
        "state_bytes": task.state_bytes,
        "restore_s": restore_s,
        "first_step_s": first_step_s,
        "startup_s": startup,
        "compile_s": compile_s,
        "compile_parts_s": compile_parts,
        "notice_save_s": notice_save_s,
        "saves": len(ckpt.blocking_s),
        "save_step_s": [step_times[i] for i in save_steps if i >= WARMUP_STEPS],
        "train_s": float(np.sum(step_times)),
        "save_blocking_s": ckpt.blocking_s,
        "save_committed_s": ckpt.committed_s,
        "save_policy": ckpt.interval.record(),  # planb_train_interval: each periodic save's cost and the next's step
    }
    if cfg.model == "transformer" and steady:
        tps = task.tokens_per_step / mean_step
        summary.update(tokens_per_step=task.tokens_per_step, tokens_per_s=tps)
        summary["model_tflops_per_step"] = task.flops_per_step / 1e12
        summary["peak_tflops_per_chip"] = peak
        summary.update(attention=attention_impl(cfg), remat=cfg.remat)
        if peak:
            summary["mfu"] = tps / task.tokens_per_step * task.flops_per_step / (peak * 1e12 * n_dev)
    if cfg.metrics_file and lead:
        summary["written_at_s"] = process_age_s()  # the process's end follows: its teardown is the rest of its wall
        with open(cfg.metrics_file, "w", encoding="utf-8") as fh:
            json.dump(summary, fh)
    if stopped and notice.signum is not None:
        notice.stop()  # the plain runner's main thread: end by the signal, as before
    return RunResult(state, start, end, losses, step_times, summary, stopped)
