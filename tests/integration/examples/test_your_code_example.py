"""examples/your-code: the team's program keeps planb's contract on its own (docs/your-code.md), run as the job's
entrypoint would be, on this machine's CPU; and its image recipe stays on the chart's Ray image and planb's pins.

The e2e test (tests/e2e/topologies/test_your_code.py) runs the same program through the chart on the local stack."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import yaml

from planb import paths
from planb.status.progress import parse_records

EXAMPLE = paths.REPO / "examples" / "your-code"
PROGRAM = EXAMPLE / "team" / "regression.py"


def wait_for_checkpoint(ckpt: Path, proc: subprocess.Popen[str]) -> None:
    """Until the program's first checkpoint is there (it fails the test if the program ended first)."""
    deadline = time.monotonic() + 120
    while not any(ckpt.glob("step-*.npz")):
        assert proc.poll() is None, proc.communicate()[0][-2000:]
        assert time.monotonic() < deadline, "no checkpoint within 120 s"
        time.sleep(0.2)


def _run(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "JAX_PLATFORMS": "cpu",
        "PLANB_CHECKPOINT_DIR": str(tmp_path / "ckpt"),
        "PLANB_NOTICE_FILE": str(tmp_path / "stop"),
    }
    return subprocess.Popen(
        [sys.executable, str(PROGRAM), "--save-every", "50", "--report-every", "10", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_stopped_by_the_notice_file_it_saves_ends_75_and_resumes_with_no_step_lost(tmp_path: Path) -> None:
    first = _run(tmp_path, "--steps", "100000000")
    ckpt = tmp_path / "ckpt"
    wait_for_checkpoint(ckpt, first)
    (tmp_path / "stop").touch()  # what the chart's preStop hook does
    out, _ = first.communicate(timeout=60)
    assert first.returncode == 75, out[-2000:]
    stopped = re.search(r"stop notice at step (\d+): checkpoint step \1 saved; stopping", out)
    assert stopped, out[-2000:]
    at = int(stopped.group(1))
    assert (tmp_path / "stop.saved").exists()  # the hook's wait ends at once
    assert sorted(ckpt.glob("step-*.npz"))[-1].name == f"step-{at:09d}.npz"

    (tmp_path / "stop").unlink()
    (tmp_path / "stop.saved").unlink()
    second = _run(tmp_path, "--steps", str(at + 30))
    out2, _ = second.communicate(timeout=120)
    assert second.returncode == 0, out2[-2000:]
    assert f"resumed from checkpoint step {at}; 0 step(s) lost" in out2, out2[-2000:]
    assert "training complete" in out2
    # planb status reads the records of the newest run: the resume, then the step reached, tokens counted.
    record = parse_records(out2)
    assert record is not None and record.step == at + 30 and record.tokens == (at + 30) * 256
    ((resume),) = record.resumes
    assert (resume.step, resume.lost, resume.lost_s) == (at, 0, 0.0)
    assert record.kept_s is not None and resume.kept_s is not None and record.kept_s > resume.kept_s > 0


def test_sigterm_is_a_notice_too(tmp_path: Path) -> None:
    proc = _run(tmp_path, "--steps", "100000000")
    wait_for_checkpoint(tmp_path / "ckpt", proc)
    proc.terminate()
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 75, out[-2000:]
    assert re.search(r"stop notice at step (\d+): checkpoint step \1 saved; stopping", out), out[-2000:]


def test_the_image_is_the_charts_ray_and_planbs_pins() -> None:
    values = yaml.safe_load((paths.REPO / "charts" / "planb" / "values.yaml").read_text())
    froms = [line.split()[1] for line in (EXAMPLE / "Dockerfile").read_text().splitlines() if line.startswith("FROM ")]
    assert froms == [values["job"]["image"]]
    pins = [line for line in (EXAMPLE / "team" / "requirements.txt").read_text().splitlines() if "==" in line]
    job_pip = set(values["job"]["pip"])
    assert "jax[tpu]==0.8.2" in pins and "jax[tpu]==0.8.2" in job_pip
    assert {p for p in pins if p.split("==")[0] in {"jax[tpu]", "gcsfs"}} <= job_pip
