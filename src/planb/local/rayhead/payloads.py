"""The host processes `run` payloads started, recorded so `planb local down` can stop what outlives the stand-in.

Each payload runs in its own session (planb.local.rayhead.jobs), so stopping the stand-in's process group does
not reach it. The stand-in records every payload it starts as ``<pid>.pid`` holding ``<pid> <start time>``
(the rule of planb.local.process: a pid the system has handed to another process since is not taken for a
payload) in the state directory's ``rayhead/payloads``, and removes the record when the payload ends.
`stop_all` stops every recorded payload that still runs, all at once, and forgets the records.
"""

from __future__ import annotations

import threading
from pathlib import Path

from planb.errors import PlanbError
from planb.local.process import is_alive, start_time, terminate
from planb.local.statefile import private_dir, write_atomic


class PayloadStopError(PlanbError):
    """A recorded payload could not be stopped (it belongs to another user)."""


def record(directory: Path, pid: int) -> None:
    private_dir(directory)
    write_atomic(directory / f"{pid}.pid", f"{pid} {start_time(pid)}\n", private=True)


def forget(directory: Path, pid: int) -> None:
    (directory / f"{pid}.pid").unlink(missing_ok=True)


def running(directory: Path) -> list[int]:
    """The recorded payloads that still run (alive, and started when recorded)."""
    found: list[int] = []
    for path in sorted(directory.glob("*.pid")):
        try:
            pid_text, started = path.read_text().split()
            pid = int(pid_text)
        except (OSError, ValueError):
            continue
        if is_alive(pid) and start_time(pid) == started:
            found.append(pid)
    return found


def stop_all(directory: Path, timeout: float = 15.0) -> list[int]:
    """Stop every recorded payload that still runs, in parallel (SIGTERM to its group, SIGKILL after
    `timeout`); the pids stopped. The records go once none is left running."""
    pids = running(directory)
    failures: list[str] = []

    def stop(pid: int) -> None:
        try:
            terminate(pid, timeout)
        except PlanbError as exc:
            failures.append(str(exc))
            return
        if is_alive(pid):
            failures.append(f"payload pid {pid} still runs after SIGKILL")

    threads = [threading.Thread(target=stop, args=(pid,), name=f"stop payload {pid}") for pid in pids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise PayloadStopError("; ".join(failures))
    for path in directory.glob("*.pid"):
        path.unlink(missing_ok=True)
    return pids
