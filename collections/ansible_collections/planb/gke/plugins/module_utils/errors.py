# planb.gke: the one exception type of the collection's module_utils, and Google's error bodies it reports.
"""GkeError: what the modules report to the user as their ``msg``; error_body and error_info: what a Google API's
error answer says (https://google.aip.dev/193)."""

from __future__ import annotations

import json
from typing import Any
from urllib.error import HTTPError

Body = dict[str, Any]

#: google.rpc.ErrorInfo, the error detail whose ``reason`` says why Google refused (https://google.aip.dev/193).
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


class GkeError(Exception):
    """A failure reported to the user as the module's ``msg``; the text names the input and the fix."""

    #: The HTTP status of the Google answer this error reports (None when it reports none).
    code: int | None = None
    #: The ``reason`` of the answer's google.rpc.ErrorInfo detail (SERVICE_DISABLED, USER_PROJECT_DENIED, ...), or "".
    reason: str = ""
    #: The ErrorInfo's ``metadata`` (for SERVICE_DISABLED: ``service`` and ``consumer``, the project billed).
    metadata: dict[str, str] = {}  # noqa: RUF012 - never mutated: an answer's error sets its own


def error_info(error: Body) -> Body:
    """The ErrorInfo detail of a Google error body ({} when it carries none)."""
    for detail in error.get("details") or []:
        if isinstance(detail, dict) and detail.get("@type") == ERROR_INFO:
            return detail
    return {}


def error_body(exc: HTTPError) -> Body:
    """GKE's error body ({"error": {"code", "message", "status"}}) of an HTTP error, or its text."""
    text = exc.read() or b""
    try:
        error = json.loads(text).get("error", {})
    except (ValueError, AttributeError):
        error = None
    return error if isinstance(error, dict) else {"message": text.decode(errors="replace")[:500]}
