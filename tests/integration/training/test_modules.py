"""train.py's package ``planb_train``: found by train.py run as a script from any directory, and imported by a Ray
worker, which Ray ships ``train_func`` pickled by reference.

The chart mounts train.py and the package together at /app and puts /app on the containers' PYTHONPATH. Ray puts the
driver script's resolved directory on its workers' sys.path, which on a ConfigMap volume is /app/..<timestamp>, named
differently in each pod; so a worker finds the package through PYTHONPATH alone, as the worker here does.
"""

from __future__ import annotations

import pickletools
import subprocess
import sys
from pathlib import Path

import pytest
from planb_train.runners.ray_train import train_func

from tests.support.shared.training import TRAIN_PY, TRAINING, clean_env

#: Run in a process started in an empty directory: unpickle train_func from stdin, then run the loop it calls for 3
#: steps on CPU.
WORKER = """
import pickle, sys
func = pickle.loads(sys.stdin.buffer.read())
from planb_train.config import TrainConfig
from planb_train.loop import train_loop
result = train_loop(TrainConfig(accelerator="cpu", accelerator_type="", epochs=3, log_every=1))
print("end_step", result.end_step, func.__module__)
"""


def pickled_train_func() -> bytes:
    from ray import cloudpickle

    return bytes(cloudpickle.dumps(train_func))


def test_train_func_is_pickled_by_reference() -> None:
    """What Ray sends a worker names the function's module and carries none of the package's code."""
    pickled = pickled_train_func()
    names = [arg for op, arg, _ in pickletools.genops(pickled) if op.name in ("SHORT_BINUNICODE", "BINUNICODE")]
    assert "planb_train.runners.ray_train" in names and "train_func" in names
    assert len(pickled) < 200, len(pickled)  # a reference, not a module's functions by value


@pytest.mark.slow
def test_a_worker_with_the_package_on_pythonpath_runs_train_func(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WORKER],
        input=pickled_train_func(),
        cwd=tmp_path,
        env=clean_env({"JAX_PLATFORMS": "cpu", "PYTHONPATH": str(TRAINING)}),
        capture_output=True,
        timeout=180,
        check=False,
    )
    out = done.stdout.decode() + done.stderr.decode()
    assert done.returncode == 0, out[-4000:]
    assert "end_step 3 planb_train.runners.ray_train" in out, out[-4000:]


def test_a_worker_without_the_package_cannot_unpickle_train_func(tmp_path: Path) -> None:
    """The control: without PYTHONPATH (the chart's /app) nothing else brings the package to a worker."""
    done = subprocess.run(
        [sys.executable, "-c", "import pickle, sys; pickle.loads(sys.stdin.buffer.read())"],
        input=pickled_train_func(),
        cwd=tmp_path,
        env=clean_env({"PYTHONPATH": ""}),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "No module named 'planb_train'" in done.stderr.decode()


def test_train_py_run_from_another_directory_finds_its_package(tmp_path: Path) -> None:
    """As the job's ``python /app/train.py``: the script's own directory holds the package, no PYTHONPATH needed."""
    done = subprocess.run(
        [sys.executable, str(TRAIN_PY), "--print-config", "--model", "transformer"],
        cwd=tmp_path,
        env=clean_env({"PYTHONPATH": ""}),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"epochs": 200' in done.stdout
