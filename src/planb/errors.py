"""The root of planb's typed exceptions; every package derives its own from it."""


class PlanbError(Exception):
    """An error planb reports to the user as a message (no traceback)."""
