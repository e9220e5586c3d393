"""`planb status`'s exit codes (planb.errors, docs/pending-jobs.md "Exit codes"): 0 ok, 1 a job in a failed state
(or --expect not met), 2 a command line it cannot use, 3 a cluster it cannot read; `planb --version`; and no
terminal codes in a pipe."""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import pty
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from planb import cli
from planb.errors import EXIT_FAILED, EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE
from planb.status import cli as status_cli
from tests.support.shared import status_job

CLEAR = "\033[2J\033[H"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture()
def unreachable(tmp_path: Path) -> Path:
    """A kubeconfig whose API server is a closed loopback port."""
    path = tmp_path / "kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f'clusters:\n- name: gone\n  cluster: {{server: "https://127.0.0.1:{_closed_port()}", '
        "insecure-skip-tls-verify: true}\n"
        "users:\n- name: nobody\n  user: {token: not-a-token}\n"
        "contexts:\n- name: gone\n  context: {cluster: gone, user: nobody}\ncurrent-context: gone\n"
    )
    return path


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["status", "--expect", "job-1"], "--expect 'job-1' is not JOB=FLAVOR"),
        (["status", "-o", "json", "-w"], "-o json prints one document: not with --watch"),
        (["status", "--timeline", "t.svg"], "--timeline t.svg draws one job"),
        (["status", "job-1", "--timeline", "t.pdf"], "the file must end in .svg or .png"),
    ],
)
def test_a_command_line_it_cannot_use_exits_2_before_reading_the_cluster(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "no-kubeconfig"
    assert cli.main([*argv, "--kubeconfig", str(missing)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err and str(missing) not in err, err


def test_argparse_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["status", "-o", "xml"])
    assert exc.value.code == EXIT_USAGE
    assert "invalid choice: 'xml'" in capsys.readouterr().err


def test_a_cluster_it_cannot_read_exits_3(
    unreachable: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["status", "--kubeconfig", str(tmp_path / "none")]) == EXIT_UNREACHABLE
    assert f"no kubeconfig at {tmp_path / 'none'}" in capsys.readouterr().err
    assert cli.main(["status", "-o", "json", "--kubeconfig", str(unreachable)]) == EXIT_UNREACHABLE
    err = capsys.readouterr().err
    assert "API server unreachable" in err and "Connection refused" in err, err


def test_a_job_in_a_failed_state_exits_1_and_a_healthy_one_0(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    status_job.job_m(monkeypatch)  # the clock
    args = argparse.Namespace(all_namespaces=False, namespace="default", job="job-m", output=None, timeline=None)
    assert status_cli._once(status_job.JobKube(status_job.objects()), args) == EXIT_OK  # type: ignore[arg-type]
    failed = {
        **status_job.RAYJOB,
        "status": {"jobDeploymentStatus": "Failed", "jobStatus": "FAILED", "message": "train.py exited 1"},
    }
    kube = status_job.JobKube({**status_job.objects(), "/rayjobs": [failed]})
    assert status_cli._once(kube, args) == EXIT_FAILED  # type: ignore[arg-type]
    assert "KubeRay: Failed (Ray job FAILED): train.py exited 1" in capsys.readouterr().out
    deactivated = {**status_job.PARENT_WL, "spec": {"active": False}}
    kube = status_job.JobKube({**status_job.objects(), "/workloads": [deactivated, *status_job.WORKLOADS[1:]]})
    assert status_cli._once(kube, args) == EXIT_FAILED  # type: ignore[arg-type]


def test_version_prints_the_package_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "planb.cli", "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout) == (0, f"planb {importlib.metadata.version('planb')}\n")


def _watch_once(kubeconfig: Path, stdout: int) -> int:
    argv = ["status", "-w", "--count", "1", "--interval", "0", "--kubeconfig", str(kubeconfig)]
    proc = subprocess.Popen([sys.executable, "-m", "planb.cli", *argv], stdout=stdout, stderr=subprocess.DEVNULL)
    return proc.wait(timeout=60)


def test_watch_clears_the_screen_on_a_terminal_only(unreachable: Path) -> None:
    piped = subprocess.run(
        [sys.executable, "-m", "planb.cli", "status", "-w", "--count", "1", "--kubeconfig", str(unreachable)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert piped.returncode == EXIT_UNREACHABLE and "planb status (Ctrl-C to stop)" in piped.stdout
    assert "\033" not in piped.stdout, repr(piped.stdout)
    leader, follower = pty.openpty()
    try:
        assert _watch_once(unreachable, follower) == EXIT_UNREACHABLE
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal's other end is closed: all is read
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(leader)
    assert seen.decode().startswith(CLEAR), repr(seen[:80])
