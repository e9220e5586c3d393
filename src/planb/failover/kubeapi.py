"""The failover controller's Kubernetes API client: the standard library only (http.client, urllib, ssl, json).

The controller needs four calls, so it carries them instead of a client library that a stock Python
image lacks: get one object, list one resource in one namespace (or the whole cluster), a JSON patch
(RFC 6902) and the creation of an Event.

It authenticates with a bearer token read from a file and trusts one CA file:

* in a pod (`Credentials.in_cluster`), the ServiceAccount's projected token and CA under
  ``/var/run/secrets/kubernetes.io/serviceaccount/`` and the API server at
  ``KUBERNETES_SERVICE_HOST``:``KUBERNETES_SERVICE_PORT``, as client-go's rest.InClusterConfig reads
  them (https://kubernetes.io/docs/tasks/run-application/access-api-from-pod/#directly-accessing-the-rest-api);
* anywhere else, a server URL, a token file and a CA file given as flags (local mode: a token of the
  chart's ServiceAccount from ``kubectl create token``).

The token file is read again for every request: a bound ServiceAccount token is rotated by the kubelet
(https://kubernetes.io/docs/reference/access-authn-authz/service-accounts-admin/#bound-service-account-token-volume),
so a copy read once would expire. No kubeconfig is parsed.

Its requests go on one kept-alive HTTP/1.1 connection, as client-go's transport keeps its connections: a connection
and TLS handshake per request cost the controller and the API server more than its list of Workloads every poll.
When the environment names a proxy for the server (``HTTPS_PROXY``, not bypassed by ``NO_PROXY``), they go through
urllib's opener, which takes it, as before.

The token goes only where the server URL says (planb's policy, because a bearer token sent elsewhere is a
credential lost): a redirect is refused, not followed (urllib would follow a 3xx with the Authorization header
to wherever it points), and a plain ``http://`` server is refused unless it is a loopback address (tests and a
local API server on this machine).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import ssl
import threading
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

Obj = dict[str, Any]
#: An answer's status, reason, Location header and body.
Answer = tuple[int, str, str, bytes]

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
JSON_PATCH = "application/json-patch+json"


class ApiError(Exception):
    """The API server answered with an error status (0: it could not be reached)."""

    def __init__(self, status: int, reason: str, body: str = "") -> None:
        super().__init__(f"{status} {reason}: {body[:300]}" if body else f"{status} {reason}")
        self.status = status
        self.reason = reason
        self.body = body


class CredentialsError(Exception):
    """Neither in-cluster credentials nor an explicit server and token file were given, or the server is one the
    token must not be sent to."""


#: The hosts a plain http:// server may name: the token then never leaves this machine.
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})


def check_server(server: str) -> None:
    """Refuse a server URL the bearer token must not travel to: anything but https://, except http:// to loopback."""
    url = urllib.parse.urlsplit(server)
    if url.scheme == "https" and url.hostname:
        return
    if url.scheme == "http" and (url.hostname or "") in LOOPBACK_HOSTS:
        return
    raise CredentialsError(
        f"planb's policy: the controller sends its ServiceAccount token only over https:// (http:// only to "
        f"127.0.0.1, ::1 or localhost), because a token sent in clear can be read on the way; not to {server!r}. "
        "Fix: pass --server https://<host>:<port> (and --ca-file)"
    )


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    """A 3xx is answered as the error it is (urllib raises HTTPError) instead of followed with the token."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class Api(Protocol):
    """The calls the controller makes; `KubeApi` talks HTTP, tests give an in-memory API server."""

    def get(self, group: str, version: str, plural: str, namespace: str, name: str) -> Obj: ...

    def list_objects(self, group: str, version: str, plural: str, namespace: str) -> Obj: ...

    def json_patch(self, group: str, version: str, plural: str, namespace: str, name: str, ops: list[Obj]) -> Obj: ...

    def create_event(self, namespace: str, body: Obj) -> Obj: ...


@dataclass(frozen=True)
class Credentials:
    """Where the API server is and what proves who the controller is."""

    server: str
    token_file: Path
    #: None: the system's trust store (or plain http, which only tests use).
    ca_file: Path | None = None

    @classmethod
    def in_cluster(cls, env: dict[str, str] | None = None, secrets: Path = SERVICE_ACCOUNT_DIR) -> Credentials:
        env = dict(os.environ) if env is None else env
        host, port = env.get("KUBERNETES_SERVICE_HOST", ""), env.get("KUBERNETES_SERVICE_PORT", "")
        token = secrets / "token"
        if not host or not port or not token.is_file():
            raise CredentialsError(
                "not in a pod (KUBERNETES_SERVICE_HOST/PORT or the ServiceAccount token is missing). "
                "Fix: pass --server, --token-file and --ca-file"
            )
        if ":" in host:  # an IPv6 address
            host = f"[{host}]"
        return cls(server=f"https://{host}:{port}", token_file=token, ca_file=secrets / "ca.crt")


def resource_path(group: str, version: str, plural: str, namespace: str = "", name: str = "") -> str:
    """/api/v1/... for the core group, /apis/<group>/<version>/... otherwise; namespace '' is cluster-wide."""
    base = f"/api/{version}" if not group else f"/apis/{group}/{version}"
    if namespace:
        base += f"/namespaces/{urllib.parse.quote(namespace, safe='')}"
    base += f"/{plural}"
    return base + (f"/{urllib.parse.quote(name, safe='')}" if name else "")


class KubeApi:
    """One API server, a bearer token read per request, one CA."""

    def __init__(self, credentials: Credentials, timeout: float = 30.0) -> None:
        check_server(credentials.server)
        self.credentials = credentials
        self.timeout = timeout
        self.context: ssl.SSLContext | None = None
        if credentials.server.startswith("https://"):
            cafile = str(credentials.ca_file) if credentials.ca_file else None
            self.context = ssl.create_default_context(cafile=cafile)
        self.opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=self.context), _RefuseRedirects)
        url = urllib.parse.urlsplit(credentials.server)
        #: The path the server URL carries before the API's ('' for an API server's).
        self.base = url.path.rstrip("/")
        #: No proxy in the environment for the server (urllib's rule): requests go on one kept-alive connection, not
        #: a new connection and TLS handshake each (a list every poll); through a proxy, by urllib's opener.
        self.direct = not urllib.request.getproxies().get(url.scheme) or bool(
            urllib.request.proxy_bypass(url.hostname or "")
        )
        self.connection: http.client.HTTPConnection | None = None
        self.lock = threading.Lock()

    def token(self) -> str:
        return self.credentials.token_file.read_text().strip()

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Obj:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json", "Authorization": f"Bearer {self.token()}"}
        if data is not None:
            headers["Content-Type"] = content_type
        send = self._kept if self.direct else self._opened
        status, reason, location, payload = send(method, path, data, headers)
        if 300 <= status < 400:
            raise ApiError(
                status,
                f"redirect to {location or 'elsewhere'} refused: the token goes only to {self.credentials.server}",
            )
        if status >= 400:
            text = payload.decode(errors="replace")
            with contextlib.suppress(ValueError, AttributeError):  # a metav1.Status names its reason (Forbidden...)
                reason = str(json.loads(text).get("reason") or reason)
            raise ApiError(status, reason, text)
        found: Any = json.loads(payload) if payload else {}
        return dict(found)

    def _kept(self, method: str, path: str, data: bytes | None, headers: dict[str, str]) -> Answer:
        """One request on the kept-alive connection (HTTP/1.1), opened again once when the server closed it
        meanwhile (a GET whatever broke; a write only when it broke before the server could read it)."""
        with self.lock:
            for attempt in (1, 2):
                reused = self.connection is not None
                if self.connection is None:
                    self.connection = self._connect()
                try:
                    self.connection.request(method, self.base + path, data, headers)
                    response = self.connection.getresponse()
                    answer = (
                        response.status,
                        str(response.reason),
                        response.getheader("Location") or "",
                        response.read(),
                    )
                except (OSError, http.client.HTTPException) as exc:
                    self.connection.close()
                    self.connection = None
                    unread = isinstance(exc, (http.client.RemoteDisconnected, BrokenPipeError))
                    if reused and attempt == 1 and (method == "GET" or unread):
                        continue
                    raise ApiError(0, f"{self.credentials.server} unreachable", str(exc)) from exc
                if response.will_close:
                    self.connection.close()
                    self.connection = None
                return answer
        raise AssertionError("unreachable")

    def _connect(self) -> http.client.HTTPConnection:
        url = urllib.parse.urlsplit(self.credentials.server)
        if url.scheme == "https":
            return http.client.HTTPSConnection(url.netloc, timeout=self.timeout, context=self.context)
        return http.client.HTTPConnection(url.netloc, timeout=self.timeout)

    def _opened(self, method: str, path: str, data: bytes | None, headers: dict[str, str]) -> Answer:
        """One request through urllib's opener, which takes the proxy the environment names."""
        req = urllib.request.Request(self.credentials.server.rstrip("/") + path, data, headers, method=method)
        try:
            with self.opener.open(req, timeout=self.timeout) as resp:
                return resp.status, str(resp.reason), "", resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, str(exc.reason), exc.headers.get("Location") or "", exc.read()
        except (urllib.error.URLError, OSError) as exc:
            raise ApiError(0, f"{self.credentials.server} unreachable", str(exc)) from exc

    def get(self, group: str, version: str, plural: str, namespace: str, name: str) -> Obj:
        return self.request("GET", resource_path(group, version, plural, namespace, name))

    def list_objects(self, group: str, version: str, plural: str, namespace: str) -> Obj:
        return self.request("GET", resource_path(group, version, plural, namespace))

    def json_patch(self, group: str, version: str, plural: str, namespace: str, name: str, ops: list[Obj]) -> Obj:
        return self.request("PATCH", resource_path(group, version, plural, namespace, name), ops, JSON_PATCH)

    def create_event(self, namespace: str, body: Obj) -> Obj:
        return self.request("POST", resource_path("", "v1", "events", namespace), body)
