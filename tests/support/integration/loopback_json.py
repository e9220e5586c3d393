"""A server on 127.0.0.1 that answers every GET with ``{}`` and records each request's path and Authorization
header: HTTPS with a serving pair of its own CA (planb.local.tls), or plain HTTP. Integration tier only (it binds)."""

from __future__ import annotations

import http.server
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from planb.local.tls import ServingCert


@contextmanager
def empty_json_server(cert: ServingCert | None, seen: list[tuple[str, str]] | None = None) -> Iterator[str]:
    """The server's URL while it runs; HTTPS with ``cert``, plain HTTP without; each GET appended to ``seen``."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if seen is not None:
                seen.append((self.path, self.headers.get("Authorization", "")))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if cert is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert.tls_crt, cert.tls_key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"{'https' if cert is not None else 'http'}://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
