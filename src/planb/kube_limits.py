"""An overall deadline and a size cap for each request of a planb.kube client whose server is another party's.

A region's API server is such a server (docs/security.md, "A region's answers are bounded"): planb reads its answers
in `planb status` and `planb regions keep`, and a slow or huge answer must cost one region one tick, never stall the
others. urllib3's read timeout bounds each socket read alone, so a server that sends a byte every 29 s never times
out, and an answer is held in memory whole, however large. Here:

* `Limits`: the wall-clock seconds from sending a request to the last byte of its answer, and the most bytes of that
  answer (after content decoding, so a compressed answer counts as what it expands to).
* `Deadline`: one request's clock. At the deadline a timer shuts down the request's TCP socket, which ends whatever
  read is blocked on it, in any phase: the TLS handshake, the status line and headers, the body. The connection
  classes below hand it the socket: each new connection's, before TLS wraps it, and a pooled one's at each request
  (`watched_pool_classes`), as a second descriptor of the same socket (`twin`), which the deadline closes when the
  request ends; shutting one descriptor down shuts the socket down for both.
* `read_capped`: an answer's chunks joined, stopping at the cap.
* `read_within`: one request sent and its answer read under both, the connection closed unless read whole (what
  planb.kube and the advice poster, planb.regions.dispatcher.google_advice, share).

planb.kube uses these for a client built with `Limits` (planb.regions.access.connection.region_kube's); a
client without keeps urllib3's per-read timeout and no cap (the operator's own API server: docs/regions.md, "A region's
answers: a deadline and a size cap").
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection

#: How much of an answer is asked for at a time (urllib3's stream), and so the most it reads past the cap.
CHUNK = 64 * 1024


@dataclass(frozen=True)
class Limits:
    """One request's overall deadline (seconds, send to last byte) and its answer's size cap (bytes, decoded)."""

    deadline_s: float
    max_bytes: int
    #: Where the user sets each, named in the fix of an error that hit it.
    deadline_setting: str = "the client's deadline"
    size_setting: str = "the client's size cap"


_INFLIGHT = threading.local()


class Deadline:
    """One request's wall clock. Its timer, at `seconds`, marks it expired and shuts down every socket handed to it
    (`hold`), so a read blocked there returns; `finish` stops the timer and closes those descriptors. Used from the
    requesting thread, while the timer runs on its own."""

    def __init__(self, seconds: float, timer: type[threading.Timer] = threading.Timer) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.expired = False
        self._done = False
        self._lock = threading.Lock()
        self._held: list[socket.socket] = []
        self._timer = timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def remaining(self) -> float:
        return max(0.0, self.end - time.monotonic())

    def hold(self, sock: socket.socket) -> None:
        """Shut `sock` down at the deadline (at once if it passed) and close it at `finish`: a descriptor of the
        request's socket that is the deadline's own (`twin`)."""
        with self._lock:
            if self._done:
                sock.close()
                return
            self._held.append(sock)
            if self.expired:
                _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.expired = True
            for sock in self._held:
                _shut(sock)

    def finish(self) -> bool:
        """Stop the clock and close the held descriptors; whether the deadline passed first (the answer may then be
        cut short: the caller raises)."""
        self._timer.cancel()
        with self._lock:
            self._done = True
            held, self._held = self._held, []
            for sock in held:
                sock.close()
            return self.expired

    def __enter__(self) -> Deadline:
        """While in the block, connections this thread opens or sends on hand their sockets to this deadline."""
        _INFLIGHT.deadline = self
        return self

    def __exit__(self, *exc: object) -> None:
        _INFLIGHT.deadline = None


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed, or the peer reset it: nothing left to end
        sock.shutdown(socket.SHUT_RDWR)


def twin(sock: socket.socket) -> socket.socket:
    """A second descriptor of `sock`'s socket, which the deadline owns (a TLS socket cannot be dup()ed itself)."""
    return socket.socket(sock.family, sock.type, sock.proto, fileno=os.dup(sock.fileno()))


