"""planb training job, the save on a stop notice: how a notice reaches the loop (``StopNotice``), the save it
makes at the next step boundary (``save_on_notice``), and how the process ends after it (``end_by_signal``)."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

import jax

from planb_train.checkpoints import Checkpointer
from planb_train.processes import announce_stop, leave, stop_agreed
from planb_train.progress import Progress
from planb_train.startup import process_age_s


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
    JAX's preemption sync point, the same step, with no host round-trip on the steps before (planb_train.processes).
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

    #: Under jax.distributed: whether this process has told the others of its notice (planb_train.processes).
    announced = False

    def noticed(self, step: int, logged: bool, agree: Callable[[bool], bool] | None = None) -> bool:
        """Whether to stop after ``step`` (the steps done; ``logged``: a logged step). One process: whether it has
        been told to stop. Under jax.distributed: whether every process stops here, having told the others of its own
        notice (planb_train.processes.stop_agreed). With ``agree`` (how independent replicas share rank 0's view), on
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
    every process has left (planb_train.processes.leave): whoever watches the process sees the stop it asked for."""
    leave()
    sys.stdout.flush()
    sys.stderr.flush()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def save_on_notice(notice: StopNotice, ckpt: Checkpointer, progress: Progress, step: int, state: Any) -> float:
    """Save ``state`` after ``step`` steps on the notice, wait for its commit, tell the preStop hook and say so; the
    seconds from the step boundary to the commit. Every writer saves the same step (the notice's agreement)."""
    t_notice = time.perf_counter()
    saved = ckpt.maybe_save(step, state, force=True) or ckpt.latest_step() == step
    ckpt.close()
    notice_save_s = time.perf_counter() - t_notice
    progress.record(step, saved=saved, force=True)
    notice.acknowledge(step if saved else None)
    if saved:
        where = f"checkpoint step {step} saved"
    elif ckpt.enabled and not ckpt.writer:
        where = "worker 0 saves the checkpoints"
    else:
        where = "no checkpoint directory, nothing saved"
    if progress.writer:
        print(progress.line())
    how = notice.source()
    print(f"Stop notice ({how}) after step {step}: {where}; stopping")
    print(f"The save on notice took {notice_save_s:.1f} s from the step boundary to its commit")
    return notice_save_s
