"""Load training/train.py as a module, run it as a process, or its command line in this process (shared by the
tests)."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from types import ModuleType

import pytest

TRAINING = Path(__file__).resolve().parents[3] / "training"
TRAIN_PY = TRAINING / "train.py"


def jax_cache_dir(user: str) -> Path:
    """JAX's persistent compilation cache for `user` (the training tests, the e2e tier's payloads): PLANB_JAX_CACHE_DIR
    if set, else a folder per jax and jaxlib version beside the pinned tools' cache, outside the checkout
    (${PLANB_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/planb}, hack/build-tools.sh), so that a warm machine compiles
    nothing the last run compiled. The cache holds XLA's output keyed by the computation, its devices, the compiler
    options and JAX's version: a run computes exactly what it would after compiling."""
    if os.environ.get("PLANB_JAX_CACHE_DIR"):
        return Path(os.environ["PLANB_JAX_CACHE_DIR"]) / user
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "planb"
    root = Path(os.environ.get("PLANB_CACHE_DIR") or cache)
    versions = f"jax-{metadata.version('jax')}-jaxlib-{metadata.version('jaxlib')}"  # without importing JAX
    return root / "jax-compilation-cache" / versions / user


def load_train(name: str) -> ModuleType:
    """training/train.py, the job's command line, imported by path as module `name` (a script, not a module of a
    package); it imports the package planb_train, which pytest finds on its pythonpath (pyproject.toml) as the job
    finds it on PYTHONPATH."""
    spec = importlib.util.spec_from_file_location(name, TRAIN_PY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def clean_env(extra: Mapping[str, str]) -> dict[str, str]:
    """The current environment without PLANB_* / RAY_ADDRESS, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANB_") and k != "RAY_ADDRESS"}
    env.update(extra)
    return env


def start_script(extra_env: Mapping[str, str], *, output: bool = False) -> subprocess.Popen[str]:
    """train.py started in its own process group (a test stops it with os.killpg); its output piped when `output`."""
    return subprocess.Popen(
        [sys.executable, str(TRAIN_PY)],
        env=clean_env(extra_env),
        stdout=subprocess.PIPE if output else subprocess.DEVNULL,
        stderr=subprocess.STDOUT if output else subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )


def start_logged(extra_env: Mapping[str, str], log: Path, launcher: Path | None = None) -> subprocess.Popen[bytes]:
    """train.py started in its own process group, its output (stdout and stderr) written to ``log``: a test reads it
    while the process runs, and no pipe fills up while the test waits on another process. With ``launcher``, Python
    runs that script with train.py's path as its first argument (it runs train.py itself)."""
    with log.open("wb") as out:  # the child holds its own copy of the file
        return subprocess.Popen(
            [sys.executable, *([str(launcher)] if launcher else []), str(TRAIN_PY)],
            env=clean_env(extra_env),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def run_script(
    extra_env: Mapping[str, str], args: tuple[str, ...] = (), timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    """Run train.py in its own process group; on timeout kill the whole group (Ray's daemons too)."""
    proc = subprocess.Popen(
        [sys.executable, str(TRAIN_PY), *args],
        env=clean_env(extra_env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"train.py did not finish in {timeout} s; output:\n{out[-4000:]}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, "")


def run_main(
    train: ModuleType, extra_env: Mapping[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> subprocess.CompletedProcess[str]:
    """train.py's command line (`main`, no arguments) in this process, in the environment `run_script` gives a
    process: its exit status, and what it printed (stdout, then stderr) as stdout."""
    for name in os.environ.keys() - clean_env({}).keys():
        monkeypatch.delenv(name)
    for name, value in extra_env.items():
        monkeypatch.setenv(name, value)
    capsys.readouterr()
    code = train.main([])
    printed = capsys.readouterr()
    return subprocess.CompletedProcess([str(TRAIN_PY)], code, printed.out + printed.err, "")
