"""`planb status --watch` outlives API errors: it shows them with their time and retries with backoff."""

from __future__ import annotations

import argparse
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from planb import cli
from planb.kube import Kube, KubeError, Obj
from planb.status import cli as status_cli


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture()
def unreachable_kubeconfig(tmp_path: Path) -> Path:
    """A kubeconfig whose API server is 127.0.0.1 on a closed port: every request is refused."""
    path = tmp_path / "kubeconfig"
    path.write_text(
        f"""apiVersion: v1
kind: Config
clusters:
- name: gone
  cluster: {{server: "https://127.0.0.1:{_closed_port()}", insecure-skip-tls-verify: true}}
users:
- name: nobody
  user: {{token: not-a-token}}
contexts:
- name: gone
  context: {{cluster: gone, user: nobody}}
current-context: gone
"""
    )
    return path


def test_watch_shows_each_error_with_its_time_and_keeps_trying(unreachable_kubeconfig: Path) -> None:
    watch = ["status", "--watch", "--interval", "0.05", "--count", "3", "--kubeconfig", str(unreachable_kubeconfig)]
    proc = subprocess.run(
        [sys.executable, "-m", "planb.cli", *watch],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    out = proc.stdout
    assert "Traceback" not in proc.stderr + out
    errors = re.findall(r"^(\d\d:\d\d:\d\d) API error \((\d+) in a row\): (.*)$", out, re.M)
    assert [int(n) for _, n, _ in errors] == [1, 2, 3], out
    assert all("API server unreachable" in message and "Connection refused" in message for _, _, message in errors)
    # Two retries announced with a growing wait; the third refresh was the last one --count allowed.
    assert re.findall(r"still watching: next try in ([\d.]+) s", out) == ["0.2", "0.4"], out
    assert out.count("planb status (Ctrl-C to stop)") == 3
    assert proc.returncode == 3, "the last refresh could not reach the cluster, so the exit status says so"


def test_ctrl_c_ends_the_watch_and_the_backoff_is_bounded(
    unreachable_kubeconfig: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 7:
            raise KeyboardInterrupt

    monkeypatch.setattr(status_cli, "watch_sleep", sleep)
    code = cli.main(["status", "--watch", "--interval", "1", "--kubeconfig", str(unreachable_kubeconfig)])
    assert code == 130
    assert waits == [2, 4, 8, 16, 30, 30, 30], "doubling from the interval, capped at MAX_BACKOFF_S"
    assert capsys.readouterr().out.count("API error") == 7


def test_a_refresh_that_succeeds_again_resets_the_backoff(
    unreachable_kubeconfig: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    kube = Kube(unreachable_kubeconfig)
    answers: list[Obj | None] = [None, None, {"items": []}, None, {"items": []}]

    def request(_method: str, path: str, *_args: object, **_kwargs: object) -> Obj:
        if path.endswith("/multikueueclusters"):  # the region tokens' warning (a MultiKueue manager's): none here
            return {"items": []}
        answer = answers.pop(0)
        if answer is None:
            raise KubeError(503, "Service Unavailable", "restarting")
        return answer

    monkeypatch.setattr(kube, "request", request)
    args = argparse.Namespace(interval=1.0, count=5, all_namespaces=False, namespace="default", job=None)
    waits: list[float] = []
    monkeypatch.setattr(status_cli, "watch_sleep", waits.append)
    assert status_cli._watch(kube, args) == 1  # the last refresh: no RayJob found
    assert waits == [2, 4, 1, 2]
    out = capsys.readouterr().out
    assert out.count("503 Service Unavailable: restarting") == 3
    assert out.count("no RayJob found") == 2


def test_backoff_never_exceeds_the_cap_nor_undercuts_a_long_interval() -> None:
    assert status_cli.backoff(2.0, 0) == 2.0
    assert status_cli.backoff(2.0, 100) == status_cli.MAX_BACKOFF_S
    assert status_cli.backoff(60.0, 3) == 60.0
    assert status_cli.backoff(0.0, 1) > 0, "a zero interval must not turn errors into a busy loop"
