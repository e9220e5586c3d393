"""The regions keeper's fixture for this folder's tests (helpers live in tests/support/unit/keeper_fakes.py)."""

from tests.support.unit.keeper_fakes import regions

__all__ = ["regions"]
