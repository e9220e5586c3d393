"""Helpers only tests/integration uses; they may import tests.support.shared (tests/unit/test_support_tiers.py)."""
