"""Helpers only tests/e2e uses; they may import tests.support.shared (tests/unit/test_support_tiers.py)."""
