"""One Ray head's job table, as Ray's job manager keeps it, and the payloads behind its jobs.

The statuses, their order and the messages follow Ray's job submission API (the REST API KubeRay
calls: https://docs.ray.io/en/latest/cluster/running-applications/job-submission/rest.html and
Ray's ``JobStatus``: PENDING -> RUNNING -> SUCCEEDED | FAILED | STOPPED). A head's table lives as
long as its head pod: a new head starts empty, as a Ray head without GCS fault tolerance does.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planb.local.rayhead import payloads
from planb.local.rayhead.launch import Launch
from planb.local.rayhead.settings import Payload
from planb.local.statefile import open_private, private_dir

PENDING, RUNNING, SUCCEEDED, FAILED, STOPPED = "PENDING", "RUNNING", "SUCCEEDED", "FAILED", "STOPPED"
TERMINAL = frozenset({SUCCEEDED, FAILED, STOPPED})
#: Ray keeps the tail of a failed entrypoint's output in the job's message (this many characters).
LOG_TAIL_CHARS = 20000
#: How long a payload told to stop (SIGTERM) gets before SIGKILL: enough for train.py to save one checkpoint.
KILL_GRACE_SECONDS = 10


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class RayJobRecord:
    """One submitted job: the fields of Ray's JobDetails that KubeRay reads."""

    submission_id: str
    entrypoint: str
    log_file: Path
    runtime_env: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, str] = field(default_factory=dict)
    status: str = PENDING
    message: str = "Job has not started yet."
    start_time: int = field(default_factory=now_ms)
    end_time: int = 0
    process: subprocess.Popen[bytes] | None = None
    #: How a `run` payload was started (its emptyDir directories among it); None for a simulated one.
    launch: Launch | None = None
    changed: threading.Condition = field(default_factory=threading.Condition)

    def info(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "type": "SUBMISSION",
            "job_id": self.submission_id,
            "submission_id": self.submission_id,
            "entrypoint": self.entrypoint,
            "status": self.status,
            "message": self.message,
            "start_time": self.start_time,
            "metadata": self.metadata,
            "runtime_env": self.runtime_env,
        }
        if self.end_time:
            data["end_time"] = self.end_time
        return data

    def finish(self, status: str, message: str) -> bool:
        """Move to a terminal status once; False when it already was terminal."""
        with self.changed:
            if self.status in TERMINAL:
                return False
            self.status, self.message, self.end_time = status, message, now_ms()
            self.changed.notify_all()
        return True

    def wait_terminal(self, timeout: float) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: self.status in TERMINAL, timeout)

    def logs(self) -> str:
        try:
            return self.log_file.read_text(errors="replace")
        except OSError:
            return ""


