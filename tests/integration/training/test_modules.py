"""train.py's sibling modules: found when train.py is loaded by path, and shipped to Ray workers by value.

The chart mounts training/*.py together at /app. Ray puts the driver script's resolved directory on its
workers' sys.path, which on a ConfigMap volume is /app/..<timestamp>, named differently in each pod; so the
modules travel inside the pickled ``train_func`` (as the one-file script's ``__main__`` did), and a process
that cannot import them still runs it.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.shared.training import TRAIN_PY, TRAINING, clean_env

#: planb_train_aot compiles the step for a slice this machine lacks (planb.build.aot): the job never imports it.
MODULES = sorted(path.stem for path in TRAINING.glob("planb_train_*.py") if path.stem != "planb_train_aot")

#: Run in a process whose sys.path has no training/: unpickle train_func from stdin, then run the loop it
#: carries for 3 steps on CPU.
WORKER = """
import importlib.util, pickle, sys
assert importlib.util.find_spec("planb_train_loop") is None, "training/ is importable here"
func = pickle.loads(sys.stdin.buffer.read())
assert not [name for name in sys.modules if name.startswith("planb_train_")], "unpickling imported a module"
config = func.__globals__["TrainConfig"](accelerator="cpu", accelerator_type="", epochs=3, log_every=1)
result = func.__globals__["train_loop"](config)
print("end_step", result.end_step)
"""


@pytest.fixture
def by_value(train: ModuleType) -> Iterator[list[str]]:
    """ship_modules_by_value() as run_ray calls it before Ray pickles train_func; undone afterwards."""
    from ray import cloudpickle

    runners = sys.modules[train.train_func.__module__]
    names: list[str] = runners.ship_modules_by_value()
    yield names
    for name in names:
        cloudpickle.unregister_pickle_by_value(sys.modules[name])  # type: ignore[no-untyped-call]


def test_every_module_is_shipped_by_value(by_value: list[str]) -> None:
    assert MODULES and set(MODULES) <= set(by_value)


@pytest.mark.slow
def test_a_worker_without_the_modules_runs_train_func(train: ModuleType, by_value: list[str], tmp_path: Path) -> None:
    from ray import cloudpickle

    done = subprocess.run(
        [sys.executable, "-c", WORKER],
        input=cloudpickle.dumps(train.train_func),
        cwd=tmp_path,
        env=clean_env({"JAX_PLATFORMS": "cpu"}),
        capture_output=True,
        timeout=180,
        check=False,
    )
    out = done.stdout.decode() + done.stderr.decode()
    assert done.returncode == 0, out[-4000:]
    assert "end_step 3" in out, out[-4000:]


@pytest.mark.slow
def test_train_py_loaded_by_path_finds_its_modules(tmp_path: Path) -> None:
    """As hack/gpu/throughput.py loads it: by path, with training/ not on sys.path."""
    code = (
        "import importlib.util, sys\n"
        "spec = importlib.util.spec_from_file_location('loaded_train', sys.argv[1])\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "sys.modules[spec.name] = module\n"
        "spec.loader.exec_module(module)\n"
        "print(module.load_config({'PLANB_MODEL': 'transformer'}).epochs)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(TRAIN_PY)],
        cwd=tmp_path,
        env=clean_env({}),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "200"
