"""The project-level Google APIs the GKE roles call before the cluster exists: Service Usage, Cloud Quotas and
Cloud Resource Manager's rights check.

The emulator serves them under its own URL, each under a prefix named after the API's host:

* ``GET  /serviceusage/v1/projects/P/services/S``           Service ``{name, parent, config, state}``
* ``POST /serviceusage/v1/projects/P/services/S:enable``    a long-running Operation ``{name, done}``
* ``GET  /serviceusage/v1/operations/O``                    that operation (``done`` after ``op_seconds``)
* the same three at ``/v1/...``, Service Usage's own paths, for a client (gcloud) whose Service Usage endpoint is
  the emulator's root URL, as its GKE endpoint is
* ``GET  /cloudquotas/v1/projects/P/locations/global/services/compute.googleapis.com/quotaInfos``
  QuotaInfos ``{quotaInfos, nextPageToken}``, ``pageSize``/``pageToken`` as the real API pages
* ``POST /cloudresourcemanager/v3/projects/P:testIamPermissions`` ``{permissions: [...]}``
  TestIamPermissionsResponse ``{permissions}``: the subset of the request the caller holds on the project

(Service Usage: googleapis ``google/api/serviceusage/v1/serviceusage.proto``,
https://cloud.google.com/service-usage/docs/reference/rest; Cloud Quotas:
https://cloud.google.com/docs/quotas/reference/rest/v1/projects.locations.services.quotaInfos/list; Cloud Resource
Manager v3: https://cloud.google.com/resource-manager/reference/rest/v3/projects/testIamPermissions, checked against
``cloudresourcemanager.v3.json`` like the others, ``gke_emulator.discovery``.)

testIamPermissions as Google documents it: "There are no permissions required for making this API call"; the answer
holds only the permissions the caller has (TestIamPermissionsResponse: "A subset of
`TestPermissionsRequest.permissions` that the caller is allowed"), and an empty subset is ``{}`` (proto3's JSON
mapping leaves an empty repeated field out, https://protobuf.dev/programming-guides/json/); "Permissions with
wildcards (such as `*` or `storage.*`) are not allowed" (TestIamPermissionsRequest) and a permission that cannot be
tested on a project is refused too (googleapis/google-cloud-java#722: ``resourcemanager.projects.create`` on a
project, 400): both are 400 INVALID_ARGUMENT here. Google's wording of those refusals is not published; the
emulator's names the permission. It refuses a name that is not ``service.resource.verb``; it cannot know which
well-formed names Google lists, so it refuses none of those.

By default every API is ENABLED, every accelerator quota is large and the caller holds every permission, so local
mode runs end to end. Three switches, like ``fail-next``:

* ``POST /planb/v1/services {"project": "P"|"*", "service": "S", "state": "DISABLED", "enableRefused": false}``
  (``planb local gke-emulator disable-api S``): the API reads DISABLED until an ``:enable`` call flips it
  (or, with ``enableRefused``, answers that call 403 as a caller without permission gets). While
  ``container.googleapis.com`` is DISABLED for a project, the GKE API answers that project 403.
* ``POST /planb/v1/quotas {"project": "P"|"*", "region": "R", "machineType": "M", "value": N, "quotaType": T}``
  (``planb local gke-emulator set-quota [--preemptible]``): the quota M's pools of type T consume reads N in region R;
  T is ``on-demand`` (the default: on-demand pools) or ``preemptible`` (Spot and flex-start pools), the two quota
  types Google gives each accelerator (``planb.catalog.quotas``), each served as its own QuotaInfo.
* ``POST /planb/v1/permissions {"project": "P"|"*", "permission": "container.clusters.create", "granted": false}``
  (``planb local gke-emulator withhold-permission PERMISSION``): testIamPermissions leaves the permission out of its
  answer for that project until it is granted again (``"granted": true``, ``--grant``). While
  ``cloudresourcemanager.googleapis.com`` is DISABLED for a project, testIamPermissions answers that project 403.

The QuotaInfos and the quota switch are ``gke_emulator.cloud_quotas``'; the errors' shape ``gke_emulator.errors``.
"""

from __future__ import annotations

import re
import secrets
import time
from typing import Any
from urllib.parse import unquote

from planb.local.gke_emulator import cloud_quotas
from planb.local.gke_emulator.errors import ProjectApiError, service_disabled
from planb.local.gke_emulator.store import Store

Body = dict[str, Any]

