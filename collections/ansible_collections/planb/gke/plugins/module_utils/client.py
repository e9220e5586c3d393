# planb.gke: the GKE v1 REST client (JSON in and out, credentials, long-running operations).
"""GkeClient: requests to container.googleapis.com (or the planb emulator), GKE errors as GkeError."""

from __future__ import annotations

import json
import re
import time
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import quote

from ansible.module_utils.urls import open_url
from ansible_collections.planb.gke.plugins.module_utils.args import DEFAULT_ENDPOINT, DEFAULT_SCOPES
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError

Body = dict[str, Any]
#: Statuses of a resource while an operation of an earlier run still works on it.
TRANSITIONAL = ("PROVISIONING", "RECONCILING", "STOPPING")
#: What api_path() produces: percent-encoded segments joined by '/', optionally a custom verb (``:setSize``).
_API_PATH = re.compile(r"^[A-Za-z0-9._~%-]+(/[A-Za-z0-9._~%-]+)*(:[A-Za-z]+)?$")


def api_path(*segments: str) -> str:
    """A GKE API path from its segments, each percent-encoded whole: a '/', '?' or '#' inside a project, location
    or name stays inside that segment instead of addressing another resource."""
    for segment in segments:
        if str(segment) in ("", ".", ".."):
            raise GkeError(f"Refusing a GKE API path with an empty or dot segment: {list(segments)!r}")
    return "/".join(quote(str(segment), safe="") for segment in segments)


def google_token(params: dict[str, Any]) -> str:
    """An OAuth access token for auth_kind application, serviceaccount or machineaccount (google-auth)."""
    kind = params["auth_kind"]
    try:
        import google.auth
        import google.auth.compute_engine
        import google.auth.transport.requests
        from google.oauth2 import service_account
    except ImportError as exc:
        raise GkeError(f"auth_kind={kind} needs the google-auth and requests libraries ({exc})") from exc
    scopes = params.get("scopes") or DEFAULT_SCOPES
    # google-auth is untyped; its credentials are used through Any.
    accounts: Any = service_account
    compute: Any = google.auth.compute_engine
    creds: Any
    if kind == "serviceaccount":
        contents = params.get("service_account_contents")
        if contents:
            info = json.loads(contents) if isinstance(contents, str) else contents
            creds = accounts.Credentials.from_service_account_info(info, scopes=scopes)
        else:
            creds = accounts.Credentials.from_service_account_file(params["service_account_file"], scopes=scopes)
    elif kind == "machineaccount":
        creds = compute.Credentials(params.get("service_account_email") or "default")
    else:
        creds = google.auth.default(scopes=scopes)[0]
    creds.refresh(google.auth.transport.requests.Request())
    return str(creds.token)


class GkeClient:
    """Minimal GKE v1 REST client: JSON in/out, GKE error bodies -> GkeError, LRO waiting."""

    def __init__(self, params: dict[str, Any]) -> None:
        self.params = params
        self.endpoint = (params.get("api_endpoint") or DEFAULT_ENDPOINT).rstrip("/")
        self.timeout: float = params["timeout"]
        self.poll_interval: float = params["poll_interval"]
        self._token: str | None = None
        #: Every operation waited for: name, operationType, target, polls, elapsed_s, status.
        self.operations: list[Body] = []

    def _auth_header(self) -> dict[str, str]:
        kind = self.params["auth_kind"]
        if kind == "none":
            return {}
        if kind == "accesstoken":
            return {"Authorization": f"Bearer {self.params['access_token']}"}
        if self._token is None:
            self._token = google_token(self.params)
        return {"Authorization": f"Bearer {self._token}"}

    def request(self, method: str, path: str, body: Body | None = None, allow_404: bool = False) -> Any:
        """The JSON answer of ``method`` on ``v1/path`` (built by api_path); None for a 404 when allowed."""
        if not _API_PATH.match(path):
            raise GkeError(f"{path!r} is not a GKE API path built from quoted segments; nothing was sent")
        url = f"{self.endpoint}/v1/{path}"
        headers = {"Content-Type": "application/json", **self._auth_header()}
        data = json.dumps(body) if body is not None else None
        try:
            response = open_url(url, method=method, data=data, headers=headers, timeout=60)
            text = response.read()
        except HTTPError as exc:
            text = exc.read()
            try:
                error = json.loads(text).get("error", {})
            except ValueError:
                error = {"message": text.decode(errors="replace")[:500]}
            if exc.code == 404 and allow_404:
                return None
            raise GkeError(
                f"GKE API {method} {path} answered {exc.code} {error.get('status', '')}: {error.get('message', '')}"
            ) from exc
        except URLError as exc:
            raise GkeError(f"Cannot reach the GKE API at {self.endpoint}: {exc.reason}") from exc
        return json.loads(text) if text else {}

    def get(self, path: str) -> Any:
        """The resource at ``path``, None when it does not exist."""
        return self.request("GET", path, allow_404=True)

    def wait(self, op: Body, location_path: str, what: str) -> Body:
        """Poll an operation until DONE; record polls; raise on error or timeout."""
        name = op["name"]
        started = time.monotonic()
        polls = 0
        record: Body = {"name": name, "operationType": op.get("operationType"), "target": what, "polls": 0}
        self.operations.append(record)
        while op.get("status") != "DONE":
            if time.monotonic() - started > self.timeout:
                record.update(polls=polls, elapsed_s=round(time.monotonic() - started, 1), status="TIMEOUT")
                raise GkeError(
                    f"Timed out after {self.timeout}s waiting for operation {name} ({op.get('operationType')}) "
                    f"on {what}; GKE continues it. Re-run to resume waiting, or raise the timeout."
                )
            time.sleep(self.poll_interval)
            op = self.request("GET", f"{location_path}/{api_path('operations', name)}")
            polls += 1
        record.update(polls=polls, elapsed_s=round(time.monotonic() - started, 1), status="DONE")
        if op.get("error"):
            record["error"] = op["error"].get("message")
            raise GkeError(
                f"GKE operation {name} ({op.get('operationType')}) on {what} failed: {op['error'].get('message')}. "
                "The resource is left in status ERROR; re-run the play to delete and recreate it "
                "(recreate_on_error), or delete it by hand."
            )
        return op

    def settle(self, path: str, what: str) -> Any:
        """Wait while a resource is PROVISIONING/RECONCILING/STOPPING (an operation from an earlier run)."""
        started = time.monotonic()
        current = self.get(path)
        while current is not None and current.get("status") in TRANSITIONAL:
            if time.monotonic() - started > self.timeout:
                raise GkeError(f"{what} stayed {current.get('status')} for {self.timeout}s; re-run later.")
            time.sleep(self.poll_interval)
            current = self.get(path)
        return current
