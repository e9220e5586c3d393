# planb.gke: the GKE v1 REST client (JSON in and out, credentials, long-running operations).
"""GkeClient: requests to container.googleapis.com (or the planb emulator), GKE errors as GkeError."""

from __future__ import annotations

import json
import random
import re
import ssl
import time
from http.client import HTTPException
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import quote, urlencode

from ansible.module_utils.urls import Request, make_context
from ansible_collections.planb.gke.plugins.module_utils.credentials import QUOTA_PROJECT, Access
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError, error_body, error_info
from ansible_collections.planb.gke.plugins.module_utils.google_token import google_token
from ansible_collections.planb.gke.plugins.module_utils.operation_progress import poll_entry

Body = dict[str, Any]
#: Statuses of a resource while an operation of an earlier run still works on it.
TRANSITIONAL = ("PROVISIONING", "RECONCILING", "STOPPING")
#: What api_path() produces: percent-encoded segments joined by '/', optionally a custom verb (``:setSize``).
_API_PATH = re.compile(r"^[A-Za-z0-9._~%-]+(/[A-Za-z0-9._~%-]+)*(:[A-Za-z]+)?$")
#: Answers worth another try of an idempotent request: rate limited, or a server-side failure.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
#: The Compute Engine API, where a node pool's managed instance groups (its nodes) live.
COMPUTE_ENDPOINT = "https://compute.googleapis.com"
#: The form of a node pool's instanceGroupUrls (GKE v1 NodePool); nothing else is fetched.
_MIG_URL = re.compile(
    r"^https://(?:www|compute)\.googleapis\.com/compute/v1/projects/(?P<project>[a-z][-a-z0-9.:]*[a-z0-9])"
    r"/zones/(?P<zone>[a-z]+-[a-z]+[0-9]+-(?:ai[0-9]+)?[a-z])/instanceGroupManagers/(?P<name>[a-z]([-a-z0-9]*[a-z0-9])?)$"
)


def api_path(*segments: str) -> str:
    """A GKE API path from its segments, each percent-encoded whole: a '/', '?' or '#' inside a project, location
    or name stays inside that segment instead of addressing another resource."""
    for segment in segments:
        if str(segment) in ("", ".", ".."):
            raise GkeError(f"Refusing a GKE API path with an empty or dot segment: {list(segments)!r}")
    return "/".join(quote(str(segment), safe="") for segment in segments)


