"""The host processes `run` payloads started, recorded so `planb local down` can stop what outlives the stand-in.

Each payload runs in its own session (planb.local.rayhead.jobs), so stopping the stand-in's process group does
not reach it. The stand-in records every payload it starts as ``<pid>.pid`` holding ``<pid> <start time>``
(the rule of planb.local.process: a pid the system has handed to another process since is not taken for a
payload) in the state directory's ``rayhead/payloads``, and removes the record when the payload ends.
`stop_all` stops every recorded payload that still runs, all at once, and forgets the records.

Each payload also has a temporary folder of its own (`private_tmp`, its ``TMPDIR``), as a container's ``/tmp`` is
its own and goes with its pod: what a payload leaves there (Ray's session folder of a `ray.init`, its sockets and
logs; Ray reads ``TMPDIR`` on Linux, ray/_common/utils.py ``get_user_temp_dir``) goes when the payload ends, or
with `stop_all` for one the stand-in did not see end. The record's third field names it. The folder sits directly
in the system's temporary folder, short, because Ray's sockets under it must fit a Unix socket path (107 bytes).
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from pathlib import Path

from planb.errors import PlanbError
from planb.local.process import is_alive, start_time, terminate
from planb.local.statefile import private_dir, write_atomic


class PayloadStopError(PlanbError):
    """A recorded payload could not be stopped (it belongs to another user)."""


#: The name of a payload's temporary folder starts so (`private_tmp`); `remove_tmp` removes nothing else.
TMP_PREFIX = "planb-pod-"


def private_tmp() -> Path:
    """A new temporary folder for one payload (mode 0700), in the system's temporary folder."""
    return Path(tempfile.mkdtemp(prefix=TMP_PREFIX))


def remove_tmp(folder: Path | None) -> None:
    """Remove a payload's temporary folder; a path not made by `private_tmp` is left alone."""
    if folder is not None and folder.name.startswith(TMP_PREFIX) and folder.parent == Path(tempfile.gettempdir()):
        shutil.rmtree(folder, ignore_errors=True)


def record(directory: Path, pid: int, tmp: Path | None = None) -> None:
    private_dir(directory)
    line = f"{pid} {start_time(pid)}" + (f" {tmp}" if tmp is not None else "")
    write_atomic(directory / f"{pid}.pid", line + "\n", private=True)


def forget(directory: Path, pid: int) -> None:
    (directory / f"{pid}.pid").unlink(missing_ok=True)


def _fields(path: Path) -> list[str]:
    """A record's fields (`record`): pid, start time and, for a payload given one, its temporary folder; none for a
    record that cannot be read."""
    try:
        return path.read_text().split()
    except OSError:
        return []


def _recorded_tmp(path: Path) -> Path | None:
    """The temporary folder a record names (its third field), if any."""
    fields = _fields(path)
    return Path(fields[2]) if len(fields) > 2 else None


def running(directory: Path) -> list[int]:
    """The recorded payloads that still run (alive, and started when recorded)."""
    found: list[int] = []
    for path in sorted(directory.glob("*.pid")):
        fields = _fields(path)
        try:
            pid, started = int(fields[0]), fields[1]
        except (IndexError, ValueError):
            continue
        if is_alive(pid) and start_time(pid) == started:
            found.append(pid)
    return found


def stop_all(directory: Path, timeout: float = 15.0) -> list[int]:
    """Stop every recorded payload that still runs, in parallel (SIGTERM to its group, SIGKILL after
    `timeout`); the pids stopped. The records and the payloads' temporary folders go once none is left running."""
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
        remove_tmp(_recorded_tmp(path))
        path.unlink(missing_ok=True)
    return pids
