"""Shared fixtures: the real local stack (kwok control plane + Kueue) and kubectl against it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from planb import paths
from planb.localstack.stack import LocalStack

Kubectl = Callable[..., subprocess.CompletedProcess[str]]

#: Fixtures that hand a test a pinned binary from .tools; a test using one is marked `tools`.
TOOL_FIXTURES = frozenset({"helm_bin"})
#: The fixture every local-stack fixture rests on; a test using it is marked `stack`, so that the
#: `-m "not stack"` half of `make test` (hack/test.sh), which runs beside the stack half, never starts one.
STACK_FIXTURES = frozenset({"_stack_session"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that needs the pinned toolchain (so `make test-fast` leaves it out) or the stack."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if TOOL_FIXTURES & names:
            item.add_marker(pytest.mark.tools)
        if STACK_FIXTURES & names:
            item.add_marker(pytest.mark.stack)


@pytest.fixture(scope="session", autouse=True)
def _tool_path() -> None:
    """The pinned binaries and the venv's console scripts come first on PATH."""
    venv_bin = Path(sys.executable).parent
    os.environ["PATH"] = os.pathsep.join([str(paths.tools_dir() / "bin"), str(venv_bin), os.environ.get("PATH", "")])


@pytest.fixture(scope="session")
def _stack_session() -> Iterator[LocalStack]:
    stack = LocalStack()
    started = stack.up()
    yield stack
    # Stop a stack this session started. A stack that ran before is reused, but tests that need a
    # fresh one (down, check mode on a new cluster, molecule's local scenario) take it down.
    if started:
        stack.down()


@pytest.fixture()
def local_stack(_stack_session: LocalStack) -> Path:
    """The kubeconfig of a running local stack (re-created if a test took it down)."""
    _stack_session.up()
    return _stack_session.kubeconfig


@pytest.fixture()
def kubectl(local_stack: Path) -> Kubectl:
    """Run kubectl against the local stack; returns the CompletedProcess (no check)."""

    def run(*args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            ["kubectl", "--kubeconfig", str(local_stack), *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {proc.stderr}")
        return proc

    return run


def wait_until(predicate: Callable[[], bool], what: str, timeout: float = 120) -> None:
    """Poll until predicate() holds; fail naming what did not happen."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def get_json(kubectl: Kubectl, *args: str) -> Any:
    return json.loads(kubectl("get", *args, "-o", "json").stdout)
