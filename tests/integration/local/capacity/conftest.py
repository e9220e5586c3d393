"""The capacity simulator's fixtures: a fake cluster API, a clock, the GKE API's pools, and a simulator serving one DWS
pool (tests/support/integration/capacity.py)."""

from tests.support.integration.capacity import api, clock, serve_pools, simulator, state

__all__ = ["api", "clock", "serve_pools", "simulator", "state"]
