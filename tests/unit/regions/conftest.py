"""The regions keeper's fixture for this folder's tests (helpers live in tests/support/keeper_fakes.py)."""

from tests.support.keeper_fakes import regions

__all__ = ["regions"]
