"""State files written whole, and the stop flag of planb's long-running commands.

`write_atomic` writes a file so that no reader (a running simulator, `planb ... show`, another
process) ever sees half of it: the bytes go to a temporary file in the same directory, which then
replaces the target in one rename (``os.replace``, atomic within a file system). The temporary
name carries the writer's pid and a random part, so two writers never share one; a write that
fails removes its temporary file and leaves the target as it was. The file is created as
``Path.write_text`` creates one (mode 0666 less the umask), or, with ``private=True``, with mode
0600 from its first byte, whatever the umask. `write_json` is the settings files' format on top:
JSON indented by two spaces with a final newline.

`stop_on_signals` is how `planb capacity run` and `planb rayhead run` stop: SIGTERM (what
`planb local down` sends) and SIGINT (Ctrl-C) set an event that their loops poll, so a loop
finishes its pass and cleans up instead of dying mid-write.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import threading
from pathlib import Path

#: The signals `stop_on_signals` turns into a stop request.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def write_atomic(path: Path, data: str | bytes, *, private: bool = False) -> None:
    """Replace `path` with `data` (str as UTF-8) in one rename; `private`: mode 0600 from creation on."""
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
