"""The regions' state and the Ray head stand-in's logs are this user's alone, whatever the umask.

A job's log holds what its entrypoint prints, and a member's `planb local up` log what the stack says; with the
usual umask 022 both were readable by every local account. Each test sets umask 022 and checks that every directory
made is 0700 and every file 0600 (planb.local.statefile's private_dir, open_private, write_atomic).
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planb.local import regions, regions_race
from planb.local.rayhead import payloads
from planb.local.rayhead import settings as settings_mod
from planb.local.rayhead.jobs import JobTable, RayJobRecord
from planb.local.rayhead.launch import launch_for
from planb.local.rayhead.podlogs import PodLog


@pytest.fixture(autouse=True)
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("PLANB_STATE_DIR", str(tmp_path / "state"))
    (tmp_path / "state").mkdir(mode=0o700)
    old = os.umask(0o022)
    try:
        yield tmp_path / "state"
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def assert_private(state: Path, *files: Path) -> None:
    """Every file 0600, and every directory from `state` down to each file 0700."""
    for file in files:
        assert mode(file) == 0o600, file
        for folder in file.parents:
            if folder == state:
                break
            assert mode(folder) == 0o700, folder


def test_a_members_state_and_its_up_log_are_private(state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[list[str]] = []

    def popen(argv: list[str], **kwargs: Any) -> object:
        started.append(argv)
        kwargs["stdout"].write(b"a line of planb local up\n")
        return object()

    monkeypatch.setattr(regions.subprocess, "Popen", popen)
    member = regions.layout(1)[1]
    regions._planb(member, "up")
    regions._planb(member, "up")
    assert len(started) == 2
    assert (member.state / "up.log").read_bytes() == b"a line of planb local up\n"  # each start's log is its own
    assert_private(state, member.state / "up.log")


def test_the_regions_record_is_private(state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(regions, "start", lambda members: None)
    regions.up(2)
    assert_private(state, state / "regions" / "layout.json")


def test_the_converge_log_is_private(state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    done = subprocess.CompletedProcess(["ansible-playbook"], 0, "PLAY RECAP\n", "")
    monkeypatch.setattr(regions_race.subprocess, "run", lambda *a, **kw: done)
    log = state / "regions" / "converge.log"
    log.parent.mkdir(mode=0o700)
    regions_race.converge([], log=log)
    assert log.read_text() == "PLAY RECAP\n"
    assert_private(state, log)


@pytest.mark.parametrize("how", ["refused", "simulated", "run"])
def test_a_ray_jobs_log_is_private(state: Path, tmp_path: Path, how: str) -> None:
    log_file = settings_mod.logs_dir() / "default_job_rayjob-abc.log"
    record = RayJobRecord(submission_id="rayjob-abc", entrypoint="python /app/run.py", log_file=log_file)
    table = JobTable("default/head", log=lambda _: None)
    launch = None
    if how == "run":
        app = tmp_path / "app"
        app.mkdir()
        (app / "run.py").write_text("print('hello')\n")
        launch = launch_for("python /app/run.py", {"/app": app}, {}, {}, {}, tmp_path, {app / "run.py"})
    payload = settings_mod.Payload(mode="run" if how == "run" else "simulate", seconds=0.1)
    job, _ = table.submit(record, payload, launch, "not here" if how == "refused" else "")
    assert job.wait_terminal(30)
    if job.process is not None:
        job.process.wait(30)
    assert log_file.read_text()
    assert_private(state, log_file)
    table.close("test")


class Logs:
    """The kwok Logs API as PodLog.publish calls it."""

    def create(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return body


def test_a_submitter_pods_log_is_private(state: Path) -> None:
    source = settings_mod.logs_dir() / "job.log"
    target = settings_mod.logs_dir() / "pods" / "rayjob-abc-submitter.log"
    pod = {"metadata": {"name": "rayjob-abc-submitter", "namespace": "default", "uid": "u1"}}
    log = PodLog(Logs(), pod, "ray-job-submitter", source, target)  # type: ignore[arg-type]
    assert log.publish() == ""
    source.parent.mkdir(exist_ok=True)
    source.write_text("step 1\n")
    log.copy()
    assert target.read_text().endswith(" stdout F step 1\n")
    assert_private(state, target)


def test_a_payloads_pid_record_is_private(state: Path) -> None:
    directory = settings_mod.payloads_dir()
    payloads.record(directory, os.getpid())
    assert_private(state, directory / f"{os.getpid()}.pid")
