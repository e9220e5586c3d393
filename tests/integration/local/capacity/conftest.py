"""The capacity simulator's fixtures: a fake cluster API, a clock, the GKE API's pools, and a simulator serving one DWS
pool (tests/support/capacity.py)."""

from tests.support.capacity import api, clock, serve_pools, simulator, state

__all__ = ["api", "clock", "serve_pools", "simulator", "state"]
