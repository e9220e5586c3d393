"""The errors of the local GKE API: GKE's JSON error body, the project-level APIs' (Service Usage, Cloud Quotas,
Cloud Resource Manager: `ProjectApiError`), and the emulator's own start-up failure.

Errors use GKE's JSON shape (``{"error": {"code", "message", "status", "details"?}}``); ``status`` defaults to the
canonical name Google gives the HTTP code (400 INVALID_ARGUMENT, 404 NOT_FOUND, 409 ALREADY_EXISTS, ...).
"""

from __future__ import annotations

from typing import Any

from planb.errors import PlanbError

Body = dict[str, Any]

_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "UNIMPLEMENTED",
    409: "ALREADY_EXISTS",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


class EmulatorError(PlanbError):
    """The emulator cannot start or be reached."""


class ApiError(Exception):
    """An answer GKE gives as an error body."""

    def __init__(self, code: int, message: str, status: str | None = None, details: list[Body] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status or _STATUS_NAMES.get(code, "UNKNOWN")
        #: Google's typed error details (e.g. a google.rpc.BadRequest naming the fields), when there are any.
        self.details = details or []

    def body(self) -> Body:
        error: Body = {"code": self.code, "message": self.message, "status": self.status}
        if self.details:
            error["details"] = self.details
        return {"error": error}


class ProjectApiError(Exception):
    """An answer in Google's error shape (the emulator's ApiError is built from it)."""

    def __init__(self, code: int, message: str, status: str, details: list[Body] | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status
        #: Google's typed error details (a google.rpc.ErrorInfo naming the reason), when there are any.
        self.details = details or []


def service_disabled(project: str, service: str) -> Body:
    """The google.rpc.ErrorInfo Google sends with a call to an API that is off on the project billed for it
    (https://cloud.google.com/apis/design/errors#error_info: reason SERVICE_DISABLED, domain googleapis.com, the
    service and the consumer in its metadata). The emulator bills the project named in the path."""
    return {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "SERVICE_DISABLED",
        "domain": "googleapis.com",
        "metadata": {"service": service, "consumer": f"projects/{project}"},
    }
