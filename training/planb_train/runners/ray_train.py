"""planb training job, the Ray runner: Ray Train v2 ``JaxTrainer``, ``train_loop`` on every worker.

Ray ships ``train_func`` to its workers pickled, by reference: a worker imports ``planb_train.runners.ray_train``.
The chart mounts the package beside train.py at /app in every Ray pod and puts /app on ``PYTHONPATH``: Ray adds
the driver script's resolved directory to its workers' ``sys.path``, which on a ConfigMap volume is
``/app/..<timestamp>``, named differently in every pod (and added only where the driver's own ``sys.path`` has
it). Run from a checkout, that directory is training/ itself.

How a run that stops on a notice ends: planb_train.runners.outcome.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
import tempfile
import threading
import time
from typing import Any

from planb_train.config import TPU7X_ACCELERATOR_TYPE, TrainConfig
from planb_train.loop import train_loop
from planb_train.notice import end_by_signal
from planb_train.runners.outcome import StoppedOnNoticeError, UnsupportedByRayError

DEFAULT_RAY_POLL_S = "0.2"  # RAY_TRAIN_HEALTH_CHECK_INTERVAL_S unless set; see run_ray


def train_func(config: dict[str, Any]) -> None:
    """Ray Train worker entry point (``train_loop_per_worker``). Returns only after the last step; a worker that
    stopped on a notice raises ``StoppedOnNoticeError`` once every worker has passed its save (a barrier: Ray Train
    ends the whole worker group at the first error it sees, which would cut short a save still in progress)."""
    import jax
    import ray.train
    import ray.train.collective

    cfg = TrainConfig.from_dict(config)
    ctx = ray.train.get_context()
    rank, size = ctx.get_world_rank(), ctx.get_world_size()
    # Independent replicas (no jax.distributed) agree on a stop notice through Ray Train (StopNotice).
    agree = ray.train.collective.broadcast_from_rank_zero if size > 1 and jax.process_count() == 1 else None
    result = train_loop(cfg, rank, size, report=ray.train.report, agree=agree)
    if result.stopped:
        # Every rank stops at the same step (StopNotice's agreement), so every rank reaches this barrier.
        ray.train.collective.barrier()
        raise StoppedOnNoticeError(f"worker {rank} stopped on a notice after step {result.end_step} of {cfg.epochs}")


def stopped_workers(error: BaseException) -> dict[int, str]:
    """The workers of a failed ``trainer.fit()`` that raised ``StoppedOnNoticeError``: rank -> its message. Ray Train
    raises a ``WorkerGroupError`` whose ``worker_failures`` holds each failed rank's exception, wrapped with its
    traceback text (the wrapper keeps the worker's exception as ``_base_exc``)."""
    failures = getattr(error, "worker_failures", None) or {}
    found = {}
    for rank, failure in failures.items():
        cause = getattr(failure, "_base_exc", failure)
        if isinstance(cause, StoppedOnNoticeError):
            found[int(rank)] = str(cause)
    return found


def ray_detects_tpu7x() -> bool:
    """Whether the installed Ray recognises a TPU7x node (GKE reports its type as tpu7x-<chips>).

    False for Ray 2.53 (see TPU7X_ACCELERATOR_TYPE); a Ray whose private TPU module has moved is
    assumed to know TPU7x.
    """
    try:
        from ray._private.accelerators.tpu import TPUAcceleratorManager
    except ImportError:
        return True
    check = getattr(TPUAcceleratorManager, "is_valid_tpu_accelerator_type", None)
    return check is None or bool(check("tpu7x-8"))


def scaling_config_kwargs(cfg: TrainConfig) -> dict[str, Any]:
    """Arguments of ``ray.train.ScalingConfig`` for ``cfg`` (kept separate so tests can check it).

    Raises UnsupportedByRayError for a multi-host TPU7x job on a Ray that cannot see TPU7x nodes.
    """
    resources: dict[str, float] = {}
    kwargs: dict[str, Any] = {"num_workers": cfg.num_workers}
    if cfg.accelerator == "tpu" and cfg.accelerator_type == TPU7X_ACCELERATOR_TYPE and not ray_detects_tpu7x():
        if cfg.num_workers > 1:
            raise UnsupportedByRayError(
                f"{cfg.num_workers} workers on TPU7x need a Ray that detects TPU7x nodes "
                "(ray-project/ray#60338, after Ray 2.53): this Ray gives them no TPU-V7X type and no "
                "slice head, so JaxTrainer cannot reserve the slice. Use a Ray image with TPU7x "
                "support, or a single-host TPU7x profile (one worker)."
            )
        # One worker needs no slice reservation; without accelerator_type Ray places it by the
        # TPU resource alone (the accelerator_type:TPU-V7X resource would never appear).
        resources["TPU"] = cfg.chips_per_worker
        kwargs["use_tpu"] = True
    elif cfg.accelerator == "tpu":
        resources["TPU"] = cfg.chips_per_worker
        kwargs.update(use_tpu=True, topology=cfg.topology, accelerator_type=cfg.accelerator_type)
    elif cfg.accelerator == "gpu":
        resources["GPU"] = cfg.chips_per_worker
        kwargs["use_gpu"] = True
        if cfg.accelerator_type:
            kwargs["accelerator_type"] = cfg.accelerator_type
    if cfg.cpus_per_worker is not None:
        resources["CPU"] = cfg.cpus_per_worker
    kwargs["resources_per_worker"] = resources
    return kwargs


class DriverNotice:
    """The Ray driver's side of a stop notice (planb_train.notice.StopNotice): its workers' loops run in threads
    that cannot take a signal, so the driver's SIGTERM creates PLANB_NOTICE_FILE, which every worker on this
    machine polls at each step boundary (on GKE each Ray pod's preStop hook creates the file in its own pod). The
    workers save and return, and the driver then ends by the signal it was told of. Without PLANB_NOTICE_FILE the
    driver picks a private file for its workers, in a folder of its own that `discard` removes."""

    def __init__(self, cfg: TrainConfig) -> None:
        self.signum: int | None = None
        self.file = cfg.notice_file
        self._private: str | None = None
        if cfg.save_on_notice and not self.file:
            self._private = tempfile.mkdtemp(prefix="planb-notice-")
            self.file = os.path.join(self._private, "stop")
        self.enabled = cfg.save_on_notice and threading.current_thread() is threading.main_thread()

    def arm(self) -> None:
        """Take SIGTERM: after ray.init, which installs a handler of its own that ends the driver at once."""
        if self.enabled:
            signal.signal(signal.SIGTERM, self._noticed)

    def _noticed(self, signum: int, _frame: object) -> None:
        self.signum = signum
        with contextlib.suppress(FileNotFoundError), open(self.file, "a", encoding="utf-8"):
            pass  # (FileNotFoundError: the private folder is gone, the workers with it)

    def discard(self) -> None:
        """Remove the private folder, once the workers are gone (nothing reads the file after them)."""
        if self._private:
            shutil.rmtree(self._private, ignore_errors=True)
            self._private = None

    def stop(self) -> None:
        """End the process by the signal it was told of (once the workers have saved), or restore the default."""
        if not self.enabled:
            return
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if self.signum is not None:
            end_by_signal(self.signum)


def run_ray(cfg: TrainConfig) -> None:
    import ray
    from ray.train.v2.api.config import RunConfig, ScalingConfig
    from ray.train.v2.jax import JaxTrainer

    notice = DriverNotice(cfg)
    cfg = dataclasses.replace(cfg, notice_file=notice.file)

    # Each ray.train.report blocks until the controller has collected the previous one, and the
    # controller looks once per health-check interval (Ray's default 2 s): reporting every 10 fast
    # steps would stall training. Ray propagates this variable from the driver to the controller.
    os.environ.setdefault("RAY_TRAIN_HEALTH_CHECK_INTERVAL_S", DEFAULT_RAY_POLL_S)
    started_here = False
    if not ray.is_initialized():
        if os.environ.get("RAY_ADDRESS"):
            ray.init()  # in the cluster: the RayJob's Ray cluster
        else:
            need = cfg.num_workers * (cfg.cpus_per_worker or 1)
            num_cpus = max(need, 1) if cfg.accelerator == "cpu" else None
            # A private single-machine cluster on loopback only, without the dashboard.
            ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, _node_ip_address="127.0.0.1")
        started_here = True
    notice.arm()
    try:
        trainer = JaxTrainer(
            train_loop_per_worker=train_func,
            train_loop_config=cfg.to_dict(),
            scaling_config=ScalingConfig(**scaling_config_kwargs(cfg)),
            run_config=RunConfig(name=f"planb-{cfg.model}-{int(time.time())}"),
        )
        stopped = fit(trainer)
    finally:
        if started_here:
            ray.shutdown()
        notice.discard()
    end_run(notice, stopped)


def fit(trainer: Any) -> dict[int, str]:
    """Run ``trainer.fit()``: the workers that stopped on a notice (``stopped_workers``), empty when the run reached
    its last step. Any other failure is raised as Ray Train raised it."""
    from ray.train import TrainingFailedError

    try:
        result = trainer.fit()
    except TrainingFailedError as exc:
        stopped = stopped_workers(exc)
        if not stopped:
            raise
        return stopped
    print(f"Run Result: {result.metrics}")
    return {}


def end_run(notice: DriverNotice, stopped: dict[int, str]) -> None:
    """The driver's end: by the signal it was told of (once the workers have saved), else ``StoppedOnNoticeError``
    when a worker stopped on a notice, else "Training Complete!"."""
    for rank in sorted(stopped):
        print(f"Stop notice: {stopped[rank]}")
    if notice.signum is not None:
        print(f"Stop notice ({signal.Signals(notice.signum).name}) reached the driver: the workers saved; stopping")
    notice.stop()
    if stopped:
        raise StoppedOnNoticeError(
            f"{len(stopped)} worker(s) stopped on a notice before the last step: the run saved and is not finished"
        )
    print("Training Complete!")
