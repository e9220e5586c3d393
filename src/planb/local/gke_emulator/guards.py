"""What the local GKE API refuses before it reads a request's body: a foreign Host header, a write that is not
JSON (with a body or without one), and a body longer than any request the API takes.

Both are planb's policy for a listener on a loopback address, not GKE's rules (Google's front end serves public
names and does not document what it answers a write of another media type):

* ``Host`` must name a loopback address: ``127.0.0.1``, ``localhost`` or ``[::1]``, with or without a port
  (403 PERMISSION_DENIED otherwise, a missing header too). A page whose DNS name an attacker re-points at
  127.0.0.1 (DNS rebinding) reaches the listener from a browser, but its requests carry that name.
* Every POST, PUT or PATCH must say ``Content-Type: application/json`` (parameters such as ``charset=UTF-8``
  allowed; 415 otherwise), whether it carries a body or not: a bodyless ``POST …/nodePools/NP:setSize`` or
  ``POST /planb/v1/faults`` still acts. A browser sends a cross-site form post (``text/plain``,
  ``application/x-www-form-urlencoded``, ``multipart/form-data``) or a bodyless ``fetch`` without asking first; a
  JSON one only after a CORS preflight, which the emulator never answers
  (https://fetch.spec.whatwg.org/#cors-safelisted-request-header). Google's clients (the planb.gke modules'
  client, gcloud's apitools, googleapiclient) send the header on every write.
* ``Content-Length`` must be a whole number no larger than ``MAX_BODY_BYTES`` (413 otherwise), checked before a
  byte of the body is read, so a client cannot make the emulator read or hold an arbitrary amount.
"""

from __future__ import annotations

import re

from planb.local.gke_emulator.errors import ApiError

#: The Host header values the emulator serves: a loopback name or address, an optional port.
_LOOPBACK_HOST = re.compile(r"(?:127\.0\.0\.1|localhost|\[::1\])(?::[0-9]{1,5})?", re.IGNORECASE)
#: Methods the emulator takes only as JSON.
_WRITES = frozenset({"POST", "PUT", "PATCH"})
#: The longest body the emulator reads. planb's largest request (a node pool with labels, taints and a
#: reservation affinity) is a few KiB; Google documents no request size limit for the GKE API.
MAX_BODY_BYTES = 1 << 20


def check_host(host: str | None) -> None:
    """Refuse (403) a request whose Host header names anything but a loopback address."""
    if host is None or not _LOOPBACK_HOST.fullmatch(host.strip()):
        raise ApiError(
            403,
            f"planb's policy: the GKE emulator answers only requests addressed to a loopback name (Host "
            f"127.0.0.1, localhost or [::1]), not Host {host!r}, because a web page can reach a loopback listener "
            "under a name of its own (DNS rebinding); address it as http://127.0.0.1:<port>.",
        )


def check_content_type(method: str, content_type: str | None) -> None:
    """Refuse (415) a write, with a body or without one, that is not sent as ``application/json``."""
    if method.upper() not in _WRITES:
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


def body_length(content_length: str | None) -> int:
    """The body's length from its ``Content-Length`` header (0 without one); refuses (400, 413) a length that is
    not a whole number or is over ``MAX_BODY_BYTES``, before the body is read."""
    text = (content_length or "0").strip()
    if not text.isdigit():
        raise ApiError(400, f"Content-Length {content_length!r} is not a whole number of bytes.")
    length = int(text)
    if length > MAX_BODY_BYTES:
        raise ApiError(
            413,
            f"planb's policy: the GKE emulator reads request bodies of at most {MAX_BODY_BYTES} bytes, not "
            f"{length}, because it would otherwise read whatever a client announces; no GKE request is that large.",
            "INVALID_ARGUMENT",
        )
    return length


def check_request(method: str, host: str | None, content_type: str | None, content_length: str | None) -> int:
    """Every check, before the body is read (the Host header's first); the body's length to read."""
    check_host(host)
    check_content_type(method, content_type)
    return body_length(content_length)
