# planb.gke: the one exception type of the collection's module_utils.
"""GkeError: what the modules report to the user as their ``msg``."""

from __future__ import annotations


class GkeError(Exception):
    """A failure reported to the user as the module's ``msg``; the text names the input and the fix."""