SERVICE_USAGE = "/serviceusage/v1/"
#: Service Usage's paths as its own host serves them, for a client pointed at the emulator's root URL.
SERVICE_USAGE_AT_ROOT = "/v1/"
#: The Service Usage paths served at the emulator's root URL too (gke_emulator.discovery checks them as Service Usage).
SERVICE_USAGE_ROOT_PATHS = re.compile(r"/v1/(projects/[^/]+/services/[^/:]+(:enable)?|operations/[^/]+)")
CLOUD_QUOTAS = "/cloudquotas/v1/"
CLOUD_RESOURCE_MANAGER = "/cloudresourcemanager/v3/"
_SERVICE = re.compile(r"^[a-z0-9-]+(\.[a-z0-9-]+)*\.googleapis\.com$")
#: An IAM permission: ``service.resource.verb`` (https://cloud.google.com/iam/docs/overview#permissions).
_PERMISSION = re.compile(r"^[a-z][a-z0-9]*(\.[a-zA-Z][a-zA-Z0-9]*){2,}$")
#: Permissions that exist but are not tested on a project (googleapis/google-cloud-java#722: Google answers 400 for
#: these in a project's testIamPermissions; they apply to an organization or folder).
_NOT_ON_A_PROJECT = frozenset({"resourcemanager.projects.create", "resourcemanager.projects.list"})


