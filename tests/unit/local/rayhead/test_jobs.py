"""The Ray head stand-in's job table and payloads, with real host processes (no cluster needed)."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import pytest

from planb.local.rayhead import settings as settings_mod
from planb.local.rayhead.jobs import FAILED, RUNNING, STOPPED, SUCCEEDED, JobTable, RayJobRecord
from planb.local.rayhead.launch import launch_for


def record(tmp_path: Path, submission_id: str = "rayjob-abc") -> RayJobRecord:
    return RayJobRecord(submission_id=submission_id, entrypoint="python /app/train.py", log_file=tmp_path / "job.log")


def test_a_simulated_payload_runs_then_succeeds(tmp_path: Path) -> None:
    table = JobTable("default/head", log=lambda _: None)
    job, new = table.submit(record(tmp_path), settings_mod.Payload(seconds=0.5), None)
    assert new and job.status == RUNNING
    assert job.info()["status"] == RUNNING and "end_time" not in job.info()
    assert job.wait_terminal(5)
    assert job.status == SUCCEEDED and job.end_time >= job.start_time
    assert "simulated payload" in job.logs()


def test_a_simulated_failure_carries_its_message(tmp_path: Path) -> None:
    table = JobTable("default/head", log=lambda _: None)
    job, _ = table.submit(record(tmp_path), settings_mod.Payload(seconds=0.1, fail="loss is NaN"), None)
    assert job.wait_terminal(5)
    assert (job.status, job.message) == (FAILED, "loss is NaN")


def test_a_second_submission_of_the_same_id_is_the_first_job(tmp_path: Path) -> None:
    table = JobTable("default/head", log=lambda _: None)
    first, _ = table.submit(record(tmp_path), settings_mod.Payload(seconds=5), None)
    again, new = table.submit(record(tmp_path), settings_mod.Payload(seconds=0), None)
    assert again is first and not new
    assert table.stop(first.submission_id)
    assert first.status == STOPPED
    assert table.delete(first.submission_id) and table.get(first.submission_id) is None


def test_a_running_payload_dies_with_its_head(tmp_path: Path) -> None:
    table = JobTable("default/head", log=lambda _: None)
    app = tmp_path / "app"
    app.mkdir()
    (app / "sleep.py").write_text("import time\ntime.sleep(60)\n")
    launch = launch_for("python /app/sleep.py", {"/app": app}, {}, {}, {}, tmp_path, {app / "sleep.py"})
    job, _ = table.submit(record(tmp_path), settings_mod.Payload(mode="run"), launch)
    assert job.status == RUNNING and job.process is not None
    table.close("test")
    assert job.status == FAILED and "head went away" in job.message
    job.process.wait(5)  # SIGTERM was sent; the stand-in reaps it in a thread of its own (KILL_GRACE_SECONDS)
    assert job.process.returncode == -signal.SIGTERM
    _, new = table.submit(record(tmp_path, "other"), settings_mod.Payload(), None)
    assert not new  # a closed head takes no more jobs


def test_the_entrypoint_runs_with_its_mounts_environment_and_exit_code(tmp_path: Path) -> None:
    app = tmp_path / "work" / "app"
    app.mkdir(parents=True)
    (app / "main.py").write_text(
        "import os, sys\nprint('GREETING', os.environ['GREETING'], os.environ['FROM_RUNTIME_ENV'], sys.argv[1:])\n"
        "sys.exit(int(os.environ['EXIT_CODE']))\n"
    )
    launch = launch_for(
        "python /app/main.py --flag /app",
        {"/app": app},
        {"GREETING": "head", "EXIT_CODE": "0"},
        {"FROM_RUNTIME_ENV": "yes"},
        {"GREETING": "override"},
        tmp_path,
        {app / "main.py"},
    )
    assert launch.argv[0] == sys.executable and launch.argv[1] == str(app / "main.py")
    table = JobTable("default/head", log=lambda _: None)
    job, _ = table.submit(record(tmp_path), settings_mod.Payload(mode="run"), launch)
    assert job.wait_terminal(30)
    assert job.status == SUCCEEDED, job.logs()
    assert f"GREETING override yes ['--flag', '{app}']" in job.logs()

    failing = launch_for(
        "python /app/main.py",
        {"/app": app},
        {"GREETING": "x", "EXIT_CODE": "3"},
        {"FROM_RUNTIME_ENV": "y"},
        {},
        tmp_path,
        {app / "main.py"},
    )
    job2, _ = table.submit(record(tmp_path, "second"), settings_mod.Payload(mode="run"), failing)
    assert job2.wait_terminal(30)
    assert job2.status == FAILED
    assert job2.message.startswith("Job entrypoint command failed with exit code 3")


def test_settings_round_trip_and_pattern_order(tmp_path: Path) -> None:
    settings_mod.set_payload("job-2", settings_mod.Payload(seconds=5), tmp_path)
    settings_mod.set_payload("team-*/*", settings_mod.Payload(seconds=7), tmp_path)
    loaded = settings_mod.load(tmp_path)
    assert loaded.payload_for("default", "job-2").seconds == 5
    assert loaded.payload_for("team-a", "job-9").seconds == 7
    assert loaded.payload_for("default", "job-1") == settings_mod.Payload()
    settings_mod.set_payload("job-2", None, tmp_path)
    assert "job-2" not in settings_mod.load(tmp_path).jobs


def test_an_unreadable_settings_file_names_the_fix(tmp_path: Path) -> None:
    path = settings_mod.settings_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text('{"default": {"mode": "fly"}}')
    with pytest.raises(settings_mod.SettingsError, match=r"mode 'fly'.*rm "):
        settings_mod.load(tmp_path)


def test_simulated_payloads_end_when_stopped_early(tmp_path: Path) -> None:
    table = JobTable("default/head", log=lambda _: None)
    job, _ = table.submit(record(tmp_path), settings_mod.Payload(seconds=30), None)
    started = time.monotonic()
    table.stop(job.submission_id)
    assert job.wait_terminal(1) and time.monotonic() - started < 5
    assert job.status == STOPPED