class GkeClient:
    """GKE v1 REST client: JSON in/out, GKE error bodies -> GkeError, LRO waiting.

    Transport rules (each keeps a long-running play from failing, or from leaking its credential):

    * plain ``http://`` only to a loopback address (the local emulator) and only with ``auth_kind: none``: a
      Google token is never sent over http, refused when the client is made, before any request;
    * redirects are never followed, so the Authorization header goes to api_endpoint only;
    * GET requests (reads and operation polls) are retried on connection errors, 429 and 5xx with bounded
      exponential backoff (honouring Retry-After); POST/PUT/DELETE only when the connection was refused, i.e.
      nothing was sent, since GKE may have applied a write whose answer was lost;
    * a Google credential is refreshed before it expires (within TOKEN_MARGIN_S) and once on a 401;
    * every request carries ``x-goog-user-project`` when a quota project is known: the ``quota_project`` option
      (or GOOGLE_CLOUD_QUOTA_PROJECT), else the one the credential carries (ADC's ``quota_project_id``). With user
      credentials, Google bills and checks quota of APIs such as Service Usage and Cloud Quotas against that
      project, and refuses some calls without it
      (https://cloud.google.com/docs/authentication/troubleshoot-adc#user-creds-client-based; the header:
      https://cloud.google.com/apis/docs/system-parameters).
    """

    #: Tries per request (the first one included) and the backoff between them: BASE * 2**n, at most MAX.
    MAX_TRIES = 6
    BACKOFF_BASE_S = 1.0
    BACKOFF_MAX_S = 30.0
    #: Refresh a Google access token this long before it expires (they live about an hour).
    TOKEN_MARGIN_S = 300.0
    #: Seconds one HTTP request may take.
    HTTP_TIMEOUT_S = 60.0
    #: The API's name in messages, its version's path, what its paths are called, whether it takes query
    #: parameters (subclasses for other Google APIs change them).
    API_NAME, API_VERSION, PATH_KIND, QUERIES = "GKE API", "v1", "a GKE API path", True

    def __init__(self, access: Access | dict[str, Any]) -> None:
        """A client of ``access``, or of a module's options (resolved here): refused before any request when its
        endpoint is (``Access.refusal``)."""
        self.access = access if isinstance(access, Access) else Access.of(access)
        if self.access.refusal:
            raise GkeError(self.access.refusal)
        self.endpoint = self.access.api_endpoint.rstrip("/")
        self.timeout = self.access.timeout
        self.poll_interval = self.access.poll_interval
        self._token: str | None = None
        self._expiry: float | None = None
        self._tls: ssl.SSLContext | None = None
        #: The quota project the Google credential carries (set when a token is fetched).
        self._credential_quota_project: str | None = None
        #: Every operation waited for: name, operationType, target, polls, elapsed_s, status, progress (one per poll).
        self.operations: list[Body] = []
        #: Requests retried (method, path, why), for tests and the module's result.
        self.retries: list[Body] = []

    # ---- credentials ----------------------------------------------------------------------
    def _refreshable(self) -> bool:
        return self.access.auth_kind in ("application", "serviceaccount", "machineaccount")

    def _auth_header(self) -> dict[str, str]:
        kind = self.access.auth_kind
        if kind == "none":
            return {}
        if kind == "accesstoken":
            return {"Authorization": f"Bearer {self.access.access_token}"}
        stale = self._expiry is not None and time.time() > self._expiry - self.TOKEN_MARGIN_S
        if self._token is None or stale:
            self._token, self._expiry, self._credential_quota_project = google_token(self.access)
        return {"Authorization": f"Bearer {self._token}"}

    def _quota_header(self) -> dict[str, str]:
        """``x-goog-user-project``: the quota_project option, else the credential's quota project, else none."""
        project = self.access.quota_project or self._credential_quota_project
        if not project:
            return {}
        if not QUOTA_PROJECT.fullmatch(str(project)):
            raise GkeError(
                f"The quota project {project!r} (x-goog-user-project) is not a Google Cloud project ID or number; "
                "fix quota_project (GOOGLE_CLOUD_QUOTA_PROJECT) or re-run `gcloud auth application-default "
                "set-quota-project PROJECT_ID`. Nothing was sent."
            )
        return {"x-goog-user-project": str(project)}

    def quota_project(self) -> str | None:
        """The project sent as ``x-goog-user-project`` (the option, else the credential's; known once a token is
        fetched), or None when none is sent."""
        return self._quota_header().get("x-goog-user-project")

    # ---- requests ---------------------------------------------------------------------------
    def request(self, method: str, path: str, body: Body | None = None, allow_404: bool = False) -> Any:
        """The JSON answer of ``method`` on ``v1/path`` (built by api_path); None for a 404 when allowed."""
        return self.query(method, path, {}, body, allow_404)

    def query(
        self, method: str, path: str, query: dict[str, str], body: Body | None = None, allow_404: bool = False
    ) -> Any:
        """``request`` with query parameters (a page token), where the API takes them."""
        if (query and not self.QUERIES) or not _API_PATH.fullmatch(path):
            raise GkeError(f"{path!r} is not {self.PATH_KIND} built from quoted segments; nothing was sent")
        url = f"{self.endpoint}/{self.API_VERSION}/{path}" + (f"?{urlencode(query)}" if query else "")
        return self._call(method, url, f"{self.API_NAME} {method} {path}", body, allow_404)

    def _backoff(self, tries: int, why: str, what: str, retry_after: str | None = None) -> None:
        delay = min(self.BACKOFF_MAX_S, self.BACKOFF_BASE_S * 2 ** (tries - 1))
        if retry_after and retry_after.strip().isdigit():
            delay = min(self.BACKOFF_MAX_S, max(delay, float(retry_after)))
        self.retries.append({"request": what, "try": tries, "why": why, "delay_s": round(delay, 3)})
        time.sleep(delay * random.uniform(0.8, 1.0))

    def _tls_context(self, url: str) -> ssl.SSLContext:
        """One TLS context per client, made as ansible's open_url makes it (the system's CAs, certificates verified):
        open_url would make a new one, reading the CA store again (about 30 ms), for every request. An ``http://``
        endpoint (the local emulator) speaks no TLS and planb follows no redirect, so its requests get a context that
        never reads the CA store: ansible's Request makes one for every request that passes none."""
        if not url.startswith("https://"):
            return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        if self._tls is None:
            self._tls = make_context()
        return self._tls

    def _call(self, method: str, url: str, what: str, body: Body | None, allow_404: bool) -> Any:
        data = json.dumps(body) if body is not None else None
        idempotent = method in ("GET", "HEAD")
        refreshed = False
        tries = 0
        while True:
            tries += 1
            headers = {"Content-Type": "application/json", **self._auth_header(), **self._quota_header()}
            try:
                response = Request().open(
                    method, url, data=data, headers=headers, timeout=self.HTTP_TIMEOUT_S, follow_redirects="none",
                    context=self._tls_context(url),
                )  # fmt: skip
                text = response.read()
                return json.loads(text) if text else {}
            except HTTPError as exc:
                code = exc.code
                if 300 <= code < 400:
                    raise GkeError(
                        f"{what} answered a redirect ({code}) to {exc.headers.get('Location') or exc.url}. planb does "
                        "not follow redirects, so its credential is only ever sent to api_endpoint; set api_endpoint "
                        "to the API's final address."
                    ) from exc
                error = error_body(exc)
                if code == 404 and allow_404:
                    return None
                if code == 401 and not refreshed and self._refreshable():
                    refreshed = True
                    self._token = None  # the token was revoked or expired early: fetch a new one, once
                    continue
                if code in RETRY_STATUSES and idempotent and tries < self.MAX_TRIES:
                    self._backoff(
                        tries, f"{code} {error.get('status', '')}".strip(), what, exc.headers.get("Retry-After")
                    )
                    continue
                hint = ""
                if code == 401:
                    hint = (
                        " The credential was refused: a fixed access_token cannot be renewed, use auth_kind "
                        "application or serviceaccount for long runs."
                        if self.access.auth_kind == "accesstoken"
                        else " The credential was refused even after a refresh."
                    )
                elif code in RETRY_STATUSES and not idempotent:
                    hint = (
                        " Not retried: GKE may have applied the write; re-run the play, it converges from what exists."
                    )
                failure = GkeError(
                    f"{what} answered {code} {error.get('status', '')}: {error.get('message', '')}"
                    f"{f' (after {tries} tries)' if tries > 1 else ''}.{hint}"
                )
                info = error_info(error)
                failure.code, failure.reason = code, str(info.get("reason") or "")
                failure.metadata = {str(k): str(v) for k, v in (info.get("metadata") or {}).items()}
                raise failure from exc
            except URLError as exc:
                # Refused: the connection never opened, nothing was sent, so even a write is safe to repeat.
                refused = isinstance(exc.reason, ConnectionRefusedError)
                if (idempotent or refused) and tries < self.MAX_TRIES:
                    self._backoff(tries, f"connection error: {exc.reason}", what)
                    continue
                raise GkeError(
                    f"Cannot reach the {self.API_NAME} at {self.endpoint}: {exc.reason} ({what}, {tries} tries)"
                ) from exc
            except (OSError, HTTPException) as exc:
                # The connection broke after the request went out (reset, timeout, closed without an answer).
                if idempotent and tries < self.MAX_TRIES:
                    self._backoff(tries, f"connection error: {exc!r}", what)
                    continue
                raise GkeError(
                    f"The connection to the {self.API_NAME} at {self.endpoint} broke during {what}: {exc!r}"
                    f"{'' if idempotent else '; not retried, GKE may have applied the write: re-run the play'}"
                ) from exc

    def instance_group_size(self, url: str, what: str) -> int:
        """targetSize of the managed instance group at ``url`` (one of a node pool's instanceGroupUrls).

        The request goes to the Compute Engine API (https://compute.googleapis.com), or to api_endpoint
        when that is a loopback address (the planb emulator serves instanceGroupManagers too), and only
        for a URL of the Compute Engine API's form: no other host ever receives the credential.
        """
        match = _MIG_URL.fullmatch(url)
        if not match:
            raise GkeError(
                f"Cannot tell how many nodes {what} has: {url!r} is not a Compute Engine instanceGroupManagers URL "
                "(https://www.googleapis.com/compute/v1/projects/P/zones/Z/instanceGroupManagers/NAME), so it is "
                "not read (the credential goes to Google's APIs only) and nothing is deleted (planb's policy)."
            )
        base = self.endpoint if self.access.loopback else COMPUTE_ENDPOINT
        path = api_path("projects", match["project"], "zones", match["zone"], "instanceGroupManagers", match["name"])
        try:
            group = self._call("GET", f"{base}/compute/v1/{path}", f"Compute Engine API GET {path}", None, True)
        except GkeError as exc:
            raise GkeError(
                f"Cannot tell how many nodes {what} has, so nothing is deleted (planb's policy): {exc} Reading a "
                "node pool's instance groups needs compute.instanceGroupManagers.get (e.g. roles/compute.viewer)."
            ) from exc
        return 0 if group is None else int(group.get("targetSize") or 0)

    def get(self, path: str) -> Any:
        """The resource at ``path``, None when it does not exist."""
        return self.request("GET", path, allow_404=True)

    def wait(self, op: Body, location_path: str, what: str) -> Body:
        """Poll an operation until DONE; record each poll (poll_entry); raise on error or timeout."""
        name = op["name"]
        started = time.monotonic()
        polls = 0
        seen: list[Body] = []
        record: Body = {
            "name": name,
            "operationType": op.get("operationType"),
            "target": what,
            "polls": 0,
            "progress": seen,
        }
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
            seen.append(poll_entry(op, time.monotonic() - started))
        record.update(polls=polls, elapsed_s=round(time.monotonic() - started, 1), status="DONE")
        if op.get("error"):
            record["error"] = op["error"].get("message")
            raise GkeError(
                f"GKE operation {name} ({op.get('operationType')}) on {what} failed: {op['error'].get('message')}. "
                "GKE leaves it in status ERROR and planb does not delete it on its own: delete it by hand once it "
                "runs nothing, or re-run with recreate_on_error=true (playbooks: -e planb_recreate_on_error=true), "
                "which deletes and recreates it only while it has no nodes."
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
