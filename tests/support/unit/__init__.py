"""Helpers only tests/unit uses (tests/unit/test_support_tiers.py keeps it so)."""
