"""What a `run` payload may execute on this machine: named jobs only, `python <ConfigMap file>`, paths inside the
work directory, and an environment built from an allowlist."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from planb import paths
from planb.local.rayhead import settings as settings_mod
from planb.local.rayhead.jobs import SUCCEEDED, JobTable, RayJobRecord
from planb.local.rayhead.launch import LaunchRefusedError, launch_for, write_config_map


def _app(tmp_path: Path, code: str = "print('ran')\n") -> tuple[Path, set[Path]]:
    return write_config_map(tmp_path, "/app", {"train.py": code}, None)


@pytest.mark.parametrize(
    "entrypoint",
    [
        "bash -c 'touch /tmp/planb-owned'",
        "/bin/sh /app/train.py",
        "python -c 'import os'",
        "python /etc/passwd",
        "python",
        "python /app/train.py; touch /tmp/planb-owned",
        "python /app/train.py && bash",
        "python /app/train.py $(id)",
        "python '/app/train.py",
    ],
)
def test_only_python_with_a_configmap_file_is_run(tmp_path: Path, entrypoint: str) -> None:
    app, files = _app(tmp_path)
    with pytest.raises(LaunchRefusedError, match=r"^planb's policy: the entrypoint .* is refused"):
        launch_for(entrypoint, {"/app": app}, {}, {}, {}, tmp_path, files)


def test_the_configmap_file_runs_with_its_arguments(tmp_path: Path) -> None:
    app, files = _app(tmp_path)
    launch = launch_for("python3 /app/train.py --epochs 3", {"/app": app}, {}, {}, {}, tmp_path, files)
    assert launch.argv == [sys.executable, str(app / "train.py"), "--epochs", "3"]


@pytest.mark.parametrize(
    ("mount_path", "items"),
    [
        ("/app/../../outside", None),
        ("/app", [{"key": "train.py", "path": "../../outside/train.py"}]),
        ("/app", [{"key": "train.py", "path": "sub/../../../outside.py"}]),
    ],
)
def test_a_path_with_dotdot_is_refused_and_nothing_is_written_outside(
    tmp_path: Path, mount_path: str, items: object
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(LaunchRefusedError, match=r"planb's policy: .*'\.\.' would leave the work directory"):
        write_config_map(work, mount_path, {"train.py": "print('x')"}, items)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) in (["work"], ["work", "work/app"])


def test_a_link_out_of_the_work_directory_is_not_followed(tmp_path: Path) -> None:
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    (work / "app").symlink_to(outside)
    with pytest.raises(LaunchRefusedError, match="leads out of the work directory"):
        write_config_map(work, "/app", {"train.py": "print('x')"}, None)
    assert list(outside.iterdir()) == []


def test_the_payload_gets_an_allowlisted_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "GOOGLE_APPLICATION_CREDENTIALS": "/home/me/key.json",
        "CLOUDSDK_AUTH_ACCESS_TOKEN": "ya29.secret",
        "AWS_SECRET_ACCESS_KEY": "secret",
        "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock",
        "KUBECONFIG": "/home/me/.kube/config",
        "RAY_ADDRESS": "ray://elsewhere:10001",
        "PLANB_STATE_DIR": "/home/me/.state",
        "LANG": "C.UTF-8",
    }.items():
        monkeypatch.setenv(name, value)
    app, files = _app(tmp_path, "import json, os\nprint(json.dumps(dict(os.environ)))\n")
    launch = launch_for(
        "python /app/train.py",
        {"/app": app},
        {"PLANB_RUNNER": "plain"},
        {"FROM_RUNTIME_ENV": "yes"},
        {"JAX_PLATFORMS": "cpu"},
        tmp_path,
        files,
    )
    table = JobTable("default/head", log=lambda _: None)
    job, _ = table.submit(
        RayJobRecord(submission_id="s", entrypoint="python /app/train.py", log_file=tmp_path / "job.log"),
        settings_mod.Payload(mode="run"),
        launch,
    )
    assert job.wait_terminal(30) and job.status == SUCCEEDED, job.logs()
    env = json.loads(job.logs().strip().splitlines()[-1])
    env.pop("LC_CTYPE", None)  # the interpreter may set it for its locale coercion
    assert env["HOME"] == str(tmp_path) and env["PYTHONPATH"] == str(tmp_path)
    assert env["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)
    assert env["PYTHONUNBUFFERED"] == "1"  # the log is written as the job runs
    assert {k: env[k] for k in ("LANG", "PLANB_RUNNER", "FROM_RUNTIME_ENV", "JAX_PLATFORMS")} == {
        "LANG": "C.UTF-8",
        "PLANB_RUNNER": "plain",
        "FROM_RUNTIME_ENV": "yes",
        "JAX_PLATFORMS": "cpu",
    }
    allowed = {"PATH", "HOME", "PYTHONPATH", "PYTHONUNBUFFERED", "LANG", "LC_ALL", "TZ", "TMPDIR"}
    assert set(env) - allowed == {"PLANB_RUNNER", "FROM_RUNTIME_ENV", "JAX_PLATFORMS"}, sorted(env)


def test_a_run_payload_names_its_jobs(tmp_path: Path) -> None:
    run = settings_mod.Payload(mode="run")
    for pattern in (None, "job-2", "default/job-*", "*/*", "default/job-2\n"):
        with pytest.raises(settings_mod.SettingsError, match=r"planb's policy: .*Fix: planb local rayhead set --run"):
            settings_mod.set_payload(pattern, run, tmp_path)
    settings_mod.set_payload("default/job-2", run, tmp_path)
    settings_mod.set_payload("*", settings_mod.Payload(seconds=3), tmp_path)
    loaded = settings_mod.load(tmp_path)
    assert loaded.payload_for("default", "job-2").mode == "run"
    assert loaded.payload_for("team-a", "job-2").seconds == 3  # the same name in another namespace is not named


def test_a_settings_file_with_a_run_default_is_refused(tmp_path: Path) -> None:
    path = settings_mod.settings_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text('{"default": {"mode": "run"}}')
    with pytest.raises(settings_mod.SettingsError, match=r"planb's policy: a run payload names each RayJob"):
        settings_mod.load(tmp_path)


def _planb(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(paths.REPO / "src"), "PLANB_STATE_DIR": str(tmp_path)}
    return subprocess.run(
        [sys.executable, "-m", "planb.cli", *args], capture_output=True, text=True, env=env, timeout=60, check=False
    )


def test_set_run_without_a_job_is_refused_naming_the_fix(tmp_path: Path) -> None:
    for args in (["--run"], ["--run", "job-2"], ["--job", "default/job-2", "--run"]):
        done = _planb(tmp_path, "local", "rayhead", "set", *args)
        assert done.returncode == 2, done
        assert "Fix: planb local rayhead set --run default/job-2" in done.stderr, done.stderr
    assert not settings_mod.settings_file(tmp_path).exists()
    done = _planb(
        tmp_path, "local", "rayhead", "set", "--run", "default/job-2", "--run", "team-a/job-3", "--env", "A=1"
    )
    assert done.returncode == 0, done.stderr
    jobs = json.loads(done.stdout)["jobs"]
    assert {name: (p["mode"], p["env"]["A"]) for name, p in jobs.items()} == {
        "default/job-2": ("run", "1"),
        "team-a/job-3": ("run", "1"),
    }
