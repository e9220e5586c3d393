"""The local GKE API's HTTP layer: a threading server on a loopback address and its request handler.

The handler first refuses, on every path (the API's, the emulator's own and its kubeconfig route alike), a
``Host`` header that names no loopback address (403) and a POST, PUT or PATCH body that is not
``application/json`` (415), as planb's policy (``gke_emulator.guards``). It then reads the request (path, query,
JSON body), answers an injected HTTP fault instead when one is pending for API paths (``API_PREFIXES``: ``/v1/``,
``/compute/v1/``, ``/serviceusage/v1/``, ``/cloudquotas/v1/``, ``/cloudresourcemanager/v3/``, ``/storage/v1/``),
otherwise routes it (``gke_emulator.routes``) and writes the answer: JSON, YAML for a kubeconfig, or the API's error
body (GKE's, Cloud Storage's) with the error's HTTP status. API requests go into the store's request log with the
status they got and the quota project a client named in ``x-goog-user-project``
(https://cloud.google.com/apis/docs/system-parameters), which the emulator records but does not check.

The server speaks plain HTTP, or HTTPS with a serving pair (``tls``: a ``planb.local.tls.ServingCert``, whose CA a
client must trust), which is how a client that sends a Google credential reaches it (tests of token handling).
"""

from __future__ import annotations

import ipaddress
import json
import ssl
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from planb.local.gke_emulator import guards, routes
from planb.local.gke_emulator.address import DEFAULT_PORT
from planb.local.gke_emulator.buckets import NoContent
from planb.local.gke_emulator.engine import Engine
from planb.local.gke_emulator.errors import ApiError, EmulatorError
from planb.local.tls import ServingCert

#: The paths of Google's APIs the emulator serves: logged, and answered by injected HTTP faults.
API_PREFIXES = (
    "/v1/",
    "/compute/v1/",
    "/serviceusage/v1/",
    "/cloudquotas/v1/",
    "/cloudresourcemanager/v3/",
    "/storage/v1/",
    "/orgpolicy/v2/",
)


class _Handler(BaseHTTPRequestHandler):
    server: EmulatorHTTPServer
    protocol_version = "HTTP/1.1"
    #: TCP_NODELAY: the headers and the body go out as two writes, and on a kept-alive connection (the capacity
    #: simulator's) Nagle's algorithm held the body until the client's delayed ACK, some 40 ms a request.
    disable_nagle_algorithm = True

    def _handle(self) -> None:
        path = self.path.split("?", 1)[0]
        status = 200
        api = path.startswith(API_PREFIXES)
        location = None
        try:
            try:
                length = guards.check_request(
                    self.command,
                    self.headers.get("Host"),
                    self.headers.get("Content-Type"),
                    self.headers.get("Content-Length"),
                )
            except ApiError:
                # Refused before its body was read: the connection cannot carry another request.
                self.close_connection = True
                raise
            raw = self.rfile.read(length) if length else b""
            fault = self.server.engine.take_http_fault(self.command) if api else None
            if fault is not None:
                location = fault.get("location")
                injected = f"Injected by `planb local gke-emulator fail-http` ({fault['status']})."
                raise ApiError(fault["status"], injected)
            request = json.loads(raw) if raw else {}
            if not isinstance(request, dict):
                raise ApiError(400, "Request body must be a JSON object.")
            query = self.path.split("?", 1)[1] if "?" in self.path else ""
            user_project = self.headers.get("x-goog-user-project")
            result = routes.dispatch(self.server.engine, self.command, path, request, query, user_project)
            status = 204 if isinstance(result, NoContent) else status
        except json.JSONDecodeError as exc:
            status, result = 400, ApiError(400, f"Invalid JSON payload: {exc}").body()
        except ApiError as exc:
            status, result = exc.code, exc.body()
        if api:
            self.server.engine.store.log_request(self.command, path, status, self.headers.get("x-goog-user-project"))
        if isinstance(result, NoContent):
            payload, ctype = b"", ""
        elif isinstance(result, str):
            payload, ctype = result.encode(), "application/yaml"
        else:
            payload, ctype = json.dumps(result).encode(), "application/json; charset=UTF-8"
        self.send_response(status)
        if status != 204:  # RFC 9110 section 8.6: no Content-Length (nor body) in a 204
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(payload)))
        if location:
            self.send_header("Location", str(location))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _handle

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)


class EmulatorHTTPServer(ThreadingHTTPServer):
    """ThreadingHTTPServer carrying the engine; binds loopback addresses only; HTTPS when given a serving pair."""

    daemon_threads = True

    def __init__(
        self,
        engine: Engine,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        verbose: bool = False,
        tls: ServingCert | None = None,
    ) -> None:
        if host != "localhost" and not ipaddress.ip_address(host).is_loopback:
            raise EmulatorError(f"the GKE emulator only listens on loopback addresses, not {host}")
        self.engine = engine
        self.verbose = verbose
        self.tls = tls
        super().__init__((host, port), _Handler)
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(tls.tls_crt, tls.tls_key)
            self.socket = context.wrap_socket(self.socket, server_side=True)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"{'https' if self.tls is not None else 'http'}://{host!s}:{port}"
