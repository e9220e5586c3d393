"""State files written whole, and the stop flag of planb's long-running commands.

`write_atomic` writes a file so that no reader (a running simulator, `planb ... show`, another
process) ever sees half of it: the bytes go to a temporary file in the same directory, which then
replaces the target in one rename (``os.replace``, atomic within a file system). The temporary
name carries the writer's pid and a random part, so two writers never share one; a write that
fails removes its temporary file and leaves the target as it was. `write_json` is the settings
files' format on top: JSON indented by two spaces with a final newline.

`JsonSettings` is the base of the switches a command flips while a long-running loop reads them (the
capacity simulator's, the Ray head stand-in's): a frozen dataclass kept in one JSON file, its
defaults when there is none, checked on every load and save. A file it cannot use is a
`SettingsError` that names the file and the fix (delete it); so is a value the reader cannot use.

Local mode's state (``.state/`` and everything under it) is this user's alone, whatever the umask:
`write_atomic` creates files with mode 0600 from their first byte, `open_private` opens the files
appended to (logs, the emulator's request log, lock files) creating them 0600, `flocked` holds such a lock
file for the length of a `with`, and `private_dir`
creates directories, and their missing parents, with mode 0700. A directory that already existed
keeps its mode: ``PLANB_STATE_DIR`` may name a directory the user made (a home directory, say).

`stop_on_signals` is how `planb local capacity run` and `planb local rayhead run` stop: SIGTERM (what
`planb local down` sends) and SIGINT (Ctrl-C) set an event that their loops poll, so a loop
finishes its pass and cleans up instead of dying mid-write.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, ClassVar, Self

from planb.errors import PlanbError

#: The signals `stop_on_signals` turns into a stop request.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def private_dir(path: Path) -> Path:
    """Create `path` and its missing parents with mode 0700 (existing ones are left as they are)."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=0o700)
        except FileExistsError:
            continue  # made by a concurrent writer meanwhile: its mode is the same
        os.chmod(directory, 0o700)  # mkdir's mode is masked by the umask; make it exactly 0700
    return path


def open_private(path: Path, mode: str = "ab") -> IO[Any]:
    """Open `path` for appending ('a' or 'ab'), creating it with mode 0600, its directory with 0700."""
    if mode not in ("a", "ab"):
        raise ValueError(f"open_private appends only, not {mode!r}")
    private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    return os.fdopen(fd, mode)


@contextlib.contextmanager
def flocked(path: Path, operation: int = fcntl.LOCK_EX) -> Iterator[None]:
    """Hold the lock file `path` (created as `open_private` does) with flock `operation` until the block ends."""
    with open_private(path, "a") as handle:
        fcntl.flock(handle, operation)
        yield


def write_atomic(path: Path, data: str | bytes, *, private: bool = True) -> None:
    """Replace `path` with `data` (str as UTF-8) in one rename, mode 0600 from creation on.

    `private=False` is for a file meant to be read by others: mode 0666 less the umask.
    """
    raw = data.encode() if isinstance(data, str) else data
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if private else 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
        if private:
            os.chmod(tmp, 0o600)  # a file system that ignored the create mode
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json(path: Path, data: object, *, sort_keys: bool = False) -> None:
    """Replace `path` with `data` as JSON indented by 2, with a final newline (`write_atomic`)."""
    write_atomic(path, json.dumps(data, indent=2, sort_keys=sort_keys) + "\n")


def stop_on_signals(signals: tuple[signal.Signals, ...] = STOP_SIGNALS) -> threading.Event:
    """An event that is set when the process gets one of `signals` (call it from the main thread)."""
    stop = threading.Event()

    def handler(signum: int, frame: object) -> None:
        stop.set()

    for signum in signals:
        signal.signal(signum, handler)
    return stop


class SettingsError(PlanbError):
    """A switch was given a value its reader cannot use, or a settings file cannot be read."""


class JsonSettings:
    """The base of a frozen dataclass of switches kept in one JSON file (``load``, ``save``).

    A subclass gives ``from_json`` (the settings from the file's object, raising ValueError, TypeError or
    SettingsError on what it cannot use), ``to_json``, ``validate`` (SettingsError naming a value the reader
    cannot use), and, for the message of a file ``load`` cannot use, ``OWNER`` (whose file it is: "the capacity
    simulator's") and ``ON_DELETE`` (what deleting it does).
    """

    OWNER: ClassVar[str] = "planb's"
    ON_DELETE: ClassVar[str] = "the defaults apply"

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        raise NotImplementedError

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    def validate(self) -> None:
        """Raise SettingsError naming a value the reader cannot use."""

    @classmethod
    def load(cls, path: Path) -> Self:
        """The settings in ``path`` (the defaults when there is no file); a SettingsError names a file it cannot use."""
        if not path.is_file():
            return cls()
        try:
            data = json.loads(path.read_text())
            if not isinstance(data, dict):
                raise TypeError(f"a JSON {type(data).__name__} instead of an object")
            settings = cls.from_json(data)
            settings.validate()
        except (ValueError, TypeError, UnicodeDecodeError, SettingsError) as exc:
            raise SettingsError(
                f"{cls.OWNER} settings file {path} is unreadable ({exc}). Fix: delete it ({cls.ON_DELETE}): rm {path}"
            ) from exc
        return settings

    def save(self, path: Path) -> None:
        """Validate, then replace ``path`` with the settings (``write_json``; its directory made private)."""
        self.validate()
        private_dir(path.parent)
        write_json(path, self.to_json())