class JobTable:
    """The jobs of one Ray head; `close` ends every running one, as the head pod's death does."""

    def __init__(self, head: str, log: Callable[[str], None], payloads_dir: Path | None = None) -> None:
        self.head = head
        self.log = log
        #: Where the host processes of `run` payloads are recorded (planb.local.rayhead.payloads); None: nowhere.
        self.payloads_dir = payloads_dir
        self.jobs: dict[str, RayJobRecord] = {}
        self.lock = threading.Lock()
        self.closed = False
        #: (namespace, RayCluster name) of the head.
        self.cluster: tuple[str, str] = ("", "")
        #: Worker pods (uid -> name) seen running while this head lived.
        self.workers: dict[str, str] = {}

    def get(self, submission_id: str) -> RayJobRecord | None:
        with self.lock:
            return self.jobs.get(submission_id)

    def list(self) -> list[RayJobRecord]:
        with self.lock:
            return list(self.jobs.values())

    def submit(
        self, record: RayJobRecord, payload: Payload, launch: Launch | None, refused: str = ""
    ) -> tuple[RayJobRecord, bool]:
        """Start `record` unless its submission id exists; returns (the job, whether it was new).

        A `run` payload starts `launch`; with `refused` (why its entrypoint is not run here) the job ends
        FAILED with that text, in its log and its message, and nothing runs."""
        with self.lock:
            existing = self.jobs.get(record.submission_id)
            if existing is not None or self.closed:
                return existing or record, False
            self.jobs[record.submission_id] = record
        private_dir(record.log_file.parent)  # a job's log is this user's alone: 0700, its file 0600
        if refused:
            self._refuse(record, refused)
        elif payload.mode == "run" and launch is not None:
            record.launch = launch
            self._start_process(record, launch)
        else:
            self._start_simulated(record, payload)
        return record, True

    def stop(self, submission_id: str) -> bool:
        """Ray's stop: True when a running job was asked to stop."""
        record = self.get(submission_id)
        if record is None or record.status in TERMINAL:
            return False
        stopped = record.finish(STOPPED, "Job was intentionally stopped.")  # before the exit code is seen
        self._kill(record)
        return stopped

    def delete(self, submission_id: str) -> bool:
        """Ray deletes only a job in a terminal status."""
        with self.lock:
            record = self.jobs.get(submission_id)
            if record is None or record.status not in TERMINAL:
                return False
            del self.jobs[submission_id]
            return True

    def fail_running(self, message: str) -> None:
        """Every running job fails with `message` (its driver process, if any, is ended)."""
        for record in self.list():
            if record.finish(FAILED, message):
                self._kill(record)
                self.log(f"{self.head}: job {record.submission_id} FAILED: {message}")

    def close(self, why: str) -> None:
        """The head is gone: every job not yet ended dies with it."""
        with self.lock:
            self.closed = True
            records = list(self.jobs.values())
        for record in records:
            if record.finish(FAILED, f"The Ray head went away ({why}); the job's driver died with it."):
                self._kill(record)
                self.log(f"{self.head}: job {record.submission_id} ended with its head ({why})")

    # ------------------------------------------------------------------ payloads
    def _refuse(self, record: RayJobRecord, why: str) -> None:
        with open_private(record.log_file, "a") as out:
            out.write(f"planb local: the entrypoint {record.entrypoint!r} was not run: {why}\n")
        record.finish(FAILED, f"Job entrypoint command was not run on this machine: {why}")
        self.log(f"{self.head}: job {record.submission_id} FAILED: {why}")

    def _start_simulated(self, record: RayJobRecord, payload: Payload) -> None:
        with open_private(record.log_file, "a") as out:
            out.write(
                f"planb local: simulated payload of {record.entrypoint!r} ({payload.seconds:g} s"
                + (f", then FAILED: {payload.fail}" if payload.fail else ", then SUCCEEDED")
                + "); 'planb local rayhead set --run' runs the entrypoint itself\n"
            )
        with record.changed:
            record.status, record.message = RUNNING, "Job is currently running."
            record.changed.notify_all()

        def end() -> None:
            if record.wait_terminal(payload.seconds):
                return  # stopped or its head went away
            if payload.fail:
                record.finish(FAILED, payload.fail)
            else:
                record.finish(SUCCEEDED, "Job finished successfully.")
            self.log(f"{self.head}: job {record.submission_id} {record.status} (simulated)")

        threading.Thread(target=end, name=f"job {record.submission_id}", daemon=True).start()

    def _start_process(self, record: RayJobRecord, launch: Launch) -> None:
        """Start the payload in a session of its own, with a temporary folder of its own as ``TMPDIR`` (a
        container's /tmp is its own: planb.local.rayhead.payloads), removed when it ends."""
        out = open_private(record.log_file, "ab")
        tmp = payloads.private_tmp()
        try:
            record.process = subprocess.Popen(
                launch.argv,
                env={**launch.env, "TMPDIR": str(tmp)},
                cwd=launch.cwd,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            out.close()
            payloads.remove_tmp(tmp)
            record.finish(FAILED, f"Job entrypoint command failed to start: {exc}")
            return
        out.close()
        pid = record.process.pid
        if self.payloads_dir is not None:
            payloads.record(self.payloads_dir, pid, tmp)
        with record.changed:
            record.status, record.message = RUNNING, "Job is currently running."
            record.changed.notify_all()
        self.log(f"{self.head}: job {record.submission_id} runs {shlex.join(launch.argv)} (pid {pid})")

        def wait() -> None:
            assert record.process is not None
            code = record.process.wait()
            payloads.remove_tmp(tmp)
            if self.payloads_dir is not None:
                payloads.forget(self.payloads_dir, pid)
            if code == 0:
                record.finish(SUCCEEDED, "Job finished successfully.")
            else:
                tail = record.logs()[-LOG_TAIL_CHARS:]
                record.finish(
                    FAILED,
                    f"Job entrypoint command failed with exit code {code}, last available logs "
                    f"(truncated to {LOG_TAIL_CHARS} chars):\n{tail}",
                )
            self.log(f"{self.head}: job {record.submission_id} {record.status} (exit {code})")

        threading.Thread(target=wait, name=f"job {record.submission_id}", daemon=True).start()

    @staticmethod
    def _kill(record: RayJobRecord) -> None:
        """SIGTERM to the payload's process group now, SIGKILL 10 s later if it is still there. The wait runs in a
        thread of its own: a payload told to stop saves its checkpoint first (train.py's stop notice), and neither
        the pod watch nor Ray's stop call waits for that, as Ray's `ray job stop` does not."""
        proc = record.process
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return

        def reap() -> None:
            try:
                proc.wait(KILL_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)

        threading.Thread(target=reap, name=f"stop {record.submission_id}", daemon=True).start()
