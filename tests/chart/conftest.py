"""Fixtures of the chart tests: the pinned helm binary, run for real."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb import paths
from planb.catalog import golden

Helm = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="session")
def helm_bin() -> str:
    path = paths.tool("helm")
    if not path.exists():
        pytest.skip(f"pinned helm not built at {path}: run `make tools`")
    return str(path)


@pytest.fixture(scope="session")
def helm(helm_bin: str) -> Helm:
    """Run the pinned helm with the given arguments (not checked; the caller asserts)."""

    def run(*args: str, kubeconfig: str | None = None) -> subprocess.CompletedProcess[str]:
        extra = ["--kubeconfig", kubeconfig] if kubeconfig else []
        return subprocess.run(
            [helm_bin, *args, *extra], capture_output=True, text=True, check=False, cwd=paths.REPO, timeout=300
        )

    return run


@pytest.fixture(scope="session")
def template(helm: Helm) -> Callable[..., list[dict[str, Any]]]:
    """`helm template` of charts/planb parsed into objects; fails the test on a helm error."""

    def render(*args: str, release: str = golden.RELEASE) -> list[dict[str, Any]]:
        done = helm("template", release, str(golden.CHART_DIR), *args)
        assert done.returncode == 0, done.stderr
        return [doc for doc in yaml.safe_load_all(done.stdout) if doc]

    return render


@pytest.fixture()
def notes(helm: Helm, tmp_path: Path) -> Callable[..., str]:
    """NOTES.txt as helm renders it for a release (tpl of the real file in a copy of the chart)."""
    chart = tmp_path / "planb"
    shutil.copytree(golden.CHART_DIR, chart)
    (chart / "NOTES.probe").write_text((golden.CHART_DIR / "templates" / "NOTES.txt").read_text())
    (chart / "templates" / "zz-notes-probe.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes-probe\n"
        'data:\n  notes: {{ tpl (.Files.Get "NOTES.probe") . | toJson }}\n'
    )

    def render(*args: str) -> str:
        done = helm("template", "job-1", str(chart), *args)
        assert done.returncode == 0, done.stderr
        (probe,) = [d for d in yaml.safe_load_all(done.stdout) if d and d["metadata"]["name"] == "notes-probe"]
        return str(probe["data"]["notes"])

    return render
