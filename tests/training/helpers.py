"""Run training/train.py as a process (shared by the tests)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

TRAIN_PY = Path(__file__).resolve().parents[2] / "training" / "train.py"


def clean_env(extra: Mapping[str, str]) -> dict[str, str]:
    """The current environment without PLANB_* / RAY_ADDRESS, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANB_") and k != "RAY_ADDRESS"}
    env.update(extra)
    return env


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
