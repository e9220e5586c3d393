"""planb's wheel works alone (issue 52, item 1): installed into a fresh venv, outside the checkout, its CLI answers.

The wheel is built from a copy of the files setuptools reads (``src/``, ``pyproject.toml``, the readme, the licence
and training/requirements.txt, which ``src/planb/catalog/training-requirements.txt`` links to), never in the
checkout, and installed without planb's dependencies but PyYAML and urllib3, all that ``planb values`` imports.
Nothing then can read the checkout: the command runs in a folder of its own, and the package data comes through
importlib.resources.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from planb import paths

pytestmark = pytest.mark.slow
PIP_TIMEOUT = 180
#: The environment of every command: none of Python's variables (PYTHONPATH would let the venv import the checkout).
ENV = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON") and key != "VIRTUAL_ENV"}


def _run(*args: str | Path, cwd: Path, timeout: int = PIP_TIMEOUT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False, env=ENV
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tree = tmp_path_factory.mktemp("planb-source")
    shutil.copytree(
        paths.REPO / "src" / "planb",
        tree / "src" / "planb",
        symlinks=True,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    for name in ("pyproject.toml", "README.md", "LICENSE", "training/requirements.txt"):
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(paths.REPO / name, tree / name)
    done = _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", "dist", ".", cwd=tree)
    assert done.returncode == 0, done.stdout + done.stderr
    (built,) = (tree / "dist").glob("planb-*.whl")
    return built


def test_the_wheel_carries_its_data_and_licence(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = next(archive.read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
    assert "planb/catalog/training-requirements.txt" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "License-Expression: Apache-2.0" in metadata


def test_the_installed_cli_answers_outside_the_checkout(wheel: Path, tmp_path: Path) -> None:
    venv, away = tmp_path / "venv", tmp_path / "elsewhere"
    away.mkdir()
    done = _run(sys.executable, "-m", "venv", venv, cwd=away)
    assert done.returncode == 0, done.stderr
    python = venv / "bin" / "python"
    done = _run(python, "-m", "pip", "install", "-q", "--no-deps", wheel, cwd=away)
    assert done.returncode == 0, done.stderr
    done = _run(python, "-m", "pip", "install", "-q", "PyYAML", "urllib3", cwd=away)
    assert done.returncode == 0, f"pip could not install PyYAML and urllib3 from its index:\n{done.stderr}"
    planb = venv / "bin" / "planb"
    version = _run(planb, "--version", cwd=away, timeout=60)
    assert version.returncode == 0, version.stderr
    assert version.stdout.split() == ["planb", "0.1.0"]
    values = _run(planb, "values", "tpu-v6e-4x4", cwd=away, timeout=60)
    assert values.returncode == 0, values.stderr
    assert values.stdout == _run(Path(sys.executable).parent / "planb", "values", "tpu-v6e-4x4", cwd=paths.REPO).stdout
