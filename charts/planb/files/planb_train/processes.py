"""planb training job, processes: one run over several JAX processes (``jax.distributed``), and how they stop together.

Joining. Under Ray with TPUs or GPUs, ``JaxTrainer`` starts ``jax.distributed`` on every worker. The plain runner
starts it itself when PLANB_COORDINATOR_ADDRESS, PLANB_NUM_PROCESSES and PLANB_PROCESS_ID are set (each in turn
JAX's JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES or JAX_PROCESS_ID where unset; all three or none), before any
device is touched: ``jax.devices()`` then holds every process's devices, the mesh spans them, and each process
feeds its share of the batch and writes its own shards of every checkpoint. CPU devices talk over gloo
(``jax_cpu_collectives_implementation``). Process 0 serves the coordinator on every interface, or where
JAX_COORDINATOR_BIND_ADDRESS (JAX's own variable) says. Every process leaves together at the end (``leave``:
``jax.distributed.shutdown``, a barrier), so that none is cut off by process 0's exit while it finishes.

Stopping together. A stop notice may reach one process only: when a Spot VM of a multi-host slice is reclaimed,
only its pods get SIGTERM and run their preStop hook (which creates PLANB_NOTICE_FILE). Every process must still
save the same step, or the checkpoint is torn. They agree by JAX's preemption sync point
(``multihost_utils.reached_preemption_sync_point``, as MaxText and Orbax use it), asked at every step boundary.
Until a notice, that is a local check under a lock: no message, no host round-trip. A process that sees a notice
announces it to the coordination service; every process then runs the sync protocol in a background thread (each
reports the last step it passed, a barrier, then the largest plus one is the sync step) and stops there after
saving. So a notice is acted on one or two steps after it arrives, and no step is lost. Agreeing by
``process_allgather`` at every step would cost a host round-trip per step (the device waits for the host at each);
agreeing every N steps would leave up to N steps between the notice and the save, out of a Spot VM's 15 s.

JAX's own trigger is SIGTERM taken by XLA's handler, but the loop takes SIGTERM itself (to save, then end by the
signal) and a notice file is no signal: a process announces its notice by writing the key XLA's preemption notifier
writes, ``RECEIVED_PREEMPTION_NOTICE`` with the time in RFC 3339 (``PREEMPTION_NOTICE_KEY``; XLA's
``preemption_sync_manager.cc``), to the coordination service. Without JAX's preemption service
(``jax_enable_preemption_service`` off) the processes agree on the logged steps only, by ``process_allgather``.
"""

from __future__ import annotations

import dataclasses
import datetime
import re
from collections.abc import Mapping

from planb_train.variables import ConfigError

#: The plain runner's variables for jax.distributed, each with JAX's variable of the same meaning (its fallback).
VARIABLES = (
    ("PLANB_COORDINATOR_ADDRESS", "JAX_COORDINATOR_ADDRESS"),
    ("PLANB_NUM_PROCESSES", "JAX_NUM_PROCESSES"),
    ("PLANB_PROCESS_ID", "JAX_PROCESS_ID"),
)
#: The coordination service's key whose appearance starts JAX's preemption sync protocol in every process
#: (kPreemptionNoticeKey in XLA's xla/tsl/distributed_runtime/preemption/preemption_sync_manager.cc).
PREEMPTION_NOTICE_KEY = "RECEIVED_PREEMPTION_NOTICE"


@dataclasses.dataclass(frozen=True)
class Processes:
    """The plain runner's jax.distributed settings: process 0's ``HOST:PORT``, how many processes, this one's index."""

    coordinator: str
    count: int
    index: int


def _setting(env: Mapping[str, str], names: tuple[str, str]) -> tuple[str, str]:
    """The first of ``names`` set in ``env``: (its name, its value); the PLANB_ name and "" when neither is."""
    for name in names:
        value = env.get(name, "").strip()
        if value:
            return name, value
    return names[0], ""


def _count(name: str, raw: str, minimum: int) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(name, f"must be an integer, got {raw!r}") from None
    if value < minimum:
        raise ConfigError(name, f"must be an integer >= {minimum}, got {value}")
    return value


def load_processes(env: Mapping[str, str]) -> Processes | None:
    """The plain runner's jax.distributed settings from ``env`` (VARIABLES), or None when none is set. Raises
    ConfigError for a bad value, or for some of the three set without the others."""
    (addr_name, address), (count_name, count), (index_name, index) = (_setting(env, names) for names in VARIABLES)
    given = [name for name, value in ((addr_name, address), (count_name, count), (index_name, index)) if value]
    if not given:
        return None
    if len(given) < 3:
        missing = [names[0] for names, value in zip(VARIABLES, (address, count, index), strict=True) if not value]
        raise ConfigError(missing[0], f"{', '.join(given)} set without {', '.join(missing)}: set all three or none")
    if not re.fullmatch(r"\S+:[0-9]{1,5}", address):
        raise ConfigError(addr_name, f"must be HOST:PORT (process 0's address), got {address!r}")
    processes = Processes(address, _count(count_name, count, 1), _count(index_name, index, 0))
    if processes.index >= processes.count:
        raise ConfigError(index_name, f"must be below {count_name}={processes.count}, got {processes.index}")
    return processes


def join(processes: Processes) -> None:
    """Start jax.distributed as ``processes`` says; before any device is touched. CPU collectives over gloo."""
    import jax

    jax.config.update("jax_cpu_collectives_implementation", "gloo")  # type: ignore[no-untyped-call]
    jax.distributed.initialize(
        processes.coordinator, processes.count, processes.index, cluster_detection_method="deactivate"
    )


def leave() -> None:
    """Leave jax.distributed, waiting for every other process to leave too (a no-op without it)."""
    import jax

    if jax.distributed.is_initialized():
        jax.distributed.shutdown()  # type: ignore[no-untyped-call]


def announce_stop() -> None:
    """Tell every process, through the coordination service, that this one was told to stop: JAX's preemption sync
    protocol starts in each. Another process's announcement, already there, is as good."""
    import jax
    from jax._src import distributed

    client = distributed.global_state.client
    if client is None or distributed.global_state.preemption_sync_manager is None:
        return
    now = datetime.datetime.now(datetime.UTC).isoformat()
    try:
        client.key_value_set(PREEMPTION_NOTICE_KEY, now)
    except jax.errors.JaxRuntimeError as exc:
        if not str(exc).startswith("ALREADY_EXISTS"):
            raise


def stop_agreed(step: int, logged: bool, local: bool) -> bool:
    """Whether every process stops after ``step`` (the steps done): JAX's preemption sync point, asked at every step;
    without the preemption service, any process's ``local`` notice, gathered on logged steps only."""
    from jax._src import distributed
    from jax.experimental import multihost_utils

    if distributed.global_state.preemption_sync_manager is not None:
        return bool(multihost_utils.reached_preemption_sync_point(step))
    if not logged:
        return False
    import numpy as np

    return bool(np.max(multihost_utils.process_allgather(np.array([int(local)], np.int32))))
