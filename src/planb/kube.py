"""A small JSON client for the Kubernetes API: plain dicts over one pooled HTTPS connection.

planb's simulator, stand-in and status read and write plain dicts, the API's own JSON, instead of a
client library's generated models: one shape for every kind, core or custom. The kubeconfig is read by
planb.kubeconfig (client certificates, tokens, exec plugins such as gke-gcloud-auth-plugin).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import urllib3

from planb.errors import UnreachableError
from planb.kube_limits import DeadlinePassed, Limits, read_within, watched_pool_classes
from planb.kube_objects import Obj as Obj  # the objects the client reads and writes, where its callers name them
from planb.kubeconfig import Connection, KubeconfigError, load

JSON = "application/json"
#: A list of PartialObjectMetadata: each object's metadata only (apimachinery's metav1 "as=" content negotiation).
METADATA_LIST = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json"
#: The most characters of a server's error message a limited client (Limits) keeps: a region's error text goes into
#: the keeper's log line and `planb status`, once a tick.
MAX_ERROR_TEXT = 2000
#: How often a request answered 429 with a Retry-After is sent again, after its seconds (at most MAX_RETRY_AFTER_S):
#: an API server still loading a resource ("storage is (re)initializing") or shedding load answers so. client-go
#: retries so up to 10 times (k8s.io/client-go rest/request.go checkWait, rest/with_retry.go IsNextRetry). Not a
#: limited client (Limits): its deadline bounds the whole request to another party's server, and its caller polls.
RETRIES_TOO_MANY = 5
MAX_RETRY_AFTER_S = 2.0


def retry_after(resp: urllib3.BaseHTTPResponse) -> float | None:
    """The seconds to wait before sending a request again that the server answered 429 with a Retry-After in seconds
    (at most MAX_RETRY_AFTER_S); None for any other answer (an HTTP date is not one the API server sends)."""
    if resp.status != 429:
        return None
    try:
        seconds = float(resp.headers.get("Retry-After", ""))
    except ValueError:
        return None
    return min(seconds, MAX_RETRY_AFTER_S) if seconds >= 0 else None  # NaN too


class KubeError(UnreachableError):
    """The API server answered an error, or could not be reached (status 0): the cluster cannot be read."""

    def __init__(self, status: int, reason: str, body: str, max_text: int | None = None) -> None:
        self.status = status
        try:
            message = json.loads(body).get("message", body)
        except (ValueError, AttributeError, RecursionError):
            message = body
        message = str(message)
        if max_text is not None and len(message) > max_text:
            message = f"{message[:max_text]}... (cut: {len(message)} characters)"
        super().__init__(f"{status} {reason}: {message}")


class KubeLimitError(KubeError):
    """A server's answer passed a limited client's deadline or size cap (planb.kube_limits.Limits): the answer is not
    read (status 0, as for a server that does not answer). `limit` is "deadline" or "size"."""

    def __init__(self, limit: str, reason: str, message: str) -> None:
        self.limit = limit
        super().__init__(0, reason, message)


class Kube:
    """JSON requests against the API server a kubeconfig points at."""

    def __init__(self, kubeconfig: Path, connection: Connection | None = None, limits: Limits | None = None) -> None:
        """`kubeconfig` is read with planb.kubeconfig.load, unless `connection` is given (one already read and
        checked, a region's: planb.regions.access.kubeconfig.load_region); then `kubeconfig` only names where
        it came from, in messages. `limits`: each request's overall deadline and its answer's size cap
        (planb.kube_limits), for a server that is another party's (a region's:
        planb.regions.access.connection.region_kube); None: urllib3's per-read timeout and no cap (the
        operator's own API server)."""
        self.kubeconfig = kubeconfig
        self.limits = limits
        if connection is None:
            try:
                connection = load(kubeconfig)
            except KubeconfigError as exc:
                raise KubeError(0, "bad kubeconfig", str(exc)) from exc
        self.conn: Connection = connection
        tls: dict[str, Any] = {}
        if self.conn.server[:8].lower() == "https://":
            # The API server's certificate is checked (against the kubeconfig's CA, else the system's), except for
            # a kubeconfig that says insecure-skip-tls-verify and names no CA (planb.kubeconfig refuses the pair).
            # The local stack's never says so: kwokctl names its CA for a secure port (kwok
            # pkg/kwokctl/runtime/binary/cluster_context.go: AddContext, pkg/utils/kubeconfig: BuildKubeconfig).
            tls = {"cert_reqs": "CERT_NONE" if self.conn.insecure else "CERT_REQUIRED"}
            if self.conn.ca_file:
                tls["ca_certs"] = self.conn.ca_file
            if self.conn.ca_data:
                tls["ca_cert_data"] = self.conn.ca_data  # a region's CA, held in memory (urllib3's ssl_wrap_socket)
            if self.conn.cert_file:
                tls.update(cert_file=self.conn.cert_file, key_file=self.conn.key_file)
        self.http = urllib3.PoolManager(maxsize=4, retries=False, **tls)
        if limits is not None:
            # Connections that hand their sockets to each request's Deadline, which shuts them down when it passes.
            self.http.pool_classes_by_scheme = watched_pool_classes()

    def _headers(self, content_type: str | None, refresh: bool = False, accept: str = JSON) -> dict[str, str]:
        headers = {"Accept": accept}
        if content_type:
            headers["Content-Type"] = content_type
        try:
            token = self.conn.bearer(refresh)
        except (KubeconfigError, OSError) as exc:
            raise KubeError(0, "no credentials", f"{self.kubeconfig}: {exc}") from exc
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return headers

    def _url(self, path: str, query: dict[str, str] | None) -> str:
        return self.conn.server + path + (f"?{urlencode(query)}" if query else "")

    def _send(
        self,
        method: str,
        url: str,
        payload: bytes | None,
        content_type: str | None,
        timeout: Any,
        stream: bool,
        accept: str = JSON,
    ) -> urllib3.BaseHTTPResponse:
        """One request; sent again once with a fresh exec-plugin token after a 401."""

        def send(refresh: bool) -> urllib3.BaseHTTPResponse:
            try:
                return self.http.request(
                    method,
                    url,
                    body=payload,
                    headers=self._headers(content_type, refresh, accept),
                    timeout=timeout,
                    preload_content=not stream,
                )
            except urllib3.exceptions.HTTPError as exc:
                raise KubeError(0, "API server unreachable", f"{self.kubeconfig}: {exc}") from exc
            except ValueError:
                # http.client refuses a header value with CR, LF or another control character, quoting it: the
                # bearer token. Not a crash of the caller's loop, and not the credential in its message.
                raise KubeError(
                    0,
                    "request not sent",
                    f"{self.kubeconfig}: the HTTP client refused a header value "
                    "(not shown: it may hold the credential)",
                ) from None

        resp = send(refresh=False)
        if resp.status == 401 and self.conn.exec_plugin is not None:
            if stream:
                resp.close()  # its body unread: the connection is not used again
            resp.release_conn()
            resp = send(refresh=True)
        return resp

    def _where(self) -> str:
        return f"{self.kubeconfig} ({self.conn.server})"

    def _answer(
        self,
        method: str,
        path: str,
        query: dict[str, str] | None,
        payload: bytes | None,
        content_type: str | None,
        accept: str,
        timeout: float,
        within: float | None = None,
    ) -> tuple[urllib3.BaseHTTPResponse, bytes]:
        """One request and its whole body. A limited client reads it in chunks under its Limits, its deadline
        shortened to `within` if that is less (else raises KubeLimitError); another as urllib3 does, `timeout` seconds
        per read."""
        url = self._url(path, query)
        if self.limits is None:
            resp = self._send(method, url, payload, content_type, timeout, stream=False, accept=accept)
            return resp, resp.data
        limits = self.limits
        if within is not None and within < limits.deadline_s:
            limits = replace(limits, deadline_s=within)

        def send(per_read: urllib3.Timeout) -> urllib3.BaseHTTPResponse:
            return self._send(method, url, payload, content_type, per_read, stream=True, accept=accept)

        try:
            # The body cut short raises urllib3's or the OS's error (the headers': _send's KubeError).
            answer, body = read_within(limits, send, (KubeError, urllib3.exceptions.HTTPError, OSError))
        except DeadlinePassed as exc:  # the deadline cut it: say so, not what the cut socket raised
            raise self._too_slow(limits, method, path) from exc
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise KubeError(0, "answer cut short", f"{self._where()}: {method} {path}: {exc}") from exc
        if body is None:
            raise KubeLimitError(
                "size",
                "answer too large",
                f"{self._where()}: {method} {path} answered more than {limits.max_bytes} bytes, the most planb reads "
                "of this server's answer (a larger one would be held in memory whole). Fix: if the cluster holds "
                f"that much (objects listed cluster-wide), raise {limits.size_setting}; else see what its API server "
                "answers",
            )
        return answer, body

    def _too_slow(self, limits: Limits, method: str, path: str) -> KubeLimitError:
        return KubeLimitError(
            "deadline",
            "answer too slow",
            f"{self._where()}: {method} {path} was not answered whole within {limits.deadline_s:g} s, the deadline "
            "planb gives this server's answers (one that answers slowly, even a byte at a time, would hold planb "
            "there). Fix: see why its API server or the network to it is slow, or raise "
            f"{limits.deadline_setting}",
        )

    def _error(self, resp: urllib3.BaseHTTPResponse, data: bytes) -> KubeError:
        """The KubeError of an answer with an error status; a limited client keeps MAX_ERROR_TEXT of its message."""
        text = data.decode(errors="replace")
        return KubeError(resp.status, str(resp.reason), text, MAX_ERROR_TEXT if self.limits is not None else None)

    def request(
        self,
        method: str,
        path: str,
        body: Obj | None = None,
        query: dict[str, str] | None = None,
        content_type: str = JSON,
        accept: str = JSON,
    ) -> Obj:
        payload = json.dumps(body).encode() if body is not None else None
        resp, data = self._answer(method, path, query, payload, content_type, accept, 30)
        for _ in range(RETRIES_TOO_MANY if self.limits is None else 0):
            wait = retry_after(resp)
            if wait is None:
                break
            time.sleep(wait)
            resp, data = self._answer(method, path, query, payload, content_type, accept, 30)
        if 300 <= resp.status < 400:  # not followed (retries=False): a redirect is no answer, whatever its body
            raise KubeError(
                resp.status, str(resp.reason), f"{self.kubeconfig}: {method} {path} answered a redirect, not followed"
            )
        if not 200 <= resp.status < 300:
            raise self._error(resp, data)
        if not data:
            return {}
        try:
            found = json.loads(data)
        except (ValueError, RecursionError):  # not JSON (a proxy's HTML page), not UTF-8, nested too deep
            found = None
        if not isinstance(found, dict):
            # The path and status only: the body is whatever answered, not planb's to print.
            raise KubeError(
                resp.status,
                str(resp.reason),
                f"{self.kubeconfig}: {method} {path} answered with something other than a JSON object (not shown)",
            )
        return found

    def get(self, path: str, query: dict[str, str] | None = None) -> Obj | None:
        """GET; None on 404."""
        try:
            return self.request("GET", path, query=query)
        except KubeError as exc:
            if exc.status == 404:
                return None
            raise

    def text(self, path: str, query: dict[str, str] | None = None, timeout: float = 30) -> str:
        """GET a plain-text resource (a pod's log), waiting `timeout` seconds at most for the answer (per read; for a
        limited client, for the whole answer)."""
        resp, data = self._answer("GET", path, query, None, None, JSON, timeout, within=timeout)
        if not 200 <= resp.status < 300:
            raise self._error(resp, data)
        return str(data.decode(errors="replace"))

    def names(self, path: str) -> list[str]:
        """The names of a collection's objects, from a list of their metadata only (the server leaves out spec and
        status: a CRD's schema is up to 1.4 MB here)."""
        found = self.request("GET", path, accept=METADATA_LIST)
        return [str(item["metadata"]["name"]) for item in found.get("items", [])]

    def items(self, path: str, query: dict[str, str] | None = None) -> list[Obj]:
        found = self.get(path, query)
        listed = (found.get("items") or []) if found else []
        if not isinstance(listed, list) or not all(isinstance(item, dict) for item in listed):
            raise KubeError(200, "OK", f"{self.kubeconfig}: GET {path} answered a list whose items are not objects")
        return listed

    def create(self, path: str, body: Obj) -> Obj:
        return self.request("POST", path, body)

    def delete(self, path: str, options: Obj | None = None) -> bool:
        """DELETE (with DeleteOptions, e.g. gracePeriodSeconds); False when it was already gone."""
        try:
            self.request("DELETE", path, options)
        except KubeError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def merge_patch(self, path: str, body: Obj) -> Obj:
        return self.request("PATCH", path, body, content_type="application/merge-patch+json")

    def watch(self, path: str, resource_version: str, timeout_seconds: int = 60) -> Iterator[Obj]:
        """Stream the watch events of a collection from `resource_version` ({"type", "object"} each).

        The server ends the stream after `timeout_seconds`; a KubeError with status 410 means the
        version is too old to resume from (list again). BOOKMARK events carry only a new version.
        A limited client does not watch: planb reads another party's server (a region's) by get and list only.
        """
        if self.limits is not None:
            raise NotImplementedError(f"{self._where()}: a client with limits (planb.kube_limits) does not watch")
        query = {
            "watch": "true",
            "allowWatchBookmarks": "true",
            "resourceVersion": resource_version,
            "timeoutSeconds": str(timeout_seconds),
        }
        url = self._url(path, query)
        resp = self._send("GET", url, None, None, urllib3.Timeout(connect=10, read=timeout_seconds + 30), stream=True)
        if resp.status >= 400:
            body = resp.read().decode(errors="replace")
            resp.release_conn()
            raise KubeError(resp.status, str(resp.reason), body)
        buffer = b""
        try:
            for chunk in resp.stream(amt=None, decode_content=True):
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if not line.strip():
                        continue
                    event = json.loads(line)
                    if event.get("type") == "ERROR":
                        status = event.get("object") or {}
                        raise KubeError(int(status.get("code") or 0), str(status.get("reason", "")), json.dumps(status))
                    yield dict(event)
        except urllib3.exceptions.HTTPError as exc:
            raise KubeError(0, "watch interrupted", f"{self.kubeconfig}: {exc}") from exc
        finally:
            resp.release_conn()
