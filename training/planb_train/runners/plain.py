"""planb training job, the plain runner: JAX in this process over all local devices, alone or as one of several
processes under jax.distributed (planb_train.processes)."""

from __future__ import annotations

from planb_train.config import TrainConfig
from planb_train.loop import RunResult, train_loop
from planb_train.processes import Processes, join, leave


def run_plain(cfg: TrainConfig, processes: Processes | None = None) -> RunResult:
    """Train in this process, with ``processes`` one of several under jax.distributed (planb_train.processes), all of
    them leaving it together at the end. "Training Complete!" only when the run was not stopped on a notice: a notice
    file returns the result with ``stopped`` set, a signal ends the process by it (StopNotice)."""
    if processes is not None:
        join(processes)
    result = train_loop(cfg)
    leave()
    if not result.stopped:
        print("Training Complete!")
    return result
