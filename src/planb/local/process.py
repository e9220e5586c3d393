"""Host processes planb starts: detached, logged, remembered by pid file, stopped by pid.

The one home of these rules for every part that runs in the background (the local stack's
components, the GKE emulator, the capacity simulator):

* started detached in their own session, output appended to ``<name>.log``;
* recorded as ``<pid> <start time>`` in ``<name>.pid``, so a recycled pid is not taken for ours;
* alive means the pid exists, is not a zombie and started when recorded;
* stopped with SIGTERM to the process group, then SIGKILL after a timeout.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from planb.errors import PlanbError
from planb.local.statefile import open_private, private_dir, write_atomic


class ProcessError(PlanbError):
    """A recorded process cannot be signalled (it belongs to another user)."""


#: The children this process started and has not reaped, by pid. Holding the Popen keeps it from
#: subprocess's own clean-up: a Popen dropped while its child runs is polled (waitpid) by the next Popen any
#: thread creates, which would collect the exit code before ``reap`` asks for it.
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


@dataclass(frozen=True)
class ManagedProcess:
    """A process known by name, with its pid file and log under a state directory."""

    name: str
    state: Path

    @property
    def pid_file(self) -> Path:
        return self.state / f"{self.name}.pid"

    @property
    def log_file(self) -> Path:
        return self.state / f"{self.name}.log"

    def pid(self) -> int | None:
        """The recorded pid if that process is still ours and alive.

        The pid file holds the pid and the process's start time, so a pid the system handed to
        another process since (after a reboot, say) is not mistaken for ours.
        """
        try:
            fields = self.pid_file.read_text().split()
            pid = int(fields[0])
        except (FileNotFoundError, ValueError, IndexError):
            return None
        if not is_alive(pid):
            return None
        if len(fields) > 1 and fields[1] != start_time(pid):
            return None
        return pid

    def start(self, argv: Sequence[str], env: Mapping[str, str] | None = None) -> int:
        """Start detached in its own session (so a stop reaches its children too)."""
        private_dir(self.state)
        with open_private(self.log_file) as log:
            proc = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=dict(env) if env is not None else None,
                start_new_session=True,
            )
        _CHILDREN[proc.pid] = proc
        write_atomic(self.pid_file, f"{proc.pid} {start_time(proc.pid)}\n")
        return proc.pid

    def stop(self, timeout: float = 15.0) -> bool:
        """Stop the process group by pid; True if something was running."""
        pid = self.pid()
        self.pid_file.unlink(missing_ok=True)
        if pid is None:
            return False
        terminate(pid, timeout)
        return True


def start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat); '' if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return ""
    return stat.rsplit(")", 1)[1].split()[19]


def is_alive(pid: int) -> bool:
    """True if the pid exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    # The state letter follows the parenthesised command name.
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def terminate(pid: int, timeout: float = 15.0) -> None:
    """SIGTERM the process (and its group if it leads one), then SIGKILL after timeout."""
    _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reap(pid)
        if not is_alive(pid):
            return
        time.sleep(0.1)
    _signal(pid, signal.SIGKILL)
    for _ in range(50):
        reap(pid)
        if not is_alive(pid):
            return
        time.sleep(0.1)


def reap(pid: int) -> int | None:
    """The exit code of a child of this process that has ended (and collect it); None otherwise."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        _CHILDREN.pop(pid, None)
        return None
    if done != pid:
        return None
    _CHILDREN.pop(pid, None)
    return os.waitstatus_to_exitcode(status)


def _signal(pid: int, sig: signal.Signals) -> None:
    try:
        if os.getpgid(pid) == pid:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except ProcessLookupError:
        pass
    except PermissionError as exc:
        raise ProcessError(f"pid {pid} is not this user's process; remove the stale pid file") from exc


def pid_files(directory: Path, roots: Sequence[Path]) -> dict[str, int]:
    """The live processes named by `directory`'s <name>.pid files, by name, whose executable lies under one of
    `roots`: pid files another program wrote with the pid alone (kwokctl's), where planb's own carry a start time
    (ManagedProcess); a pid file outlives its process, and the kernel hands the number out again."""
    out: dict[str, int] = {}
    prefixes = tuple(str(root.resolve()) for root in roots)
    for f in sorted(directory.glob("*.pid")) if directory.is_dir() else []:
        try:
            pid = int(f.read_text().strip())
            exe = os.readlink(f"/proc/{pid}/exe")
        except (ValueError, OSError):
            continue
        if is_alive(pid) and exe.startswith(prefixes):
            out[f.stem] = pid
    return out
