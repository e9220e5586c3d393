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
from planb.local.stack.stack import LocalStack

# The checkout's collection joins the `ansible_collections` namespace package, as ansible.cfg's collections_path
# provides at run time; this conftest loads before every test module and conftest below it.
if str(paths.REPO / "collections") not in sys.path:
    sys.path.insert(0, str(paths.REPO / "collections"))

Kubectl = Callable[..., subprocess.CompletedProcess[str]]

#: Fixtures that hand a test a pinned binary from .tools; a test using one is marked `tools`.
TOOL_FIXTURES = frozenset({"helm_bin"})
#: The fixture every local-stack fixture rests on; a test using it is marked `stack`, so that the
#: `-m "not stack"` half of `make test` (hack/test.sh), which runs beside the stack half, never starts one.
STACK_FIXTURES = frozenset({"_stack_session"})


#: Test files that run ansible-playbook against the GKE emulator (about half the time of the tests without the
#: stack): marked `playbook`, so that hack/test.sh runs them in a pytest process of their own beside the others.
PLAYBOOK_FILES = frozenset(
    {
        "tests/gke/test_bad_inventory.py",
        "tests/gke/test_ladder_playbook.py",
        "tests/gke/test_plan_slices.py",
        "tests/gke/test_prerequisites.py",
        "tests/gke/test_role_tpu7x.py",
        "tests/gke/test_roles.py",
        "tests/gke/test_site_check_mode.py",
        "tests/gke/test_teardown.py",
        "tests/gke/test_workload_identity.py",
        "tests/gke/test_zones.py",
    }
)

#: The order the stack tests run in, by the topology fixture they use (tests/e2e/conftest.py): tests that need
#: no converge first, then each inventory topology in turn (each converges once per session and is never
#: returned to), and the tests that take the stack down last (marker `stack_teardown`).
TOPOLOGY_ORDER = ("site", "failover_site", "two_slices", "ladder", "concurrent")


def _stack_rank(item: pytest.Item) -> tuple[int, int]:
    """(topology rank, order among the teardown tests: `stack_teardown(order=N)`); (0, 0) for other tests."""
    if not item.get_closest_marker("stack"):
        return (0, 0)
    teardown = item.get_closest_marker("stack_teardown")
    if teardown:
        return (len(TOPOLOGY_ORDER) + 1, int(teardown.kwargs.get("order", 0)))
    names = set(getattr(item, "fixturenames", ()))
    ranks = [i + 1 for i, name in enumerate(TOPOLOGY_ORDER) if name in names]
    return (max(ranks, default=0), 0)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that needs the pinned toolchain (so `make test-fast` leaves it out) or the stack, and
    order the stack tests by topology so that each topology converges once (a stable sort: within a
    topology, the files' own order)."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if TOOL_FIXTURES & names:
            item.add_marker(pytest.mark.tools)
        if STACK_FIXTURES & names:
            item.add_marker(pytest.mark.stack)
        if item.nodeid.split("::", 1)[0] in PLAYBOOK_FILES:
            item.add_marker(pytest.mark.playbook)
    items.sort(key=_stack_rank)


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


#: Seconds between two looks at a condition: controllers act in milliseconds on the local stack.
POLL_SECONDS = 0.2


def wait_until(
    predicate: Callable[[], bool], what: str, timeout: float = 120, explain: Callable[[], object] | None = None
) -> None:
    """Poll until predicate() holds; fail naming what did not happen and, with `explain`, the state it left."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(POLL_SECONDS)
    state = ""
    if explain is not None:
        try:
            state = f"; state: {explain()}"
        except Exception as exc:  # the explanation must not hide the timeout
            state = f"; (the state could not be read: {exc})"
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}{state}")


def holds_for(predicate: Callable[[], bool], what: str, seconds: float) -> None:
    """Assert that predicate() holds at every look for `seconds` (instead of a sleep, then one look); fails at the
    first look it does not."""
    deadline = time.monotonic() + seconds
    while True:
        if not predicate():
            raise AssertionError(f"{what} stopped holding {seconds - (deadline - time.monotonic()):.1f} s in")
        if time.monotonic() >= deadline:
            return
        time.sleep(POLL_SECONDS)


def get_json(kubectl: Kubectl, *args: str) -> Any:
    return json.loads(kubectl("get", *args, "-o", "json").stdout)
