"""EtcdSnapshot.make on a snapshot that exists takes no exclusive lock (planb.local.stack.snapshot)."""

from __future__ import annotations

import fcntl
import threading
from pathlib import Path

from planb.local.stack.snapshot import DATABASE, NAMES, EtcdSnapshot


def _made(root: Path) -> EtcdSnapshot:
    snapshot = EtcdSnapshot((), root)
    (snapshot.data_dir / DATABASE).parent.mkdir(parents=True)
    (snapshot.data_dir / DATABASE).write_bytes(b"db")
    (snapshot.directory / NAMES).write_text("[]")
    return snapshot


def test_make_returns_at_once_while_a_control_plane_is_created_from_the_snapshot(tmp_path: Path) -> None:
    """A control plane being created from the snapshot holds the shared lock (`in_use`); `make` of the snapshot that
    exists answers False beside it instead of waiting for an exclusive lock."""
    snapshot = _made(tmp_path)
    answers: list[bool] = []
    with open(tmp_path / ".lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_SH)  # another process's in_use(), as flock sees it (its own open file)
        thread = threading.Thread(target=lambda: answers.append(snapshot.make()), daemon=True)
        thread.start()
        thread.join(5)
        waited = thread.is_alive()
        fcntl.flock(held, fcntl.LOCK_UN)
    thread.join(5)
    assert not waited, "make() waited for the exclusive lock although the snapshot exists"
    assert answers == [False]
