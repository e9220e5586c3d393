# planb.gke: the one exception type of the collection's module_utils.
"""GkeError: what the modules report to the user as their ``msg``."""

from __future__ import annotations


class GkeError(Exception):
    """A failure reported to the user as the module's ``msg``; the text names the input and the fix."""

    #: The HTTP status of the Google answer this error reports (None when it reports none).
    code: int | None = None
    #: The ``reason`` of the answer's google.rpc.ErrorInfo detail (SERVICE_DISABLED, USER_PROJECT_DENIED, ...), or "".
    reason: str = ""
    #: The ErrorInfo's ``metadata`` (for SERVICE_DISABLED: ``service`` and ``consumer``, the project billed).
    metadata: dict[str, str] = {}  # noqa: RUF012 - never mutated: an answer's error sets its own
