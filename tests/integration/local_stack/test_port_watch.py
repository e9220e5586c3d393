"""planb.local.stack.port_watch stops a command once a log says a port was taken, and only then."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from planb.local.stack.port_watch import PORT_TAKEN, run_until_port_taken


def _script(tmp_path: Path, body: str) -> list[str]:
    """A shell script standing in for kwokctl: it writes component logs, then holds as kwokctl does."""
    script = tmp_path / "fake-kwokctl"
    script.write_text(f"#!/bin/sh\nmkdir -p {tmp_path}/logs\n{body}\n")
    script.chmod(0o700)
    return [str(script)]


def test_a_log_saying_the_port_was_taken_stops_the_command_and_names_the_component(tmp_path: Path) -> None:
    argv = _script(
        tmp_path,
        f'echo "starting" > {tmp_path}/logs/etcd.log\n'
        f'echo "listen tcp 127.0.0.1:6443: bind: {PORT_TAKEN}" > {tmp_path}/logs/kube-apiserver.log\n'
        "echo held; exec sleep 120",
    )
    run = run_until_port_taken(argv, env=os.environ, logs=tmp_path / "logs", timeout=60)
    assert run.taken == ("kube-apiserver",), run
    assert run.returncode is None, run  # stopped, not ended by itself
    assert "held" in run.stdout, run


def test_a_command_whose_logs_say_nothing_runs_to_its_end_with_its_exit_code(tmp_path: Path) -> None:
    argv = _script(tmp_path, f'echo "serving on 127.0.0.1:6443" > {tmp_path}/logs/kube-apiserver.log\nsleep 1\nexit 3')
    run = run_until_port_taken(argv, env=os.environ, logs=tmp_path / "logs", timeout=60)
    assert (run.returncode, run.taken) == (3, ()), run


def test_without_logs_to_watch_a_taken_port_does_not_stop_it(tmp_path: Path) -> None:
    argv = _script(tmp_path, f'echo "{PORT_TAKEN}" > {tmp_path}/logs/etcd.log\nsleep 1\necho done')
    run = run_until_port_taken(argv, env=os.environ, logs=None, timeout=60)
    assert (run.returncode, run.taken, run.stdout.strip()) == (0, (), "done"), run


def test_a_command_past_its_timeout_is_killed_and_the_timeout_raised(tmp_path: Path) -> None:
    argv = _script(tmp_path, "exec sleep 120")
    with pytest.raises(subprocess.TimeoutExpired):
        run_until_port_taken(argv, env=os.environ, logs=tmp_path / "logs", timeout=1)


class _Interrupted(Exception):
    """What the timer below raises in the middle of the run, as an interrupt or a test's timeout would."""


def test_a_run_interrupted_midway_kills_the_command_before_the_exception_goes_on(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    argv = _script(tmp_path, f"echo $$ > {pid_file}\nexec sleep 120")

    def interrupt(signum: int, frame: object) -> None:
        raise _Interrupted

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        with pytest.raises(_Interrupted):
            run_until_port_taken(argv, env=os.environ, logs=tmp_path / "logs", timeout=60)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    with pytest.raises(ProcessLookupError):  # killed and reaped, not left to run its two minutes
        os.kill(int(pid_file.read_text()), 0)
