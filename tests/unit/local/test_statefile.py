"""State files are replaced whole and are this user's alone (0600 files, 0700 directories under the state
directory after typical writes); the stop flag follows SIGTERM/SIGINT."""

from __future__ import annotations

import json
import os
import signal
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from planb.local import statefile
from planb.local.statefile import JsonSettings, SettingsError


@pytest.fixture()
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_write_json_is_the_settings_format(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    statefile.write_json(path, {"b": 1, "a": [1, 2]})
    assert path.read_text() == json.dumps({"b": 1, "a": [1, 2]}, indent=2) + "\n"
    statefile.write_json(path, {"b": 1, "a": 2}, sort_keys=True)
    assert path.read_text() == '{\n  "a": 2,\n  "b": 1\n}\n'


@dataclass(frozen=True)
class _Switches(JsonSettings):
    OWNER = "the test's"
    ON_DELETE = "the defaults come back"

    limit: int = 1

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> _Switches:
        if not isinstance(data.get("limit", 1), int):
            raise TypeError(f"limit is {data['limit']!r}, not a whole number")
        return cls(limit=data.get("limit", 1))

    def to_json(self) -> dict[str, Any]:
        return {"limit": self.limit}

    def validate(self) -> None:
        if self.limit < 0:
            raise SettingsError(f"limit must be >= 0, got {self.limit}")


def test_json_settings_default_round_trip_refuse_and_name_a_file_they_cannot_use(tmp_path: Path) -> None:
    path = tmp_path / "part" / "settings.json"
    assert _Switches.load(path) == _Switches()  # no file: the defaults
    _Switches(limit=3).save(path)
    assert json.loads(path.read_text()) == {"limit": 3} and _Switches.load(path) == _Switches(limit=3)
    assert (stat.S_IMODE(path.parent.stat().st_mode), stat.S_IMODE(path.stat().st_mode)) == (0o700, 0o600)
    with pytest.raises(SettingsError, match="limit must be >= 0, got -1"):
        _Switches(limit=-1).save(path)
    assert _Switches.load(path) == _Switches(limit=3)  # a refused save leaves the file as it was
    for text, why in (("[1]", "a JSON list instead of an object"), ("{", "Expecting"), ('{"limit": "x"}', "limit is")):
        path.write_text(text)
        with pytest.raises(SettingsError) as refused:
            _Switches.load(path)
        message = str(refused.value)
        assert message.startswith(f"the test's settings file {path} is unreadable ({why}"), message
        assert message.endswith(f"Fix: delete it (the defaults come back): rm {path}"), message
    path.write_text('{"limit": -2}')
    with pytest.raises(SettingsError, match=r"unreadable \(limit must be >= 0, got -2\)"):
        _Switches.load(path)


def test_a_state_file_is_this_users_alone_and_a_shared_one_gets_the_umasks_mode(
    tmp_path: Path, umask_022: None
) -> None:
    atomic = tmp_path / "atomic.json"
    statefile.write_atomic(atomic, "{}")
    assert _mode(atomic) == 0o600
    shared = tmp_path / "shared.json"
    statefile.write_atomic(shared, "{}", private=False)
    assert _mode(shared) == 0o644


def test_a_private_file_is_0600_from_its_creation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    created: list[int] = []
    real_open = os.open

    def spy(path: str | os.PathLike[str], flags: int, mode: int = 0o777) -> int:
        fd = real_open(path, flags, mode)
        created.append(stat.S_IMODE(os.fstat(fd).st_mode))
        return fd

    old = os.umask(0)
    try:
        monkeypatch.setattr(os, "open", spy)
        statefile.write_atomic(tmp_path / "tls.key", b"secret", private=True)
    finally:
        os.umask(old)
    assert created == [0o600]
    assert _mode(tmp_path / "tls.key") == 0o600
    assert (tmp_path / "tls.key").read_bytes() == b"secret"


def test_the_target_is_replaced_and_no_temporary_file_stays(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text("old")
    inode = path.stat().st_ino
    statefile.write_atomic(path, "new")
    assert path.read_text() == "new"
    assert path.stat().st_ino != inode  # a rename over it, not a rewrite in place
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def test_a_failed_write_leaves_the_target_and_removes_its_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "state.json"
    path.write_text("old")

    def broken(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="disk full"):
        statefile.write_atomic(path, "new")
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_the_stop_flag_is_set_by_sigterm_and_sigint(signum: signal.Signals) -> None:
    saved = {s: signal.getsignal(s) for s in statefile.STOP_SIGNALS}
    try:
        stop = statefile.stop_on_signals()
        assert not stop.is_set()
        os.kill(os.getpid(), signum)
        assert stop.wait(5.0)
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)


def test_a_state_dir_after_typical_writes_holds_only_0700_directories_and_0600_files(
    tmp_path: Path, umask_022: None
) -> None:
    """What local mode writes under .state/: settings, the emulator's store and request log, a process's
    pid and log, the stack's owned directory and lock, and the emulator's start lock; walked whole."""
    from planb.local import failover_settings
    from planb.local.capacity import settings as capacity_settings
    from planb.local.gke_emulator.background import BackgroundEmulator
    from planb.local.gke_emulator.store import Store
    from planb.local.process import ManagedProcess
    from planb.local.rayhead import settings as rayhead_settings
    from planb.local.stack import statedir
    from planb.local.stack.parts import StackParts

    state = tmp_path / "home" / ".state"  # two levels that do not exist yet
    local = state / "local"
    assert statedir.create(local)
    capacity_settings.update(state, provisioning_delay_seconds=1.0)
    rayhead_settings.save(rayhead_settings.Settings(), state)
    failover_settings.save(local, failover_settings.FailoverSettings())
    store = Store(state)
    store.save()
    store.log_request("GET", "/v1/x", 200)
    process = ManagedProcess("sleeper", local)
    process.start(["sleep", "0"])
    with StackParts(local).locked():
        pass
    with BackgroundEmulator(state)._start_lock():
        pass
    found = [(p, _mode(p)) for p in [state, *sorted(state.rglob("*"))]]
    assert len(found) > 10, found
    wrong = [(str(p.relative_to(tmp_path)), oct(m)) for p, m in found if m != (0o700 if p.is_dir() else 0o600)]
    assert wrong == []
    assert _mode(tmp_path / "home") == 0o700  # created as the state directory's parent
