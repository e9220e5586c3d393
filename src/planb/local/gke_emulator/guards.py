"""What the local GKE API refuses before it reads a request: a foreign Host header, and a write that is not JSON.

Both are planb's policy for a listener on a loopback address, not GKE's rules (Google's front end serves public
names and does not document what it answers a write of another media type):

* ``Host`` must name a loopback address: ``127.0.0.1``, ``localhost`` or ``[::1]``, with or without a port
  (403 PERMISSION_DENIED otherwise, a missing header too). A page whose DNS name an attacker re-points at
  127.0.0.1 (DNS rebinding) reaches the listener from a browser, but its requests carry that name.
* A POST, PUT or PATCH with a body must say ``Content-Type: application/json`` (parameters such as
  ``charset=UTF-8`` allowed; 415 otherwise). A browser sends a cross-site form post (``text/plain``,
  ``application/x-www-form-urlencoded``, ``multipart/form-data``) without asking first; a JSON one only after a
  CORS preflight, which the emulator never answers
  (https://fetch.spec.whatwg.org/#cors-safelisted-request-header).
"""

from __future__ import annotations

import re

from planb.local.gke_emulator.errors import ApiError

#: The Host header values the emulator serves: a loopback name or address, an optional port.
_LOOPBACK_HOST = re.compile(r"(?:127\.0\.0\.1|localhost|\[::1\])(?::[0-9]{1,5})?", re.IGNORECASE)
#: Methods whose body the emulator reads as JSON.
_WRITES = frozenset({"POST", "PUT", "PATCH"})


def check_host(host: str | None) -> None:
    """Refuse (403) a request whose Host header names anything but a loopback address."""
    if host is None or not _LOOPBACK_HOST.fullmatch(host.strip()):
        raise ApiError(
            403,
            f"planb's policy: the GKE emulator answers only requests addressed to a loopback name (Host "
            f"127.0.0.1, localhost or [::1]), not Host {host!r}, because a web page can reach a loopback listener "
            "under a name of its own (DNS rebinding); address it as http://127.0.0.1:<port>.",
        )


def check_content_type(method: str, content_type: str | None, has_body: bool) -> None:
    """Refuse (415) a write with a body that is not sent as ``application/json``."""
    if method.upper() not in _WRITES or not has_body:
        return
    media_type = (content_type or "").split(";", 1)[0].strip().lower()
    if media_type != "application/json":
        raise ApiError(
            415,
            f"planb's policy: the GKE emulator reads a {method.upper()} body only as Content-Type: application/json, "
            f"not {content_type!r}, because a web page can send any other type to a loopback listener without a "
            "CORS preflight; send the header `Content-Type: application/json`.",
            "INVALID_ARGUMENT",
        )


def check_request(method: str, host: str | None, content_type: str | None, has_body: bool) -> None:
    """Both checks, the Host header's first."""
    check_host(host)
    check_content_type(method, content_type, has_body)
