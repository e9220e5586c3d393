"""The Ray head stand-in serving `run` payloads (tests/support/integration/rayhead_run.py)."""

from tests.support.integration.rayhead_run import serve

__all__ = ["serve"]
