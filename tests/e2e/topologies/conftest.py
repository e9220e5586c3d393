"""The converged topologies, each converged once per session, and Helm against the stack
(tests/support/e2e/topologies.py; the regions topology: tests/support/e2e/regions_topology.py)."""

import pytest

from tests.support.e2e.regions_topology import regions, regions_up
from tests.support.e2e.topologies import (
    concurrent,
    failover_site,
    helm,
    ladder,
    prepare_outside_controller,
    site,
    topologies,
    two_slices,
)

__all__ = ["concurrent", "failover_site", "helm", "ladder", "regions", "regions_up", "site", "topologies", "two_slices"]


def pytest_collection_finish(session: pytest.Session) -> None:
    """The `site` topology converges from the collection's tarball: build and install it while the tests before
    that converge run, when any selected test needs the topology."""
    if any("site" in getattr(item, "fixturenames", ()) for item in session.items):
        prepare_outside_controller()
