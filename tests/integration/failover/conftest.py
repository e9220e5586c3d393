"""The failover controller's fixtures (tests/support/shared/failover/fixtures.py)."""

from tests.support.shared.failover.fixtures import clock, cluster, kueue, naps, no_network

__all__ = ["clock", "cluster", "kueue", "naps", "no_network"]
