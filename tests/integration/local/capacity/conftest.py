"""The capacity simulator's fixtures: a fake cluster API, a clock, the GKE API's pools (tests/support/capacity.py)."""

from tests.support.capacity import api, clock, serve_pools

__all__ = ["api", "clock", "serve_pools"]
