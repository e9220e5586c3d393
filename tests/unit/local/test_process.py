"""planb.local.process: how every background part is started, recognised and stopped."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from planb.local.process import ManagedProcess, is_alive, pid_files, reap, start_time, terminate

SLEEPER = [sys.executable, "-c", "import time; print('up', flush=True); time.sleep(60)"]
IGNORES_SIGTERM = [
    sys.executable,
    "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); time.sleep(60)",
]


def _wait_for_log(proc: ManagedProcess, text: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.log_file.exists() and text in proc.log_file.read_text():
            return
        time.sleep(0.05)
    raise AssertionError(f"{proc.log_file} never showed {text!r}")


def test_start_records_pid_and_start_time_and_stop_ends_it(tmp_path: Path) -> None:
    proc = ManagedProcess("sleeper", tmp_path)
    pid = proc.start(SLEEPER)
    try:
        assert proc.pid_file.read_text().split() == [str(pid), start_time(pid)]
        assert proc.pid() == pid
        _wait_for_log(proc, "up")
    finally:
        stopped = proc.stop(timeout=5)
    assert stopped is True
    assert not is_alive(pid)
    assert not proc.pid_file.exists()
    assert proc.pid() is None
    assert proc.stop() is False


def test_a_process_that_ignores_sigterm_is_killed(tmp_path: Path) -> None:
    proc = ManagedProcess("stubborn", tmp_path)
    pid = proc.start(IGNORES_SIGTERM)
    _wait_for_log(proc, "up")  # the SIGTERM handler is installed
    began = time.monotonic()
    terminate(pid, timeout=0.5)
    assert not is_alive(pid)
    assert time.monotonic() - began < 5


def test_a_recycled_pid_is_not_ours(tmp_path: Path) -> None:
    proc = ManagedProcess("other", tmp_path)
    tmp_path.mkdir(exist_ok=True)
    # This test's own pid is alive, but it did not start at the recorded time.
    proc.pid_file.write_text(f"{os.getpid()} 1\n")
    assert proc.pid() is None


def test_a_zombie_counts_as_gone_and_reap_gives_its_exit_code(tmp_path: Path) -> None:
    proc = ManagedProcess("quitter", tmp_path)
    pid = proc.start([sys.executable, "-c", "raise SystemExit(3)"])
    deadline = time.monotonic() + 10
    while is_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    # Any Popen started meanwhile (another test's thread) runs subprocess's clean-up of dropped Popens; it must
    # not collect our child's exit code first (it did, in CI, before ManagedProcess held on to its Popen).
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    # Not reaped yet: the pid still exists, as a zombie, and is not taken for a running process.
    assert Path(f"/proc/{pid}").exists()
    assert proc.pid() is None
    assert reap(pid) == 3
    assert not Path(f"/proc/{pid}").exists()


def test_pid_files_name_only_live_processes_of_the_given_executables(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    ours = Path(sys.executable).resolve().parent
    sleeper = subprocess.Popen(SLEEPER, stdout=subprocess.DEVNULL)
    try:
        (pids / "alive.pid").write_text(f"{sleeper.pid}\n")
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
        (pids / "dead.pid").write_text(dead.stdout)
        (pids / "garbage.pid").write_text("not a pid")
        (pids / "other.txt").write_text(str(sleeper.pid))
        assert pid_files(pids, [ours]) == {"alive": sleeper.pid}
        # The same live pid under executables elsewhere: a number the kernel handed to another program.
        assert pid_files(pids, [tmp_path]) == {}
        assert pid_files(tmp_path / "none", [ours]) == {}
    finally:
        sleeper.kill()
        sleeper.wait()
