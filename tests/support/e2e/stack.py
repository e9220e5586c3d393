"""The real local stack (kwok control plane + Kueue) for the e2e tier, and kubectl against it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from planb.local.stack.stack import LocalStack

Kubectl = Callable[..., subprocess.CompletedProcess[str]]


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


def get_json(kubectl: Kubectl, *args: str) -> Any:
    return json.loads(kubectl("get", *args, "-o", "json").stdout)
