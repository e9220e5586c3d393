"""The chart's generated files (charts/planb/files/) are fresh, and helm has nothing to warn about."""

from __future__ import annotations

import ast

import pytest

from planb import paths
from planb.build import chart_files, golden
from tests.support.shared.chart.helm import Helm

FIX = "run `make values` and review the diff"


def test_training_files_are_train_py_and_the_modules_it_imports() -> None:
    """Every module of the package planb_train a training file imports is one of the files the chart ships."""
    imported = set()
    for name in chart_files.TRAIN_FILES:
        for node in ast.walk(ast.parse((paths.REPO / "training" / name).read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
    ours = [module.split(".") for module in imported if module.split(".")[0] == chart_files.TRAIN_PACKAGE]
    missing = [
        ".".join(parts)
        for parts in ours
        if "/".join(parts) + ".py" not in chart_files.TRAIN_FILES
        and "/".join([*parts, "__init__.py"]) not in chart_files.TRAIN_FILES
    ]
    assert "train.py" in chart_files.TRAIN_FILES
    assert ours and not missing, missing


@pytest.mark.parametrize("name", chart_files.TRAIN_FILES)
def test_train_py_copy_is_training_train_py(name: str) -> None:
    """files/<name> is training/<name> byte for byte, for train.py and each module it imports."""
    copy = golden.CHART_DIR / "files" / name
    assert copy.exists(), f"{copy} is missing: {FIX}"
    assert not copy.is_symlink(), f"{copy} is a symlink (helm warns about it on every command): {FIX}"
    source = (paths.REPO / "training" / name).read_bytes()
    assert copy.read_bytes() == source, f"{copy} differs from training/{name}: {FIX}"


def test_tpu_topologies_file_is_the_catalog() -> None:
    path = chart_files.TPU_TOPOLOGIES
    assert path.read_bytes() == chart_files.expected()[path], f"{path} is stale: {FIX}"


def test_files_holds_only_generated_files() -> None:
    # files/tests/ holds the `helm test` checks, written by hand (test_chart_helm_test.py runs them).
    checks = golden.CHART_DIR / "files" / "tests"
    found = [p for p in (golden.CHART_DIR / "files").rglob("*") if p.is_file() and p.parent != checks]
    assert sorted(found) == sorted(chart_files.expected()), FIX


@pytest.mark.parametrize("command", ["template", "lint"])
@pytest.mark.parametrize("mode", ["job", "queues"])
def test_helm_prints_nothing_on_stderr(helm: Helm, command: str, mode: str) -> None:
    release = ["job-1"] if command == "template" else []
    done = helm(command, *release, str(golden.CHART_DIR), "--set", f"mode={mode}")
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", f"helm {command} warned:\n{done.stderr}"