def _watch(sock: socket.socket | None) -> None:
    deadline: Deadline | None = getattr(_INFLIGHT, "deadline", None)
    if deadline is not None and sock is not None and sock.fileno() >= 0:
        deadline.hold(twin(sock))


class _WatchedHTTPConnection(HTTPConnection):
    """urllib3's connection, handing its socket to the thread's Deadline when it connects and at each request."""

    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        _watch(sock)  # before TLS takes the descriptor over: the handshake is under the deadline too
        return sock

    def request(self, *args: Any, **kwargs: Any) -> None:
        _watch(self.sock)  # a pooled connection's (a new one's is held already; a second hold is harmless)
        super().request(*args, **kwargs)


class _WatchedHTTPSConnection(HTTPSConnection):
    """The same for https (urllib3's HTTPSConnection connects through HTTPConnection._new_conn)."""

    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        _watch(sock)
        return sock

    def request(self, *args: Any, **kwargs: Any) -> None:
        _watch(self.sock)
        super().request(*args, **kwargs)


class _WatchedHTTPPool(urllib3.HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSPool(urllib3.HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


def watched_pool_classes() -> dict[str, type[urllib3.HTTPConnectionPool]]:
    """A PoolManager's `pool_classes_by_scheme` whose connections hand their sockets to the thread's Deadline."""
    return {"http": _WatchedHTTPPool, "https": _WatchedHTTPSPool}


def read_capped(chunks: Iterable[bytes], max_bytes: int) -> bytes | None:
    """The chunks joined; None as soon as they pass `max_bytes` (nothing further is read)."""
    parts: list[bytes] = []
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > max_bytes:
            return None
        parts.append(chunk)
    return b"".join(parts)


def declared_too_large(content_length: str | None, max_bytes: int) -> bool:
    """Whether a Content-Length header already says more than `max_bytes` (refused before the body is read)."""
    try:
        return content_length is not None and int(content_length) > max_bytes
    except ValueError:
        return False


class DeadlinePassed(Exception):
    """`read_within`: the deadline passed before the answer was read whole; the cause, if any, is what the shut socket
    raised (the caller says "too slow", not that)."""


def read_within(
    limits: Limits,
    send: Callable[[urllib3.Timeout], urllib3.BaseHTTPResponse],
    cut: tuple[type[BaseException], ...],
) -> tuple[urllib3.BaseHTTPResponse, bytes | None]:
    """`send` (given the per-read timeout, its connection handing its socket to this request's Deadline) and the whole
    body read in chunks: the answer and its body, None when it is over `limits.max_bytes` (declared or read). Raises
    DeadlinePassed when the deadline passed first, also when it made `send` or the read raise one of `cut`; anything
    else `send` or the read raised, as raised. An answer not read to its end is closed, so its connection is not used
    again."""
    deadline = Deadline(limits.deadline_s)
    answer: urllib3.BaseHTTPResponse | None = None
    body: bytes | None = None
    try:
        with deadline:
            answer = send(urllib3.Timeout(connect=limits.deadline_s, read=limits.deadline_s))
        if not declared_too_large(answer.headers.get("Content-Length"), limits.max_bytes):
            body = read_capped(answer.stream(CHUNK, decode_content=True), limits.max_bytes)
    except cut as exc:
        # Past the deadline's time, the deadline cut it even when the timer thread had not marked it yet: the
        # per-read timeout is the deadline's own length, so under load the socket's timeout can fire first.
        if deadline.finish() or deadline.remaining() == 0:
            raise DeadlinePassed() from exc
        raise
    finally:
        expired = deadline.finish()
        if answer is not None:
            if body is None or expired:
                answer.close()  # an answer not read to its end: the connection is not used again
            answer.release_conn()
    if expired:
        raise DeadlinePassed()
    return answer, body
