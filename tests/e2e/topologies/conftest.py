"""The converged topologies, each converged once per session, and Helm against the stack
(tests/support/topologies.py)."""

from tests.support.topologies import concurrent, failover_site, helm, ladder, site, topologies, two_slices

__all__ = ["concurrent", "failover_site", "helm", "ladder", "site", "topologies", "two_slices"]
