"""The converged topologies, each converged once per session, and Helm against the stack
(tests/support/e2e/topologies.py; the regions topology: tests/support/e2e/regions_topology.py)."""

import pytest

from tests.support.e2e.regions_dispatch import dispatching
from tests.support.e2e.regions_topology import regions, regions_up, start_regions_ahead
from tests.support.e2e.topologies import (
    CONVERGES,
    concurrent,
    helm,
    ladder,
    prepare_outside_controller,
    site,
    topologies,
    two_slices,
)

__all__ = [
    "concurrent",
    "dispatching",
    "helm",
    "ladder",
    "regions",
    "regions_up",
    "site",
    "topologies",
    "two_slices",
]


#: The test while which the regions' stacks start (`start_regions_ahead`): the one before the first regions test.
_REGIONS_AHEAD_OF: list[str] = []


def pytest_collection_finish(session: pytest.Session) -> None:
    """The `site` topology converges from the collection's tarball: build and install it while the tests before
    that converge run, when any selected test needs the topology. The regions topology's two stacks start while the
    tests of the topology before it run (from the first one's call: after its converge, not beside it)."""
    if any("site" in getattr(item, "fixturenames", ()) for item in session.items):
        prepare_outside_controller()
    names = [getattr(item, "fixturenames", ()) for item in session.items]
    first = next((i for i, fixtures in enumerate(names) if "regions" in fixtures), None)
    if first:  # (None or 0: no regions test, or nothing runs before it)
        # The first of the tests before it that share its predecessor's topology: none of them converges.
        ahead = first - 1
        while ahead > 0 and _topology(names[ahead - 1]) == _topology(names[first - 1]):
            ahead -= 1
        _REGIONS_AHEAD_OF.append(session.items[ahead].nodeid)


def _topology(fixtures: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(name for name in CONVERGES if name in fixtures)


def pytest_runtest_call(item: pytest.Item) -> None:
    if _REGIONS_AHEAD_OF and item.nodeid == _REGIONS_AHEAD_OF[0]:
        start_regions_ahead()
