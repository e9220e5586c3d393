"""Helpers more than one tier uses; they import only tests.support.shared (tests/unit/test_support_tiers.py)."""
