"""The failover controller's Kubernetes API client: the standard library only (urllib, ssl, json).

The controller needs five calls, so it carries them instead of a client library that a stock Python
image lacks: get one object, list one resource in one namespace (or the whole cluster), a JSON patch
(RFC 6902), a merge patch of a status subresource (RFC 7386) and the creation of an Event.

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
"""

from __future__ import annotations

import contextlib
import json
import os
import ssl
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

Obj = dict[str, Any]

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"


class ApiError(Exception):
    """The API server answered with an error status (0: it could not be reached)."""

    def __init__(self, status: int, reason: str, body: str = "") -> None:
        super().__init__(f"{status} {reason}: {body[:300]}" if body else f"{status} {reason}")
        self.status = status
        self.reason = reason
        self.body = body


class CredentialsError(Exception):
    """Neither in-cluster credentials nor an explicit server and token file were given."""


class Api(Protocol):
    """The calls the controller makes; `KubeApi` talks HTTP, tests give an in-memory API server."""

    def get(self, group: str, version: str, plural: str, namespace: str, name: str) -> Obj: ...

    def list_objects(self, group: str, version: str, plural: str, namespace: str) -> Obj: ...

    def json_patch(self, group: str, version: str, plural: str, namespace: str, name: str, ops: list[Obj]) -> Obj: ...

    def merge_patch_status(
        self, group: str, version: str, plural: str, namespace: str, name: str, body: Obj
    ) -> Obj: ...

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
        self.credentials = credentials
        self.timeout = timeout
        self.context: ssl.SSLContext | None = None
        if credentials.server.startswith("https://"):
            cafile = str(credentials.ca_file) if credentials.ca_file else None
            self.context = ssl.create_default_context(cafile=cafile)

    def token(self) -> str:
        return self.credentials.token_file.read_text().strip()

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Obj:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json", "Authorization": f"Bearer {self.token()}"}
        if data is not None:
            headers["Content-Type"] = content_type
        req = urllib.request.Request(self.credentials.server.rstrip("/") + path, data, headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self.context) as resp:
                payload = resp.read()
        except urllib.error.HTTPError as exc:
            text = exc.read().decode(errors="replace")
            reason = str(exc.reason)
            with contextlib.suppress(ValueError, AttributeError):  # a metav1.Status names its reason (Forbidden...)
                reason = str(json.loads(text).get("reason") or reason)
            raise ApiError(exc.code, reason, text) from exc
        except (urllib.error.URLError, OSError) as exc:
            raise ApiError(0, f"{self.credentials.server} unreachable", str(exc)) from exc
        found: Any = json.loads(payload) if payload else {}
        return dict(found)

    def get(self, group: str, version: str, plural: str, namespace: str, name: str) -> Obj:
        return self.request("GET", resource_path(group, version, plural, namespace, name))

    def list_objects(self, group: str, version: str, plural: str, namespace: str) -> Obj:
        return self.request("GET", resource_path(group, version, plural, namespace))

    def json_patch(self, group: str, version: str, plural: str, namespace: str, name: str, ops: list[Obj]) -> Obj:
        return self.request("PATCH", resource_path(group, version, plural, namespace, name), ops, JSON_PATCH)

    def merge_patch_status(self, group: str, version: str, plural: str, namespace: str, name: str, body: Obj) -> Obj:
        path = resource_path(group, version, plural, namespace, name) + "/status"
        return self.request("PATCH", path, body, MERGE_PATCH)

    def create_event(self, namespace: str, body: Obj) -> Obj:
        return self.request("POST", resource_path("", "v1", "events", namespace), body)
