"""Servers on 127.0.0.1 for a client's side of HTTP(S): one that answers every GET with ``{}`` and records each
request's path and Authorization header; one that answers each path as the test scripts it, slowly (a byte at a
time, in the body or in the status line and headers) or hugely, keeping the connection for the next request when the
answer says its length; and one that trickles the TLS handshake. HTTPS with a serving pair of its own CA
(planb.local.tls), or plain HTTP. Integration tier only (they bind)."""

from __future__ import annotations

import http.server
import socket
import socketserver
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from planb.local.tls import ServingCert


@dataclass(frozen=True)
class Answer:
    """What the scripted server answers to one GET."""

    status: int = 200
    body: bytes = b"{}"
    #: Seconds between bytes: the body is sent one byte at a time (a server that answers slowly but never stops).
    trickle_s: float = 0.0
    #: With trickle_s: the status line and headers are trickled, not the body.
    trickle_headers: bool = False
    #: Whether the headers say Content-Length (without, the body ends when the server closes the connection).
    declare_length: bool = True
    #: The most seconds a trickle lasts, then the server stops (its thread ends even if the client never closes).
    trickle_for_s: float = 30.0


#: Writes of a large body, so a huge answer is not built in memory whole.
_BLOCK = 64 * 1024


@contextmanager
def json_server(
    cert: ServingCert | None, answer: Callable[[str], Answer], seen: list[tuple[str, str]] | None = None
) -> Iterator[str]:
    """The server's URL while it runs; each GET (or POST, its body read and left aside) answered `answer(path)`,
    appended to ``seen`` first; HTTPS with ``cert``, plain HTTP without."""

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # a connection kept for the next request, when the answer says its length

        def do_GET(self) -> None:
            if seen is not None:
                seen.append((self.path, self.headers.get("Authorization", "")))
            got = answer(self.path)
            reason = self.responses.get(got.status, ("",))[0]
            if got.declare_length:
                head = [f"HTTP/1.1 {got.status} {reason}", f"Content-Length: {len(got.body)}"]
            else:  # the body ends when the connection does
                head = [f"HTTP/1.0 {got.status} {reason}", "Connection: close"]
                self.close_connection = True
            head.append("Content-Type: application/json")
            raw_head = ("\r\n".join(head) + "\r\n\r\n").encode()
            until = time.monotonic() + got.trickle_for_s
            try:
                if got.trickle_s and got.trickle_headers:
                    self._trickle(raw_head, got.trickle_s, until)
                else:
                    self.wfile.write(raw_head)
                if got.trickle_s and not got.trickle_headers:
                    self._trickle(got.body, got.trickle_s, until)
                else:
                    for start in range(0, len(got.body), _BLOCK):
                        self.wfile.write(got.body[start : start + _BLOCK])
            except OSError:  # the client gave up (its deadline or cap): nothing more to send
                pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))  # the request's body, then the answer
            self.do_GET()

        def _trickle(self, data: bytes, every_s: float, until: float) -> None:
            for i in range(len(data)):
                if time.monotonic() > until:
                    return
                self.wfile.write(data[i : i + 1])
                time.sleep(every_s)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if cert is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert.tls_crt, cert.tls_key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    # A short poll: shutdown() waits for the next one (0.5 s by default, for each server a test starts).
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"{'https' if cert is not None else 'http'}://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def empty_json_server(cert: ServingCert | None, seen: list[tuple[str, str]] | None = None) -> Iterator[str]:
    """The server's URL while it runs; HTTPS with ``cert``, plain HTTP without; each GET appended to ``seen``."""
    with json_server(cert, lambda path: Answer(), seen) as url:
        yield url


@contextmanager
def handshake_trickler(every_s: float, for_s: float = 30.0) -> Iterator[str]:
    """An https:// URL whose server, once the client's hello has come, sends the start of a TLS record (a handshake
    record of 16 KiB) one byte every `every_s` seconds, for `for_s` seconds at most: a TLS handshake that never ends
    while each byte comes within a read timeout."""

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            sock: socket.socket = self.request
            until = time.monotonic() + for_s
            try:
                sock.recv(4096)  # the ClientHello
                for byte in b"\x16\x03\x03\x40\x00" + bytes(16384):
                    if time.monotonic() > until:
                        return
                    sock.sendall(bytes([byte]))
                    time.sleep(every_s)
            except OSError:  # the client gave up
                pass

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
