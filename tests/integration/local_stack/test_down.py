"""`planb local down` stops every part even when one fails, and deletes only what planb created.

Real processes stand in for the stack's parts: copies of `sleep` run from where kwokctl runs the
control plane (its pid files name them), and ManagedProcess records for the host processes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from planb.local.gke_emulator.background import BackgroundEmulator
from planb.local.gke_emulator.store import emulator_dir
from planb.local.process import ManagedProcess, is_alive, reap, start_time
from planb.local.rayhead import payloads
from planb.local.rayhead import settings as rayhead_settings
from planb.local.stack.control_plane import ControlPlane
from planb.local.stack.errors import LocalStackError
from planb.local.stack.stack import LocalStack


def _fake_control_plane(state: Path) -> dict[str, subprocess.Popen[bytes]]:
    """etcd and kube-apiserver as kwokctl leaves them: binaries in the cluster dir, pid files."""
    plane = ControlPlane(state)
    (plane.cluster_dir / "bin").mkdir(parents=True)
    (plane.cluster_dir / "pids").mkdir()
    sleep = shutil.which("sleep")
    assert sleep is not None
    procs = {}
    for name in ("etcd", "kube-apiserver"):
        binary = plane.cluster_dir / "bin" / name
        shutil.copy(sleep, binary)
        procs[name] = subprocess.Popen([str(binary), "300"], start_new_session=True)
        _STARTED.append((procs[name].pid, start_time(procs[name].pid)))
        (plane.cluster_dir / "pids" / f"{name}.pid").write_text(f"{procs[name].pid}\n")
    return procs


def _host_processes(state: Path) -> list[int]:
    pids = [ManagedProcess(name, state).start(["sleep", "300"]) for name in ("capacity-simulator", "kueue")]
    _STARTED.extend((pid, start_time(pid)) for pid in pids)
    return pids


def _gone(pid: int) -> bool:
    reap(pid)
    return not is_alive(pid)


#: (pid, start time) of every fake this module started, killed at the end of each test if alive.
_STARTED: list[tuple[int, str]] = []


@pytest.fixture()
def stack(tmp_path: Path) -> Iterator[LocalStack]:
    state = tmp_path / "local"
    state.mkdir()
    yield LocalStack(state)
    while _STARTED:
        pid, started = _STARTED.pop()
        if is_alive(pid) and start_time(pid) == started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            reap(pid)


def test_a_failing_part_does_not_keep_the_others_running(stack: LocalStack, monkeypatch: pytest.MonkeyPatch) -> None:
    control_plane = _fake_control_plane(stack.state)
    hosts = _host_processes(stack.state)

    def broken(self: BackgroundEmulator, purge: bool = False) -> int | None:
        raise OSError("disk full while purging the emulator state")

    monkeypatch.setattr(BackgroundEmulator, "stop", broken)
    with pytest.raises(LocalStackError) as err:
        stack.down()
    assert "stopping the GKE emulator: disk full while purging the emulator state" in str(err.value)
    assert all(_gone(p.pid) for p in control_plane.values()), "etcd/kube-apiserver left running"
    assert all(_gone(pid) for pid in hosts)


def test_a_part_that_cannot_be_stopped_keeps_the_state_for_a_retry(
    stack: LocalStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    control_plane = _fake_control_plane(stack.state)
    monkeypatch.setattr(ManagedProcess, "stop", lambda self, timeout=15.0: (_ for _ in ()).throw(PermissionError("no")))
    with pytest.raises(LocalStackError) as err:
        stack.down()
    assert "stopping Kueue: no" in str(err.value)
    assert "is kept so 'planb local down' can retry" in str(err.value)
    assert stack.state.exists()
    assert all(_gone(p.pid) for p in control_plane.values())


def test_a_corrupt_emulator_state_does_not_stop_down(stack: LocalStack) -> None:
    control_plane = _fake_control_plane(stack.state)
    hosts = _host_processes(stack.state)
    state_json = emulator_dir(stack.state.parent) / "state.json"
    state_json.parent.mkdir(parents=True)
    state_json.write_text('{"clusters": {"projects/p/locations/l/clusters/c": ')
    assert stack.down() is True
    assert all(_gone(p.pid) for p in control_plane.values())
    assert all(_gone(pid) for pid in hosts)
    assert not stack.state.exists()


def test_a_state_dir_in_home_keeps_what_planb_did_not_create(tmp_path: Path) -> None:
    """PLANB_STATE_DIR=$HOME: ~/local, ~/gke and ~/capacity may be the user's own directories."""
    home = tmp_path / "home"
    for name in ("local", "gke", "capacity"):
        (home / name).mkdir(parents=True)
        (home / name / "notes.txt").write_text("mine\n")
    (home / "gke" / "tpu-cluster.kubeconfig").write_text("written by the gke_cluster role\n")
    (home / "capacity" / "settings.json").write_text("{}\n")
    stack = LocalStack(home / "local")
    (stack.state / "kubeconfig").write_text("written by up\n")
    (stack.state / "kueue.log").write_text("log\n")
    stack.down()
    for name in ("local", "gke", "capacity"):
        assert (home / name / "notes.txt").read_text() == "mine\n"
    assert sorted(p.name for p in (home / "local").iterdir()) == ["notes.txt"]
    assert sorted(p.name for p in (home / "gke").iterdir()) == ["notes.txt"]
    assert sorted(p.name for p in (home / "capacity").iterdir()) == ["notes.txt"]


