"""Fixtures of the chart tests: the pinned helm binary, run for real.

`helm template` of the checkout's chart is a pure function of its arguments and of the files they name (the
chart itself does not change during a session, and its templates draw no random or time-dependent values), so
the session runs each such render once: a second test with the same arguments and the same file contents reads
the first one's output. Renders of other charts (copies a test makes and may change) and every other helm
command run each time.
"""

from __future__ import annotations

import copy
import hashlib
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb import paths
from planb.build import golden

Helm = Callable[..., subprocess.CompletedProcess[str]]

#: How the chart's own path may be spelled in a helm command (tests run helm from the repository root).
REPO_CHART = frozenset({str(golden.CHART_DIR), str(golden.CHART_DIR.relative_to(paths.REPO))})

#: The YAML loader for rendered output: libyaml's, where PyYAML has it (the same safe constructor, in C).
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def render_key(args: tuple[str, ...]) -> tuple[str, ...] | None:
    """The session's key for `helm ARGS` when it is a render of the checkout's chart, else None: the arguments,
    each file among them standing with a digest of its contents."""
    if len(args) < 3 or args[0] != "template" or args[2] not in REPO_CHART:
        return None
    return tuple(
        f"{arg}#{hashlib.sha256(Path(arg).read_bytes()).hexdigest()}" if Path(arg).is_file() else arg for arg in args
    )


@pytest.fixture(scope="session")
def helm_bin() -> str:
    path = paths.tool("helm")
    if not path.exists():
        pytest.skip(f"pinned helm not built at {path}: run `make tools`")
    return str(path)


@pytest.fixture(scope="session")
def helm(helm_bin: str) -> Helm:
    """Run the pinned helm with the given arguments (not checked; the caller asserts); a render of the checkout's
    chart runs once per session for the same arguments and files (`render_key`)."""
    renders: dict[tuple[str, ...], subprocess.CompletedProcess[str]] = {}

    def execute(args: tuple[str, ...], kubeconfig: str | None) -> subprocess.CompletedProcess[str]:
        extra = ["--kubeconfig", kubeconfig] if kubeconfig else []
        return subprocess.run(
            [helm_bin, *args, *extra], capture_output=True, text=True, check=False, cwd=paths.REPO, timeout=300
        )

    def run(*args: str, kubeconfig: str | None = None) -> subprocess.CompletedProcess[str]:
        key = None if kubeconfig else render_key(args)
        if key is None:
            return execute(args, kubeconfig)
        if key not in renders:
            renders[key] = execute(args, None)
        return copy.copy(renders[key])

    return run


@pytest.fixture(scope="session")
def template(helm: Helm) -> Callable[..., list[dict[str, Any]]]:
    """`helm template` of charts/planb parsed into objects (new ones each call); fails the test on a helm error."""

    def render(*args: str, release: str = golden.RELEASE) -> list[dict[str, Any]]:
        done = helm("template", release, str(golden.CHART_DIR), *args)
        assert done.returncode == 0, done.stderr
        return [doc for doc in yaml.load_all(done.stdout, Loader=YAML_LOADER) if doc]

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
