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

The QuotaInfos are found by display name and dimensions from planb's catalog (``planb.catalog.quotas``),
as the roles look them up; their ``quotaId`` and ``metric`` are the emulator's own (``planb-emulated-*``),
never Google's, which planb does not know.
"""

from __future__ import annotations

import re
import secrets
import time
from typing import Any
from urllib.parse import parse_qs, unquote

from planb.catalog import gpu, quotas, tpu
from planb.local.gke_emulator.store import Store

Body = dict[str, Any]

SERVICE_USAGE = "/serviceusage/v1/"
#: Service Usage's paths as its own host serves them, for a client pointed at the emulator's root URL.
SERVICE_USAGE_AT_ROOT = "/v1/"
#: The Service Usage paths served at the emulator's root URL too (gke_emulator.discovery checks them as Service Usage).
SERVICE_USAGE_ROOT_PATHS = re.compile(r"/v1/(projects/[^/]+/services/[^/:]+(:enable)?|operations/[^/]+)")
CLOUD_QUOTAS = "/cloudquotas/v1/"
CLOUD_RESOURCE_MANAGER = "/cloudresourcemanager/v3/"
#: Every accelerator quota's value unless set otherwise: enough for any profile of the catalog.
DEFAULT_QUOTA = 100000
#: Compute Engine's CPU quotas by display name -> regional (False: the project's total over every region), read by the
#: day-0 check (https://cloud.google.com/compute/resource-usage#cpu_quota); set with gke_emulator.project_setup.
CPU_QUOTAS = {"CPUs": True, "N2 CPUs": True, "N2D CPUs": True, "C2 CPUs": True, "C3 CPUs": True,
              "Preemptible CPUs": True, "CPUs (all regions)": False}  # fmt: skip
#: QuotaInfos per page when the caller does not say (small, so clients must follow nextPageToken).
PAGE_SIZE = 3
_SERVICE = re.compile(r"^[a-z0-9-]+(\.[a-z0-9-]+)*\.googleapis\.com$")
#: An IAM permission: ``service.resource.verb`` (https://cloud.google.com/iam/docs/overview#permissions).
_PERMISSION = re.compile(r"^[a-z][a-z0-9]*(\.[a-zA-Z][a-zA-Z0-9]*){2,}$")
#: Permissions that exist but are not tested on a project (googleapis/google-cloud-java#722: Google answers 400 for
#: these in a project's testIamPermissions; they apply to an organization or folder).
_NOT_ON_A_PROJECT = frozenset({"resourcemanager.projects.create", "resourcemanager.projects.list"})


class ProjectApiError(Exception):
    """An answer in Google's error shape (the emulator's ApiError is built from it)."""

    def __init__(self, code: int, message: str, status: str, details: list[Body] | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status
        #: Google's typed error details (a google.rpc.ErrorInfo naming the reason), when there are any.
        self.details = details or []


def service_disabled(project: str, service: str) -> Body:
    """The google.rpc.ErrorInfo Google sends with a call to an API that is off on the project billed for it
    (https://cloud.google.com/apis/design/errors#error_info: reason SERVICE_DISABLED, domain googleapis.com, the
    service and the consumer in its metadata). The emulator bills the project named in the path."""
    return {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "SERVICE_DISABLED",
        "domain": "googleapis.com",
        "metadata": {"service": service, "consumer": f"projects/{project}"},
    }


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


#: Quota type -> the catalog's TPU (by generation) and GPU (by accelerator) quota keys of that type.
QUOTA_TYPES: dict[str, tuple[dict[str, quotas.QuotaKey], dict[str, quotas.QuotaKey]]] = {
    quotas.ON_DEMAND: (quotas.TPU_ON_DEMAND, quotas.GPU_ON_DEMAND),
    quotas.PREEMPTIBLE: (quotas.TPU_PREEMPTIBLE, quotas.GPU_PREEMPTIBLE),
}


def quota_keys(quota_type: str = quotas.ON_DEMAND) -> dict[str, quotas.QuotaKey]:
    """Machine type -> the quota key of ``quota_type`` its pools consume (catalog machine types with a sourced key)."""
    tpu_keys, gpu_keys = QUOTA_TYPES[quota_type]
    out: dict[str, quotas.QuotaKey] = {}
    for generation in tpu.GENERATIONS:
        key = tpu_keys.get(generation.name)
        for machine in generation.machine_types:
            if key is not None:
                out[machine.name] = key
    for entry in gpu.MACHINES:
        gpu_key = gpu_keys.get(entry.gke_accelerator)
        if gpu_key is not None:
            out[entry.machine_type] = gpu_key
    return out


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
        machine = str(request.get("machineType") or "")
        quota_type = str(request.get("quotaType") or quotas.ON_DEMAND)
        if quota_type not in QUOTA_TYPES:
            raise ProjectApiError(
                400, f"quotaType must be one of {', '.join(QUOTA_TYPES)}, not {quota_type!r}", "INVALID_ARGUMENT"
            )
        key = quota_keys(quota_type).get(machine)
        value, region = request.get("value"), str(request.get("region") or "")
        if key is None:
            known = ", ".join(sorted(quota_keys(quota_type)))
            raise ProjectApiError(
                400,
                f"no quota is known for machine type {machine!r} ({quota_type}); machine types with one: {known}",
                "INVALID_ARGUMENT",
            )
        if not isinstance(value, int) or value < 0 or not re.fullmatch(r"[a-z]+-[a-z]+[0-9]+", region):
            raise ProjectApiError(
                400,
                f"value must be a whole number >= 0 and region a region such as us-east5, not {request!r}",
                "INVALID_ARGUMENT",
            )
        entry = {
            "project": str(request.get("project") or "*"),
            "displayName": key.display_name,
            "dimensions": {"region": region, **key.dimensions},
            "value": value,
        }
        self.state["quotas"] = [
            q
            for q in self.state["quotas"]
            if (q["project"], q["displayName"], q["dimensions"])
            != (entry["project"], key.display_name, entry["dimensions"])
        ]
        self.state["quotas"].insert(0, entry)
        return {"quotas": self.state["quotas"]}

    def quota_infos(self, project: str, service: str, query: str) -> Body:
        if service != "compute.googleapis.com":
            return {"quotaInfos": []}
        by_name: dict[str, list[quotas.QuotaKey]] = {}
        for key in [key for quota_type in QUOTA_TYPES for key in quota_keys(quota_type).values()]:
            if key not in by_name.setdefault(key.display_name, []):
                by_name[key.display_name].append(key)
        by_name.update({name: [] for name in CPU_QUOTAS})
        default = self.state.get("quotaDefaults", {}).get(project, DEFAULT_QUOTA)
        infos = []
        for display, keys in sorted(by_name.items()):
            extra = sorted({dim for key in keys for dim in key.dimensions})
            regional = ["region"] if CPU_QUOTAS.get(display, True) else []
            set_here = [
                {
                    "dimensions": dict(q["dimensions"]),
                    "details": {"value": str(q["value"])},
                    "applicableLocations": [q["dimensions"].get("region", "global")],
                }
                for q in self.state["quotas"]
                if q["displayName"] == display and q["project"] in (project, "*")
            ]
            quota_id = f"planb-emulated-{_slug(display)}"
            infos.append(
                {
                    "name": f"projects/{project}/locations/global/services/{service}/quotaInfos/{quota_id}",
                    "quotaId": quota_id,
                    "metric": f"{service}/planb_emulated_{_slug(display).replace('-', '_')}",
                    "service": service,
                    "isPrecise": True,
                    "containerType": "PROJECT",
                    "dimensions": [*regional, *extra],
                    "metricDisplayName": display,
                    "quotaDisplayName": display,
                    "metricUnit": "1/{project}/{region}",
                    # Most specific first, as the API orders them; the last applies to every other value.
                    "dimensionsInfos": [
                        *set_here,
                        {"dimensions": {}, "details": {"value": str(default)}, "applicableLocations": ["global"]},
                    ],
                }
            )
        params = parse_qs(query)
        try:
            size = int((params.get("pageSize") or [str(PAGE_SIZE)])[0]) or PAGE_SIZE
            start = int((params.get("pageToken") or ["0"])[0] or 0)
        except ValueError as exc:
            raise ProjectApiError(400, f"Invalid pageSize or pageToken: {exc}", "INVALID_ARGUMENT") from exc
        page: Body = {"quotaInfos": infos[start : start + size]}
        if start + size < len(infos):
            page["nextPageToken"] = str(start + size)
        return page

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
