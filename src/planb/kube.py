"""A small JSON client for the Kubernetes API (the kubeconfig handling comes from the kubernetes library).

planb's simulator and status read and write plain dicts, the API's own JSON, instead of the
library's generated models: one shape for every kind, core or custom.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import urllib3
import yaml
from kubernetes import config
from kubernetes.client import exceptions

from planb.errors import PlanbError

Obj = dict[str, Any]


class KubeError(PlanbError):
    """The API server answered an error."""

    def __init__(self, status: int, reason: str, body: str) -> None:
        self.status = status
        try:
            message = json.loads(body).get("message", body)
        except (ValueError, AttributeError):
            message = body
        super().__init__(f"{status} {reason}: {message}")


class Kube:
    """JSON requests against the API server a kubeconfig points at."""

    def __init__(self, kubeconfig: Path) -> None:
        self.kubeconfig = kubeconfig
        try:
            self.api = config.new_client_from_config(config_file=str(kubeconfig))  # type: ignore[no-untyped-call]
        except (config.ConfigException, yaml.YAMLError, OSError) as exc:
            raise KubeError(0, "bad kubeconfig", f"{kubeconfig}: {exc}") from exc

    def request(
        self,
        method: str,
        path: str,
        body: Obj | None = None,
        query: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Obj:
        method_, url, headers, payload, _ = self.api.param_serialize(
            method,
            path,
            query_params=list((query or {}).items()),
            header_params={"Accept": "application/json", "Content-Type": content_type},
            body=body,
            auth_settings=["BearerToken"],
        )
        try:
            resp = self.api.call_api(method_, url, header_params=headers, body=payload, _request_timeout=30)
            resp.read()
        except exceptions.ApiException as exc:
            raise KubeError(int(exc.status or 0), str(exc.reason), str(exc.body)) from exc
        except urllib3.exceptions.HTTPError as exc:
            raise KubeError(0, "API server unreachable", f"{self.kubeconfig}: {exc}") from exc
        if resp.status >= 400:
            raise KubeError(resp.status, str(resp.reason), resp.data.decode(errors="replace"))
        data = resp.data
        return dict(json.loads(data)) if data else {}

    def get(self, path: str, query: dict[str, str] | None = None) -> Obj | None:
        """GET; None on 404."""
        try:
            return self.request("GET", path, query=query)
        except KubeError as exc:
            if exc.status == 404:
                return None
            raise

    def items(self, path: str, query: dict[str, str] | None = None) -> list[Obj]:
        found = self.get(path, query)
        return list(found.get("items", [])) if found else []

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
        """
        query = {
            "watch": "true",
            "allowWatchBookmarks": "true",
            "resourceVersion": resource_version,
            "timeoutSeconds": str(timeout_seconds),
        }
        method, url, headers, _, _ = self.api.param_serialize(
            "GET",
            path,
            query_params=list(query.items()),
            header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
        )
        try:
            resp = self.api.call_api(method, url, header_params=headers, _request_timeout=(10, timeout_seconds + 30))
        except exceptions.ApiException as exc:
            raise KubeError(int(exc.status or 0), str(exc.reason), str(exc.body)) from exc
        except urllib3.exceptions.HTTPError as exc:
            raise KubeError(0, "API server unreachable", f"{self.kubeconfig}: {exc}") from exc
        if resp.status >= 400:
            raise KubeError(resp.status, str(resp.reason), resp.read().decode(errors="replace"))
        raw = resp.response
        buffer = b""
        try:
            for chunk in raw.stream(amt=None, decode_content=True):
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
            raw.release_conn()


def conditions(obj: Obj) -> dict[str, Obj]:
    """An object's status conditions by type."""
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


def is_true(obj: Obj, kind: str) -> bool:
    return conditions(obj).get(kind, {}).get("status") == "True"
