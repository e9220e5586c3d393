"""Every test's tier comes from its folder, set here and nowhere else (tests/README.md, "Tiers").

* ``tests/unit``: no server and no binary beyond ``helm template`` (`make test-fast`);
* ``tests/integration``: the GKE emulator, ansible-playbook, molecule, kube-apiserver and train.py as processes;
  ``tests/integration/playbooks`` (ansible-playbook against the emulator) is also marked ``playbook``, so that
  hack/test.sh runs it in a process of its own;
* ``tests/e2e``: the real local stack (marker ``e2e``; one stack per machine, so one process).

Helpers live in ``tests/support`` (no test imports a conftest); the conftests only bring its fixtures in. It has a
package per tier and ``shared`` (tests/README.md, "Helpers"): a tier imports its own and ``shared``, and this file,
loaded for every tier, ``shared`` only (tests/unit/test_support_tiers.py).
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from planb import paths
from tests.support.shared.chart.helm import helm, helm_bin, notes, template

__all__ = ["helm", "helm_bin", "notes", "template"]

#: The tiers, by the folder under tests/ a test file sits in.
TIERS = ("unit", "integration", "e2e")
#: Sub-folders that add a marker of their own: hack/test.sh runs them in a process of their own.
SUB_MARKERS = {("integration", "playbooks"): "playbook"}
#: The order the e2e tests run in, by the topology fixture they use (tests/e2e/topologies/conftest.py): tests that
#: need no converge first, then each inventory topology in turn (each converges once per session and is never
#: returned to), and the tests that take the stack down last (marker `stack_teardown`).
TOPOLOGY_ORDER = ("site", "two_slices", "ladder", "concurrent", "regions")
TESTS = Path(__file__).parent
# libtpu is installed (the TPU compiler, for compiling ahead of time on CPU): without this, every JAX process the
# tests start would try to open a TPU, and the first would hold libtpu's lock file (/tmp/libtpu_lockfile) against the
# others. The compiler itself needs no platform (jax.experimental.topologies works with JAX_PLATFORMS=cpu).
os.environ.setdefault("JAX_PLATFORMS", "cpu")


def tier_of(path: Path) -> tuple[str, ...]:
    """The markers a test file gets from its folder: ('unit',), ('integration', 'playbook'), ('e2e',)."""
    parts = path.resolve().relative_to(TESTS).parts
    if len(parts) < 2 or parts[0] not in TIERS:
        raise pytest.UsageError(f"{path}: a test file sits under tests/unit, tests/integration or tests/e2e")
    extra = SUB_MARKERS.get(parts[:2])
    return (parts[0], extra) if extra else (parts[0],)


def _e2e_rank(item: pytest.Item) -> tuple[int, int]:
    """(topology rank, order among the teardown tests: `stack_teardown(order=N)`); (0, 0) for other tests."""
    if not item.get_closest_marker("e2e"):
        return (0, 0)
    teardown = item.get_closest_marker("stack_teardown")
    if teardown:
        return (len(TOPOLOGY_ORDER) + 1, int(teardown.kwargs.get("order", 0)))
    names = set(getattr(item, "fixturenames", ()))
    ranks = [i + 1 for i, name in enumerate(TOPOLOGY_ORDER) if name in names]
    return (max(ranks, default=0), 0)


def e2e_group(item: pytest.Item) -> str:
    """What `--e2e-groups` selects an e2e test by: its topology; 'teardown' for the tests that take the stack down;
    the file's name (test_chart_stack.py) for a test that needs no converge."""
    rank, _ = _e2e_rank(item)
    if rank > len(TOPOLOGY_ORDER):
        return "teardown"
    return TOPOLOGY_ORDER[rank - 1] if rank > 0 else Path(str(item.path)).name


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--e2e-groups",
        default="",
        help="comma-separated: run only these e2e tests: topologies "
        f"({', '.join(TOPOLOGY_ORDER)}), 'teardown' (the tests that take the stack down) and, for tests that need "
        "no converge, their file's name (test_chart_stack.py); a name with a leading '-' leaves that group out and "
        "keeps the rest ('-regions'); hack/test.sh runs the regions topology so, on a stack of its own",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test with its folder's tier, keep the e2e tests of the groups `--e2e-groups` names, and
    order the e2e tests by topology so that each topology converges once (a stable sort: within a topology, the
    files' own order)."""
    for item in items:
        for marker in tier_of(Path(str(item.path))):
            item.add_marker(getattr(pytest.mark, marker))
    named = [name.strip() for name in str(config.getoption("--e2e-groups")).split(",") if name.strip()]
    wanted = {name for name in named if not name.startswith("-")}
    unwanted = {name[1:] for name in named if name.startswith("-")}
    if named:
        groups = {e2e_group(item) for item in items if item.get_closest_marker("e2e")}
        unknown = (wanted | unwanted) - groups - {*TOPOLOGY_ORDER, "teardown"}
        if unknown:
            raise pytest.UsageError(f"--e2e-groups: no e2e test in {sorted(unknown)}; the groups: {sorted(groups)}")
        kept = (wanted or groups) - unwanted
        dropped = [item for item in items if item.get_closest_marker("e2e") and e2e_group(item) not in kept]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = [item for item in items if item not in dropped]
    items.sort(key=_e2e_rank)


@pytest.fixture(scope="session", autouse=True)
def _tool_path() -> None:
    """The pinned binaries and the venv's console scripts come first on PATH."""
    venv_bin = Path(sys.executable).parent
    os.environ["PATH"] = os.pathsep.join([str(paths.tools_dir() / "bin"), str(venv_bin), os.environ.get("PATH", "")])


class UnitTestBindsAPort(AssertionError):
    """A test under tests/unit tried to listen: that is an integration test (tests/README.md, "Tiers")."""


@pytest.fixture(autouse=True)
def _unit_tests_bind_no_port(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The unit tier starts no server: a unit test (or a fixture it uses) that binds a socket in this process fails,
    naming the fix. A server started as a subprocess is out of its sight; the tier's rule still holds for it."""
    if request.node.get_closest_marker("unit"):

        def refuse(sock: socket.socket, address: object) -> None:
            raise UnitTestBindsAPort(
                f"{request.node.nodeid} binds {address!r}: a unit test starts no server. Fix: move it (or the part "
                "that serves) under tests/integration, with its helpers in tests/support"
            )

        monkeypatch.setattr(socket.socket, "bind", refuse)
    yield
