"""Google's discovery documents, as google-api-python-client ships them: the emulator's contract.

The documents are read from the installed ``googleapiclient`` package
(``googleapiclient/discovery_cache/documents/<api>.<version>.json``), never copied into this repository, and
each is loaded once per process, on first use, so importing this module costs nothing
(https://developers.google.com/discovery/v1/reference/apis describes their format).

``API_DOCUMENTS`` names the six the emulator serves: GKE (container v1), Compute Engine (compute v1, for
reservations and the instance groups behind pools), Service Usage (serviceusage v1), Cloud Resource Manager
(cloudresourcemanager v3, for ``projects.testIamPermissions``,
https://cloud.google.com/resource-manager/reference/rest/v3/projects/testIamPermissions) and Cloud Storage (storage
v1, for the checkpoint bucket's ``buckets.get`` and ``buckets.insert``,
https://cloud.google.com/storage/docs/json_api/v1/buckets) and the Organization Policy API (orgpolicy v2, for the day-0
check's ``projects.policies.getEffectivePolicy``, ``gke_emulator.project_setup``). Cloud Quotas has no document in
the package, so nothing the emulator serves under ``/cloudquotas/v1/`` is checked.

``find_method`` maps a request the emulator serves (its HTTP method and path) onto the document's method:
its id, and the ``$ref`` of its request and response schemas (``resources...methods...request.$ref``).
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import re
from dataclasses import dataclass
from typing import Any

from planb.errors import PlanbError
from planb.local.gke_emulator.project import SERVICE_USAGE_ROOT_PATHS

Body = dict[str, Any]

#: API -> (document file, the prefix under which the emulator serves the document's paths).
API_DOCUMENTS: dict[str, tuple[str, str]] = {
    "container": ("container.v1.json", "/"),
    "compute": ("compute.v1.json", "/"),
    "serviceusage": ("serviceusage.v1.json", "/serviceusage/"),
    # rootUrl https://cloudresourcemanager.googleapis.com/, servicePath "": its paths (``v3/...``) under the prefix.
    "cloudresourcemanager": ("cloudresourcemanager.v3.json", "/cloudresourcemanager/"),
    # rootUrl https://storage.googleapis.com/, servicePath "storage/v1/": Google's own paths, at the emulator's root.
    "storage": ("storage.v1.json", "/"),
    # rootUrl https://orgpolicy.googleapis.com/, servicePath "": its paths (``v2/...``) under the prefix.
    "orgpolicy": ("orgpolicy.v2.json", "/orgpolicy/"),
}
#: Paths the emulator serves that no shipped document describes.
UNDOCUMENTED_PREFIXES = ("/cloudquotas/v1/", "/planb/v1/")


class DiscoveryError(PlanbError):
    """A discovery document is missing from the installed google-api-python-client, or a schema from it."""


@dataclass(frozen=True)
class Method:
    """One REST method of a discovery document."""

    api: str
    id: str
    http_method: str
    request: str | None
    response: str | None


@functools.cache
def document(api: str) -> Body:
    """The API's discovery document (loaded once per process)."""
    if api not in API_DOCUMENTS:
        raise DiscoveryError(f"planb knows no discovery document for {api!r}; known: {', '.join(API_DOCUMENTS)}")
    name = API_DOCUMENTS[api][0]
    try:
        folder = importlib.resources.files("googleapiclient.discovery_cache") / "documents"
        loaded: Body = json.loads((folder / name).read_text())
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise DiscoveryError(
            f"the discovery document {name} is not installed: the emulator validates against the one "
            "google-api-python-client ships (pyproject.toml pins it); install the project's dependencies "
            f"(`make setup`) ({exc})"
        ) from exc
    return loaded


def revision(api: str) -> str:
    """The document's revision (e.g. container v1 ``20261027``)."""
    return str(document(api).get("revision", ""))


def version(api: str) -> str:
    """The document's API version (``v1``; cloudresourcemanager ``v3``)."""
    return str(document(api).get("version", ""))


def schema(api: str, schema_id: str) -> Body:
    """A named schema of the API's document."""
    found = document(api).get("schemas", {}).get(schema_id)
    if found is None:
        raise DiscoveryError(f"{api} {version(api)} (revision {revision(api)}) has no schema {schema_id!r}")
    result: Body = found
    return result


def _methods(resource: Body) -> list[Body]:
    out = list((resource.get("methods") or {}).values())
    for child in (resource.get("resources") or {}).values():
        out.extend(_methods(child))
    return out


@functools.cache
def _routes(api: str) -> list[tuple[str, re.Pattern[str], Method]]:
    """(HTTP method, path pattern, method) for every method of the document, as the emulator serves it."""
    doc = document(api)
    prefix = API_DOCUMENTS[api][1] + str(doc.get("servicePath") or "")
    out = []
    for entry in _methods(doc):
        template = str(entry.get("flatPath") or entry["path"])
        parts = re.split(r"(\{[^}]+\})", template)
        pattern = "".join("[^/:]+" if part.startswith("{") else re.escape(part) for part in parts)
        method = Method(
            api=api,
            id=str(entry["id"]),
            http_method=str(entry["httpMethod"]),
            request=(entry.get("request") or {}).get("$ref"),
            response=(entry.get("response") or {}).get("$ref"),
        )
        out.append((method.http_method, re.compile(re.escape(prefix) + pattern), method))
    return out


def api_of(path: str) -> str | None:
    """The API whose document describes a path the emulator serves, None for one no document describes."""
    if path.startswith(UNDOCUMENTED_PREFIXES):
        return None
    if path.startswith("/compute/v1/"):
        return "compute"
    if path.startswith("/serviceusage/v1/") or SERVICE_USAGE_ROOT_PATHS.fullmatch(path):
        return "serviceusage"
    if path.startswith("/cloudresourcemanager/v3/"):
        return "cloudresourcemanager"
    if path.startswith("/orgpolicy/v2/"):
        return "orgpolicy"
    if path.startswith("/storage/v1/"):
        return "storage"
    if path.startswith("/v1/"):
        return "container"
    return None


def find_method(http_method: str, path: str) -> Method | None:
    """The document's method for a request the emulator serves (path without its query), None when none."""
    api = api_of(path)
    if api is None:
        return None
    if api == "serviceusage" and not path.startswith("/serviceusage/"):
        path = "/serviceusage" + path  # the same method, at the root URL gcloud's endpoint override uses
    for verb, pattern, method in _routes(api):
        if verb == http_method and pattern.fullmatch(path):
            return method
    return None
