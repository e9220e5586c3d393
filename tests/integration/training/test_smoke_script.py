"""training/smoke.py, the smoke job's entrypoint (job.smoke.enabled): PASS when it may write, read back and delete
one object under PLANB_CHECKPOINT_DIR, FAIL naming the step otherwise, and its write on a Ray worker."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.shared.training import TRAINING, clean_env

SMOKE_PY = TRAINING / "smoke.py"


def run_smoke(env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SMOKE_PY)],
        env=clean_env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_it_writes_reads_back_and_deletes_one_object_then_passes(tmp_path: Path) -> None:
    directory = tmp_path / "checkpoints" / "default" / "job-smoke"
    done = run_smoke({"PLANB_CHECKPOINT_DIR": str(directory), "PLANB_RUN_ID": "default/job-smoke"})
    assert done.returncode == 0, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith(f"planb smoke: PASS: wrote {directory}/planb-smoke-"), done.stdout
    assert "read it back from" in last and "deleted it" in last
    # Nothing is left behind but the directory it made.
    assert directory.is_dir() and list(directory.iterdir()) == []


@pytest.mark.parametrize(
    ("where", "says"),
    [
        ("", "PLANB_CHECKPOINT_DIR is empty: set job.training.checkpointDir"),
        ("a-file/dir", "write of "),
    ],
    ids=["unset", "not-writable"],
)
def test_a_failed_step_prints_fail_naming_it_and_exits_non_zero(tmp_path: Path, where: str, says: str) -> None:
    (tmp_path / "a-file").write_text("not a directory")
    done = run_smoke({"PLANB_CHECKPOINT_DIR": str(tmp_path / where) if where else ""})
    assert done.returncode == 1, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("planb smoke: FAIL: ") and says in last, done.stdout
    assert "PASS" not in done.stdout


@pytest.mark.slow
def test_with_a_ray_cluster_a_ray_task_writes_the_object(tmp_path: Path) -> None:
    """RAY_ADDRESS set: the write is a Ray task (on GKE the worker's, as the head offers no CPU); `local` has
    ray.init() start a private single-machine cluster, since this machine has no RayCluster to join."""
    env = {
        "PLANB_CHECKPOINT_DIR": str(tmp_path / "ck"),
        "RAY_ADDRESS": "local",
        "RAY_USAGE_STATS_ENABLED": "0",
        "PLANB_SMOKE_TIMEOUT": "120",
    }
    done = run_smoke(env, timeout=240)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "RAY_ADDRESS is unset" not in done.stdout
    assert "planb smoke: PASS: wrote " in done.stdout, done.stdout[-3000:]