class ProjectApis:
    """Service Usage and Cloud Quotas over the emulator's store (``state["projectApis"]``)."""

    def __init__(self, store: Store, op_seconds: float) -> None:
        self.store = store
        self.op_seconds = op_seconds

    @property
    def state(self) -> Body:
        """The store's ``projectApis`` table (read each time: the store may have been reset)."""
        state = self.store.project_apis
        for key, empty in (("services", {}), ("quotas", []), ("operations", {}), ("permissions", {})):
            state.setdefault(key, empty)
        return state

    # ---- Service Usage ----------------------------------------------------------------------
    def _override(self, project: str, service: str) -> Body | None:
        services: Body = self.state["services"]
        found: Body | None = services.get(f"{project}/{service}") or services.get(f"*/{service}")
        return found or services.get(f"{project}/*")  # a fresh project's (gke_emulator.project_setup)

    def service_state(self, project: str, service: str) -> str:
        override = self._override(project, service)
        return str(override["state"]) if override else "ENABLED"

    def _service(self, project: str, service: str) -> Body:
        if not _SERVICE.fullmatch(service):
            raise ProjectApiError(404, f"Service {service} not found or permission denied.", "NOT_FOUND")
        return {
            "name": f"projects/{project}/services/{service}",
            "parent": f"projects/{project}",
            "config": {"name": service},
            "state": self.service_state(project, service),
        }

    def enable(self, project: str, service: str) -> Body:
        self._service(project, service)
        override = self._override(project, service)
        if override and override.get("enableRefused"):
            raise ProjectApiError(
                403,
                f"Permission denied to enable service [{service}] (injected by `planb local gke-emulator disable-api "
                "--refuse-enable`).",
                "PERMISSION_DENIED",
            )
        self.state["services"][f"{project}/{service}"] = {"state": "ENABLED"}
        name = f"operations/acat.planb-{int(time.time() * 1000)}-{secrets.token_hex(4)}"
        self.state["operations"][name] = {"doneAt": time.time() + self.op_seconds, "project": project}
        return {"name": name, "done": False}

    def operation(self, name: str) -> Body:
        op = self.state["operations"].get(name)
        if op is None:
            raise ProjectApiError(404, f"Operation {name} not found.", "NOT_FOUND")
        done = time.time() >= op["doneAt"]
        return {"name": name, "done": done, **({"response": {}} if done else {})}

    def set_service(self, request: Body) -> Body:
        service = str(request.get("service") or "")
        state = str(request.get("state") or "DISABLED").upper()
        if not _SERVICE.fullmatch(service) or state not in ("ENABLED", "DISABLED"):
            raise ProjectApiError(
                400,
                f"service must be a *.googleapis.com name and state ENABLED or DISABLED, not {request!r}",
                "INVALID_ARGUMENT",
            )
        project = str(request.get("project") or "*")
        self.state["services"][f"{project}/{service}"] = {
            "state": state,
            "enableRefused": bool(request.get("enableRefused")),
        }
        return {"services": self.state["services"]}

    # ---- Cloud Quotas -----------------------------------------------------------------------
    def set_quota(self, request: Body) -> Body:
        """The switch `set-quota` (gke_emulator.cloud_quotas)."""
        return cloud_quotas.set_quota(self.state, request)

    def quota_infos(self, project: str, service: str, query: str) -> Body:
        """cloudquotas quotaInfos.list (gke_emulator.cloud_quotas)."""
        return cloud_quotas.quota_infos(self.state, project, service, query)

    # ---- Cloud Resource Manager: the caller's rights --------------------------------------------
    def holds(self, project: str, permission: str) -> bool:
        """Whether the caller holds ``permission`` on the project (every one, unless withheld by the switch)."""
        withheld: Body = self.state["permissions"]
        found = withheld.get(f"{project}/{permission}") or withheld.get(f"*/{permission}")
        return bool(found["granted"]) if found else True

    def set_permission(self, request: Body) -> Body:
        permission = str(request.get("permission") or "")
        granted = request.get("granted", False)
        if not _PERMISSION.fullmatch(permission) or not isinstance(granted, bool):
            raise ProjectApiError(
                400,
                f"permission must be an IAM permission such as container.clusters.create and granted true or false, "
                f"not {request!r}",
                "INVALID_ARGUMENT",
            )
        project = str(request.get("project") or "*")
        self.state["permissions"][f"{project}/{permission}"] = {"granted": granted}
        return {"permissions": self.state["permissions"]}

    def test_iam_permissions(self, project: str, request: Body) -> Body:
        """cloudresourcemanager.projects.testIamPermissions: the subset of ``permissions`` the caller holds
        (https://cloud.google.com/resource-manager/reference/rest/v3/projects/testIamPermissions)."""
        if self.service_state(project, "cloudresourcemanager.googleapis.com") != "ENABLED":
            # What Google answers while an API is disabled on the project (reason SERVICE_DISABLED), as for GKE.
            raise ProjectApiError(
                403,
                f"Cloud Resource Manager API has not been used in project {project} before or it is disabled. Enable "
                "it with `gcloud services enable cloudresourcemanager.googleapis.com` and retry.",
                "PERMISSION_DENIED",
                [service_disabled(project, "cloudresourcemanager.googleapis.com")],
            )
        asked = [str(p) for p in request.get("permissions") or []]
        for permission in asked:
            if "*" in permission:
                raise ProjectApiError(
                    400,
                    f"Permissions with wildcards (such as * or storage.*) are not allowed: {permission!r}.",
                    "INVALID_ARGUMENT",
                )
            if not _PERMISSION.fullmatch(permission) or permission in _NOT_ON_A_PROJECT:
                raise ProjectApiError(
                    400, f"Permission {permission!r} is not valid for resource projects/{project}.", "INVALID_ARGUMENT"
                )
        held = [p for p in dict.fromkeys(asked) if self.holds(project, p)]
        return {"permissions": held} if held else {}

    # ---- routing ----------------------------------------------------------------------------
    def _service_usage(self, method: str, rest: str) -> Body | None:
        """A Service Usage call by its path after ``v1/``; None when ``rest`` names none."""
        if m := re.fullmatch(r"projects/([^/]+)/services/([^/:]+)(:enable)?", rest):
            if m.group(3) and method == "POST":
                return self.enable(m.group(1), m.group(2))
            if not m.group(3) and method == "GET":
                return self._service(m.group(1), m.group(2))
        if re.fullmatch(r"operations/[^/]+", rest) and method == "GET":
            return self.operation(rest)
        return None

    def route(self, method: str, path: str, query: str, body: Body | None = None) -> Body | None:
        """The answer for a Service Usage, Cloud Quotas or Cloud Resource Manager path, None for any other path."""
        path = "/".join(unquote(segment).replace("/", "%2F") for segment in path.split("/"))
        if path.startswith(SERVICE_USAGE):
            answer = self._service_usage(method, path[len(SERVICE_USAGE) :])
            if answer is not None:
                return answer
        elif path.startswith(SERVICE_USAGE_AT_ROOT) and SERVICE_USAGE_ROOT_PATHS.fullmatch(path):
            # A client whose Service Usage endpoint is the emulator's own URL (gcloud with
            # api_endpoint_overrides/serviceusage set to it, as for container) sends the API's paths as they
            # are on serviceusage.googleapis.com: ``v1/{name}`` at the root (serviceusage.v1.json: rootUrl
            # https://serviceusage.googleapis.com/, servicePath "", services.get flatPath
            # ``v1/{v1Id}/{v1Id1}/services/{servicesId}``, operations.get ``v1/operations/{operationsId}``).
            # No GKE path has this shape (GKE's are ``v1/projects/*/locations/*/...``).
            return self._service_usage(method, path[len(SERVICE_USAGE_AT_ROOT) :])
        elif path.startswith(CLOUD_QUOTAS):
            rest = path[len(CLOUD_QUOTAS) :]
            m = re.fullmatch(r"projects/([^/]+)/locations/global/services/([^/]+)/quotaInfos", rest)
            if m and method == "GET":
                return self.quota_infos(m.group(1), m.group(2), query)
        elif path.startswith(CLOUD_RESOURCE_MANAGER):
            m = re.fullmatch(r"projects/([^/:]+):testIamPermissions", path[len(CLOUD_RESOURCE_MANAGER) :])
            if m and method == "POST":
                return self.test_iam_permissions(m.group(1), body or {})
        else:
            return None
        raise ProjectApiError(404, f"Not found: {method} {path}", "NOT_FOUND")
