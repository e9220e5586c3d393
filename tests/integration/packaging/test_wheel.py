"""planb's wheel works alone: installed into a fresh venv, outside the checkout, its CLI answers.

The wheel is built from a copy of the files setuptools reads (``src/``, ``pyproject.toml``, the readme, the licence
and training/requirements.txt, which ``src/planb/catalog/training-requirements.txt`` links to), never in the
checkout, and installed as ``pip install planb`` installs it: with its core dependencies (PyYAML and urllib3) and
none of its extras', neither ``[timeline]``'s matplotlib nor ``[local]``'s cryptography and Google's API client.
Nothing then can read the checkout: the command runs in a folder of its own, and the package data comes through
importlib.resources. The product's commands answer without the extras; a local wing's command names its extra.
With the ``[timeline]`` extra, the installed `planb status` reads the chart's RayJob from a kube-apiserver of the
local stack's build (no stack: the control plane alone, as tests/integration/kueue starts it) and draws its timeline.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from planb import paths
from planb.local.stack.control_plane import ControlPlane
from planb.local.stack.snapshot import WITHOUT

pytestmark = pytest.mark.slow
PIP_TIMEOUT = 180
# The installs below pass --no-compile: pip's bytecode compilation of matplotlib and the rest is 4-5 CPU-seconds an
# install that nothing here reads back (each command below runs once, and Python compiles what it imports). The venvs
# are made without pip (`venv`'s ensurepip took 3.6 CPU-seconds a venv) and the checkout's pip installs into them
# (`pip --python`): what the wheel installs is the same with either pip.
#: The distributions of the extras (pyproject.toml's [project.optional-dependencies]), by PEP 503 name.
EXTRAS_ONLY = {"matplotlib", "google-api-python-client", "cryptography"}
#: The environment of every command: none of Python's variables (PYTHONPATH would let the venv import the checkout).
ENV = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON") and key != "VIRTUAL_ENV"}


def _run(
    *args: str | Path, cwd: Path, timeout: int = PIP_TIMEOUT, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], input=stdin, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False,
        env=ENV,
    )  # fmt: skip


def _venv(venv: Path, away: Path) -> Path:
    """A fresh venv (its python) with nothing installed, not even pip."""
    done = _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=away)
    assert done.returncode == 0, done.stderr
    return venv / "bin" / "python"


def _pip(python: Path, *args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """pip for the venv of `python`, run by the checkout's pip."""
    return _run(sys.executable, "-m", "pip", "--python", python, *args, cwd=cwd)


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
    requires = sorted(line.removeprefix("Requires-Dist: ") for line in metadata.splitlines() if "Requires-Dist" in line)
    assert requires == [
        "PyYAML",
        'cryptography; extra == "local"',
        'google-api-python-client; extra == "local"',
        'matplotlib; extra == "timeline"',
        "urllib3>=2.7",  # the decoded size cap of region answers relies on its decompression fixes
    ]


def test_the_installed_cli_answers_outside_the_checkout(wheel: Path, tmp_path: Path) -> None:
    venv, away = tmp_path / "venv", tmp_path / "elsewhere"
    away.mkdir()
    python = _venv(venv, away)
    done = _pip(python, "install", "-q", "--no-compile", wheel, cwd=away)
    assert done.returncode == 0, f"pip could not install the wheel and its core dependencies:\n{done.stderr}"
    listed = _pip(python, "list", "--format=freeze", cwd=away)
    installed = {line.split("==")[0].lower().replace("_", "-") for line in listed.stdout.split()}
    assert {"planb", "pyyaml", "urllib3"} <= installed, listed.stdout
    assert installed & EXTRAS_ONLY == set(), f"the core install pulled an extra's distributions:\n{listed.stdout}"
    planb = venv / "bin" / "planb"
    status = _run(planb, "status", "--help", cwd=away, timeout=60)
    assert status.returncode == 0 and "usage: planb status" in status.stdout, status.stderr
    local = _run(planb, "local", "--help", cwd=away, timeout=60)
    assert (local.returncode, local.stdout) == (2, ""), local.stderr
    assert "Fix: pip install 'planb[local]'" in local.stderr, local.stderr
    version = _run(planb, "--version", cwd=away, timeout=60)
    assert version.returncode == 0, version.stderr
    assert version.stdout.split() == ["planb", "0.1.0"]
    values = _run(planb, "values", "tpu-v6e-4x4", cwd=away, timeout=60)
    assert values.returncode == 0, values.stderr
    assert values.stdout == _run(Path(sys.executable).parent / "planb", "values", "tpu-v6e-4x4", cwd=paths.REPO).stdout


@pytest.mark.tools
def test_the_installed_status_reads_a_real_api_server_and_draws_with_its_extra(wheel: Path, tmp_path: Path) -> None:
    """`pip install 'planb[timeline]'` from the wheel, outside the checkout: `planb status -o json` reads the
    chart's RayJob from kube-apiserver (the local stack's own build, started alone) and `--timeline` draws it."""
    venv, away = tmp_path / "venv", tmp_path / "elsewhere"
    away.mkdir()
    done = _pip(_venv(venv, away), "install", "-q", "--no-compile", f"{wheel}[timeline]", cwd=away)
    assert done.returncode == 0, f"pip could not install the wheel with its [timeline] extra:\n{done.stderr}"
    chart = paths.REPO / "charts" / "planb"
    rendered = _run(paths.tool("helm"), "template", "job-1", chart, "--skip-tests", cwd=paths.REPO, timeout=60)
    assert rendered.returncode == 0, rendered.stderr
    plane = ControlPlane.throwaway(tmp_path / "local")
    kubeconfig = tmp_path / "local" / "kubeconfig"
    try:
        plane.create(kubeconfig, without=WITHOUT)
        crd = paths.manifests_dir() / "kuberay" / "crds" / "ray.io_rayjobs.yaml"
        kubectl = ("kubectl", f"--kubeconfig={kubeconfig}")
        done = _run(*kubectl, "apply", "--server-side", "-f", crd, cwd=tmp_path, timeout=60)
        assert done.returncode == 0, done.stderr
        deadline = time.monotonic() + 60
        while (
            applied := _run(*kubectl, "apply", "-f", "-", cwd=tmp_path, timeout=60, stdin=rendered.stdout)
        ).returncode:
            assert time.monotonic() < deadline, applied.stderr  # until the API server serves the new CRD
            time.sleep(0.5)
        assert applied.returncode == 0 and "rayjob.ray.io/job-1 created" in applied.stdout, applied.stderr
        planb = venv / "bin" / "planb"
        shown = _run(planb, "status", "job-1", "-o", "json", "--kubeconfig", kubeconfig, cwd=away, timeout=60)
        svg = away / "job-1.svg"
        drawn = _run(planb, "status", "job-1", "--kubeconfig", kubeconfig, "--timeline", svg, cwd=away, timeout=120)
    finally:
        plane.delete()
    assert shown.returncode == 0, shown.stdout + shown.stderr
    document = json.loads(shown.stdout)
    assert (document["kind"], document["namespace"], document["name"]) == ("JobStatus", "default", "job-1"), document
    assert drawn.returncode == 0, drawn.stdout + drawn.stderr
    assert f"timeline of default/job-1: {svg}" in drawn.stdout
    assert svg.read_text().lstrip().startswith("<?xml")
