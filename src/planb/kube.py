"""A small JSON client for the Kubernetes API (the kubeconfig handling comes from the kubernetes library).

planb's simulator and status read and write plain dicts, the API's own JSON, instead of the
library's generated models: one shape for every kind, core or custom.
"""

from __future__ import annotations

import json
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

    def delete(self, path: str) -> bool:
        """DELETE; False when it was already gone."""
        try:
            self.request("DELETE", path)
        except KubeError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def merge_patch(self, path: str, body: Obj) -> Obj:
        return self.request("PATCH", path, body, content_type="application/merge-patch+json")


def conditions(obj: Obj) -> dict[str, Obj]:
    """An object's status conditions by type."""
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


def is_true(obj: Obj, kind: str) -> bool:
    return conditions(obj).get(kind, {}).get("status") == "True"
