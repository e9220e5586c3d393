"""planb training job, a run's setup and resume: the devices, the model's Task, the checkpointer and the progress
record, and the state to train from (restored from the newest checkpoint, or built), up to the first step.

Restarts. With a checkpoint the run restores into the model's abstract state and never builds an initial one; it
prints the restore's seconds and, for every run, the seconds from the process's start to its first step (imports,
restore, compilation or a hit in PLANB_COMPILATION_CACHE_DIR), each point of the way kept in ``Start.startup``.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import importlib
import os
import threading
import time
from typing import Any

import jax

from planb_train.checkpoints import Checkpointer
from planb_train.config import TrainConfig
from planb_train.models.linear import linear_task
from planb_train.models.task import Task
from planb_train.models.transformer import transformer_task
from planb_train.progress import Progress


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
class Start:
    """What a run trains from: its model, checkpoints and progress record, its state and first step, and what it
    took to get there (``startup``: seconds after the process started at each point of the way to step 1)."""

    task: Task
    ckpt: Checkpointer
    progress: Progress
    state: Any
    start: int
    startup: dict[str, float]
    restore_s: float | None
    compile_s: float
    compile_parts: dict[str, float]
    #: Whether this process prints the steps (each independent replica its own); ``lead``: also records progress and
    #: metrics.
    shows: bool
    lead: bool


def build_task(cfg: TrainConfig) -> Task:
    """The Task of PLANB_MODEL's family."""
    return linear_task(cfg) if cfg.model == "linear" else transformer_task(cfg)


def start_run(cfg: TrainConfig, rank: int = 0) -> Start:
    """Set the run up and resume it from the newest checkpoint, if any (``rank``: the Ray Train worker's)."""
    configure_compilation_cache(cfg)
    startup = {"loop": process_age_s()}  # seconds after the process started, at each point of the way to step 1
    imports = import_in_background(cfg)
    print(f"Local Devices: {jax.local_devices()}")
    startup["devices"] = process_age_s()
    imports.join()
    task = build_task(cfg)
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
    return Start(task, ckpt, progress, state, start, startup, restore_s, compile_s, compile_parts, shows, lead)
