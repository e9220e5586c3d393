"""The GKE emulator as a background host process: started, probed and stopped like the stack's parts.

Files under ``<state_dir>/gke-emulator/`` (next to the emulator's state.json)::

    emulator.pid    "<pid> <start time>", as planb.local.process records every host process
    emulator.log    the server's output, appended across starts
    emulator.json   {"url": ..., "pid": ..., "op_seconds": ...}, written (temp + rename) once it listens
    emulator.lock   held while a `start` runs, so two starts at once launch one server

`planb local gke-emulator start|stop|status` and `planb local up|down|status` both use this class.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from planb.local.gke_emulator.address import DEFAULT_PORT
from planb.local.gke_emulator.errors import EmulatorError
from planb.local.gke_emulator.operations import DEFAULT_OP_SECONDS
from planb.local.gke_emulator.store import emulator_dir, list_clusters, reset_state
from planb.local.process import ManagedProcess, reap
from planb.local.statefile import open_private, write_atomic
from planb.paths import state_dir

#: How long a `start` waits for another one to finish before giving up.
LOCK_WAIT_S = 60.0


def default_port() -> int:
    """The port `start` binds unless told otherwise (env PLANB_GKE_EMULATOR_PORT)."""
    return int(os.environ.get("PLANB_GKE_EMULATOR_PORT", DEFAULT_PORT))


def default_op_seconds() -> float:
    """How long each operation runs unless told otherwise (env PLANB_GKE_EMULATOR_OP_SECONDS)."""
    return float(os.environ.get("PLANB_GKE_EMULATOR_OP_SECONDS", DEFAULT_OP_SECONDS))


def emulator_healthy(url: str) -> bool:
    """Whether the emulator at url answers its health endpoint."""
    try:
        with urllib.request.urlopen(f"{url}/planb/v1/healthz", timeout=1) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@dataclass(frozen=True)
class BackgroundEmulator:
    """The emulator process `start` launches, known by its files under the state directory."""

    state: Path

    @classmethod
    def default(cls) -> BackgroundEmulator:
        """The one under planb.paths.state_dir() (env PLANB_STATE_DIR)."""
        return cls(state_dir())

    @property
    def process(self) -> ManagedProcess:
        return ManagedProcess("emulator", emulator_dir(self.state))

    @property
    def info_file(self) -> Path:
        return emulator_dir(self.state) / "emulator.json"

    def url(self) -> str:
        """The address the running server wrote; '' before it listens."""
        try:
            return str(json.loads(self.info_file.read_text())["url"])
        except (FileNotFoundError, ValueError, KeyError):
            return ""

    @property
    def lock_file(self) -> Path:
        return emulator_dir(self.state) / "emulator.lock"

    def pid(self) -> int | None:
        """The recorded pid if that process is the emulator `start` launched and still alive.

        planb.local.process checks the recorded start time; a record without one (written before
        planb recorded start times) is trusted only if the process runs `planb local gke-emulator serve`,
        so a pid the system has since handed to another program is never signalled.
        """
        pid = self.process.pid()
        if pid is None:
            return None
        try:
            recorded = self.process.pid_file.read_text().split()
        except FileNotFoundError:
            return None
        if len(recorded) < 2 and not _serves_emulator(pid):
            return None
        return pid

    def running(self) -> tuple[int, str] | None:
        """(pid, url) of the emulator `start` launched, if that process is still ours and alive."""
        pid = self.pid()
        return None if pid is None else (pid, self.url())

    @contextmanager
    def _start_lock(self) -> Iterator[None]:
        """Hold emulator.lock (flock, released when the process ends) for the length of one start."""
        with open_private(self.lock_file, "a") as handle:
            deadline = time.monotonic() + LOCK_WAIT_S
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise EmulatorError(
                            f"another `planb local gke-emulator start` has held {self.lock_file} for "
                            f"{LOCK_WAIT_S:.0f}s; "
                            "wait for it, or stop it and retry"
                        ) from None
                    time.sleep(0.1)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def healthy(self) -> bool:
        """Running and answering its health endpoint."""
        found = self.running()
        return found is not None and bool(found[1]) and emulator_healthy(found[1])

    def start(
        self,
        host: str = "127.0.0.1",
        port: int | None = None,
        op_seconds: float | None = None,
        reset: bool = False,
        wait: float = 15.0,
    ) -> tuple[int, str, bool]:
        """(pid, url, started): start `planb local gke-emulator serve` detached and wait until it answers.

        An emulator that already runs is left alone (started is False). One that exits or does not
        answer within `wait` seconds is stopped and named, with its log, in an EmulatorError.
        Concurrent starts take turns (emulator.lock): the second finds the first one's server.
        """
        with self._start_lock():
            return self._start(host, port, op_seconds, reset, wait)

    def _start(
        self, host: str, port: int | None, op_seconds: float | None, reset: bool, wait: float
    ) -> tuple[int, str, bool]:
        running = self.running()
        if running is not None:
            return running[0], running[1], False
        if reset:
            reset_state(self.state)
        list_clusters(self.state)  # a corrupt state file is named here, with its fix, not in the server's log
        port = default_port() if port is None else port
        op_seconds = default_op_seconds() if op_seconds is None else op_seconds
        self.info_file.unlink(missing_ok=True)
        argv = [sys.executable, "-m", "planb.cli", "local", "gke-emulator", "serve", "--host", host]
        argv += ["--port", str(port), "--op-seconds", str(op_seconds)]
        if reset:
            argv.append("--reset")
        pid = self.process.start(argv, env=dict(os.environ, PLANB_STATE_DIR=str(self.state)))
        log = self.process.log_file
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if self.process.pid() is None:
                code = reap(pid)
                self.process.stop()
                how = "exited" if code is None else f"exited with {code}"
                raise EmulatorError(f"the GKE emulator (pid {pid}) {how} at start-up; see {log}")
            url = self.url()
            if url and emulator_healthy(url):
                return pid, url, True
            time.sleep(0.1)
        self.process.stop(timeout=5.0)
        raise EmulatorError(f"the GKE emulator did not answer within {wait}s (stopped it); see {log}")

    def stop(self, purge: bool = False) -> int | None:
        """SIGTERM, then SIGKILL; the pid that ran, or None. purge also forgets its clusters and pools."""
        pid = self.pid()
        if pid is None:
            self.process.pid_file.unlink(missing_ok=True)  # stale: names no process of ours
        else:
            self.process.stop(timeout=5.0)
        self.info_file.unlink(missing_ok=True)
        if purge:
            reset_state(self.state)
        return pid


def write_info(info_file: Path, info: dict[str, object]) -> None:
    """Write emulator.json as temp + rename, so `url()` never reads half of it."""
    write_atomic(info_file, json.dumps(info))


def _serves_emulator(pid: int) -> bool:
    """Whether the process runs `planb local gke-emulator serve` (by its command line)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"gke-emulator" in argv and b"serve" in argv


def post_switch(path: str, body: dict[str, object]) -> None:
    """POST an emulator-only switch to the running emulator; its error message when it refuses."""
    running = BackgroundEmulator.default().running()
    if running is None:
        raise EmulatorError("the GKE emulator is not running; start it with `planb local gke-emulator start`")
    request = urllib.request.Request(
        f"{running[1]}{path}",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=5):
            pass
    except urllib.error.HTTPError as exc:
        message = json.loads(exc.read() or b"{}").get("error", {}).get("message", str(exc))
        raise EmulatorError(f"the GKE emulator refused the switch: {message}") from exc