def test_directories_planb_created_are_removed_whole(tmp_path: Path) -> None:
    from planb.local.stack import statedir

    stack = LocalStack(tmp_path / "local")
    assert statedir.create(stack.state)
    (stack.state / "anything").write_text("x\n")
    (tmp_path / "capacity").mkdir()
    (tmp_path / "capacity" / "settings.json").write_text("{}\n")
    stack.down()
    assert not stack.state.exists()
    assert not (tmp_path / "capacity").exists()


#: A payload that, when told to stop, notes when and whether its work directory was still there, then takes
#: two seconds to exit (a training loop saving its checkpoint).
_SLOW_TO_STOP = """import os, signal, sys, time
def stop(*_):
    with open(os.path.join(sys.argv[1], str(os.getpid())), "w") as out:
        out.write(f"{time.monotonic()} {os.path.isdir(sys.argv[2])}")
    time.sleep(2)
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
open(os.path.join(sys.argv[1], f"ready-{os.getpid()}"), "w").close()
while True:
    time.sleep(0.1)
"""


def test_down_stops_the_stand_ins_payloads_together_before_their_work_directory_goes(
    stack: LocalStack, tmp_path: Path
) -> None:
    """The stand-in's payloads run in sessions of their own: stopping the stand-in does not reach them."""
    root = stack.state.parent
    work = rayhead_settings.work_dir("default", "job-2", root)
    work.mkdir(parents=True)
    seen = tmp_path / "seen"
    seen.mkdir()
    procs = [
        subprocess.Popen([sys.executable, "-c", _SLOW_TO_STOP, str(seen), str(work)], cwd=work, start_new_session=True)
        for _ in range(2)
    ]
    tmps = [payloads.private_tmp() for _ in procs]  # each payload's own TMPDIR, as the stand-in gives it
    for proc, tmp in zip(procs, tmps, strict=True):
        _STARTED.append((proc.pid, start_time(proc.pid)))
        payloads.record(rayhead_settings.payloads_dir(root), proc.pid, tmp)
        (tmp / "ray").mkdir()  # what a payload's ray.init leaves there
    deadline = time.monotonic() + 30
    while len(list(seen.glob("ready-*"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert stack.down() is True
    assert all(_gone(proc.pid) for proc in procs)
    notes = [(seen / str(proc.pid)).read_text().split() for proc in procs]
    assert [dir_there for _, dir_there in notes] == ["True", "True"], "a payload's work directory went first"
    stopped_at = sorted(float(at) for at, _ in notes)
    assert stopped_at[1] - stopped_at[0] < 1.5, f"stopped one after the other: {stopped_at}"
    assert not work.exists() and not (root / "rayhead").exists()
    assert [tmp.exists() for tmp in tmps] == [False, False], "a payload's temporary folder outlived it"


def test_down_leaves_a_process_that_took_a_recorded_payloads_pid_alone(stack: LocalStack, tmp_path: Path) -> None:
    proc = subprocess.Popen(["sleep", "300"], start_new_session=True)
    _STARTED.append((proc.pid, start_time(proc.pid)))
    records = rayhead_settings.payloads_dir(stack.state.parent)
    records.mkdir(parents=True)
    # Recorded for a process that started at tick 1, naming a folder no payload was given: both are left alone.
    (records / f"{proc.pid}.pid").write_text(f"{proc.pid} 1 {tmp_path}\n")
    assert stack.down() is True
    assert is_alive(proc.pid)
    assert tmp_path.is_dir()
