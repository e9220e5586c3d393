# planb.gke: the project-level Google APIs the gcp_service and gcp_quota_check modules call.
"""Service Usage (enable APIs) and Cloud Quotas (read a quota), over the collection's REST client.

Service Usage v1 (googleapis ``google/api/serviceusage/v1/serviceusage.proto``,
https://cloud.google.com/service-usage/docs/reference/rest): ``GET projects/P/services/S`` gives
``{name, parent, config, state: ENABLED|DISABLED}``; ``POST projects/P/services/S:enable`` (body ``{}``)
gives a ``google.longrunning.Operation`` ``{name, done, error?}``, polled at ``GET {name}``.

Cloud Quotas v1 (https://cloud.google.com/docs/quotas/reference/rest/v1/projects.locations.services.quotaInfos/list),
read for the on-demand or the preemptible quota a pool draws on (planb.catalog.quotas says which plan draws on which):
``GET projects/P/locations/global/services/compute.googleapis.com/quotaInfos`` lists QuotaInfos
``{quotaId, metric, dimensions, quotaDisplayName, metricDisplayName, dimensionsInfos[{dimensions,
details.value, applicableLocations}]}``, page by page (``nextPageToken``). A DimensionsInfo applies to every
value of a dimension it does not name, except values another DimensionsInfo names; they come most specific
first, so the first that matches is the one in effect.

The google.cloud collection's ``gcp_serviceusage_service`` has its URLs fixed to Google's hosts, so it
cannot reach planb's emulator; these modules take ``serviceusage_endpoint`` / ``quota_endpoint``, or derive
them from a loopback ``api_endpoint`` (the emulator serves both APIs under its own URL).
"""

from __future__ import annotations

import re
import time
from typing import Any

from ansible_collections.planb.gke.plugins.module_utils._generated.machine_types import FACTS as MACHINE_TYPES
from ansible_collections.planb.gke.plugins.module_utils.args import DEFAULT_ENDPOINT
from ansible_collections.planb.gke.plugins.module_utils.client import GkeClient, api_path
from ansible_collections.planb.gke.plugins.module_utils.credentials import Access, check_auth, is_loopback
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError
from ansible_collections.planb.gke.plugins.module_utils.locations import region_of

Body = dict[str, Any]
Params = dict[str, Any]

SERVICEUSAGE_ENDPOINT = "https://serviceusage.googleapis.com"
CLOUDQUOTAS_ENDPOINT = "https://cloudquotas.googleapis.com"
DOC_ENABLE = "https://cloud.google.com/service-usage/docs/enable-disable"
DOC_QUOTA_INCREASE = "https://cloud.google.com/docs/quotas/help/request_increase"
#: Google's quotas overview, "About quota adjustments": an increase is a request Google approves, not a setting.
DOC_QUOTA_APPROVAL = "https://cloud.google.com/docs/quotas/overview#about_increase_requests"
#: GKE's TPU page: the on-demand and the preemptible (Spot, flex-start) quota of each TPU version, and how to ask.
DOC_GKE_QUOTAS = "https://cloud.google.com/kubernetes-engine/docs/how-to/tpus#ensure-quota"
#: gcp_quota_check's quota_type -> the machine type fact (module_utils/_generated/machine_types.py) naming its quota.
QUOTA_FACT = {"on-demand": "quota", "preemptible": "preemptible_quota"}
#: quota_type -> the plans that draw on it, for messages (planb.catalog.quotas: a reservation plan's is not checked).
QUOTA_PLANS = {
    "on-demand": "plan A (the on-demand plan)",
    "preemptible": "the preemptible plans (DWS flex-start with queued provisioning, Spot)",
}
_SERVICE = re.compile(r"^[a-z0-9-]+(\.[a-z0-9-]+)*\.googleapis\.com$")
_LOCATION = re.compile(r"^[a-z]+-[a-z]+[0-9]+(-(ai[0-9]+)?[a-z])?$")


def endpoint(params: Params, option: str, google: str, prefix: str) -> str:
    """``params[option]`` when given; else, against a loopback api_endpoint (the emulator), its URL plus
    ``prefix``; else Google's endpoint."""
    return service_endpoint(params.get(option), params.get("api_endpoint"), google, prefix)


def service_endpoint(explicit: str | None, api_endpoint: str | None, google: str, prefix: str) -> str:
    """``explicit`` (an API's endpoint option) when given; else, against a loopback ``api_endpoint`` (the emulator),
    its URL plus ``prefix``; else Google's endpoint."""
    if explicit:
        return str(explicit).rstrip("/")
    api = (api_endpoint or DEFAULT_ENDPOINT).rstrip("/")
    return f"{api}/{prefix}" if is_loopback(api) else google


class ApiClient(GkeClient):
    """The collection's REST client pointed at another Google API (same credentials, retries, transport rules)."""

    PATH_KIND = "an API path"

    def __init__(self, access: Access | Params, base: str, name: str) -> None:
        """A client at ``base`` with the credential of ``access`` (or of a module's options)."""
        super().__init__(access.at(base) if isinstance(access, Access) else dict(access, api_endpoint=base))
        self.API_NAME = name


# ---- Service Usage ----------------------------------------------------------------------------------
def service_problems(services: list[str]) -> list[str]:
    if not services:
        return ["services must name at least one API, such as container.googleapis.com"]
    return [
        f"service {s!r} is not an API name such as container.googleapis.com"
        for s in services
        if not _SERVICE.fullmatch(s)
    ]


def _denied(exc: GkeError, project: str, services: list[str], action: str) -> GkeError:
    text = str(exc)
    if " answered 403" not in text:
        return exc
    need = (
        "serviceusage.services.enable (role roles/serviceusage.serviceUsageAdmin)"
        if action == "enable APIs"
        else "serviceusage.services.get (role roles/serviceusage.serviceUsageViewer)"
    )
    return GkeError(
        f"{text} Could not {action} on project {project}: the caller needs {need}, or someone who has it runs "
        f"`gcloud services enable {' '.join(services)} --project {project}` ({DOC_ENABLE})."
    )


def service_states(client: ApiClient, project: str, services: list[str]) -> dict[str, str]:
    """Service name -> ENABLED | DISABLED."""
    states = {}
    for service in services:
        try:
            answer = client.request("GET", api_path("projects", project, "services", service))
        except GkeError as exc:
            raise _denied(exc, project, services, "read the state of APIs") from exc
        states[service] = str(answer.get("state") or "STATE_UNSPECIFIED")
    return states


def wait_operation(client: ApiClient, operation: Body, timeout: float, poll: float) -> Body:
    """Poll a google.longrunning.Operation until ``done``; raise on its error or on timeout."""
    started = time.monotonic()
    while not operation.get("done"):
        if time.monotonic() - started > timeout:
            raise GkeError(
                f"Timed out after {timeout}s waiting for Service Usage operation {operation.get('name')}; Google "
                "continues it. Re-run to check again, or raise the timeout."
            )
        time.sleep(poll)
        operation = client.request("GET", api_path(*str(operation["name"]).split("/")))
    if operation.get("error"):
        raise GkeError(f"Service Usage operation {operation.get('name')} failed: {operation['error'].get('message')}")
    return operation


def enable_services(client: ApiClient, project: str, services: list[str], params: Params) -> None:
    for service in services:
        try:
            op = client.request("POST", api_path("projects", project, "services", service) + ":enable", {})
        except GkeError as exc:
            raise _denied(exc, project, services, "enable APIs") from exc
        wait_operation(client, op, params["timeout"], params["poll_interval"])


# ---- Cloud Quotas -------------------------------------------------------------------------------------
def quota_infos(client: ApiClient, project: str, service: str = "compute.googleapis.com") -> list[Body]:
    """Every QuotaInfo of ``service`` in the project, all pages."""
    path = api_path("projects", project, "locations", "global", "services", service, "quotaInfos")
    infos: list[Body] = []
    token = ""
    for _page in range(1000):
        try:
            answer = client.query("GET", path, {"pageToken": token} if token else {})
        except GkeError as exc:
            if " answered 403" in str(exc):
                raise GkeError(
                    f"{exc} Reading the project's quotas needs the Cloud Quotas API enabled on project {project} "
                    "(cloudquotas.googleapis.com; the gke_cluster role enables it while gke_cluster_quota_check is "
                    "on) and the permission cloudquotas.quotas.get (role roles/cloudquotas.viewer); or skip this "
                    "check with gke_cluster_quota_check: false (playbooks: -e planb_quota_check=false)."
                ) from exc
            raise
        infos += answer.get("quotaInfos") or []
        token = answer.get("nextPageToken") or ""
        if not token:
            break
    return infos


def _same(a: object, b: object) -> bool:
    return str(a).casefold() == str(b).casefold()


def find_quota(infos: list[Body], key: Body, region: str) -> tuple[Body, Body] | None:
    """(QuotaInfo, its DimensionsInfo in effect for ``region`` and the key's dimensions), None if none matches.

    The QuotaInfo is found by display name (quotaDisplayName or metricDisplayName) with every dimension the
    key names among its dimensions; a per-region one is preferred.
    """
    wanted = {"region": region, **key.get("dimensions", {})}
    named = [
        info
        for info in infos
        if any(_same(info.get(field), key["display_name"]) for field in ("quotaDisplayName", "metricDisplayName"))
        and all(any(_same(dim, have) for have in info.get("dimensions") or []) for dim in key.get("dimensions", {}))
    ]
    named.sort(key=lambda info: "region" not in (info.get("dimensions") or []))
    for info in named:
        for dims in info.get("dimensionsInfos") or []:
            given = dims.get("dimensions") or {}
            if all(name in wanted and _same(value, wanted[name]) for name, value in given.items()):
                return info, dims
    return None


# ---- the modules' logic ---------------------------------------------------------------------------------
def run_service(module: Any) -> Body:
    """gcp_service: every API in ``services`` ENABLED on the project (enabled here unless ``enable`` is false)."""
    params = module.params
    problems = service_problems(params["services"])
    if problems:
        raise GkeError("Invalid input (nothing was sent): " + "; ".join(problems) + ".")
    check_auth(params)
    project = params["project"]
    client = ApiClient(params, endpoint(params, "serviceusage_endpoint", SERVICEUSAGE_ENDPOINT, "serviceusage"),
                       "Service Usage API")  # fmt: skip
    before = service_states(client, project, params["services"])
    disabled = [name for name, state in before.items() if state != "ENABLED"]
    result: Body = {"changed": bool(disabled), "enabled": disabled, "services": before, "operations": []}
    if not disabled:
        return result
    if not params["enable"]:
        raise GkeError(
            f"APIs not enabled on project {project}: {', '.join(disabled)}. GKE needs them before the cluster is "
            f"created. Fix: `gcloud services enable {' '.join(disabled)} --project {project}` ({DOC_ENABLE}), or "
            "let planb enable them (gke_cluster_enable_apis: true, playbooks: -e planb_enable_apis=true)."
        )
    result["diff"] = {"before": before, "after": {name: "ENABLED" for name in before}}
    if module.check_mode:
        return result
    enable_services(client, project, disabled, params)
    after = service_states(client, project, params["services"])
    still = [name for name, state in after.items() if state != "ENABLED"]
    if still:
        raise GkeError(
            f"Service Usage reported the APIs enabled, but {', '.join(still)} still read disabled on project "
            f"{project}; re-run in a minute, or enable them by hand: `gcloud services enable {' '.join(still)}`."
        )
    result["services"] = after
    return result


def run_quota_check(module: Any) -> Body:
    """gcp_quota_check: the ``quota_type`` quota (on-demand or preemptible) a pool of ``machine_type`` consumes holds
    ``needed`` in the region."""
    params = module.params
    machine, needed, quota_type = params["machine_type"], params["needed"], params["quota_type"]
    region = region_of(params["location"])
    if needed < 1:
        raise GkeError(f"needed must be at least 1, got {needed}")
    if not _LOCATION.fullmatch(params["location"]):
        raise GkeError(f"location {params['location']!r} must be a zone (us-east5-b) or a region (us-east5)")
    check_auth(params)
    facts = MACHINE_TYPES.get(machine) or {}
    key = facts.get(QUOTA_FACT[quota_type])
    plans = QUOTA_PLANS[quota_type]
    out: Body = {
        "changed": False,
        "checked": False,
        "region": region,
        "needed": needed,
        "quota_type": quota_type,
        "quota": {},
        "short": False,
    }
    if key is None:
        out["msg"] = (
            f"Not checked: planb's catalog names no sourced {quota_type} Compute Engine quota for machine type "
            f"{machine}; make sure project {params['project']} has {quota_type} quota for {needed} of its "
            f"accelerators in {region} ({plans})."
        )
        module.warn(out["msg"])
        return out
    client = ApiClient(params, endpoint(params, "quota_endpoint", CLOUDQUOTAS_ENDPOINT, "cloudquotas"),
                       "Cloud Quotas API")  # fmt: skip
    found = find_quota(quota_infos(client, params["project"]), key, region)
    dims = ", ".join(f"{k}={v}" for k, v in key["dimensions"].items())
    label = f"'{key['display_name']}'" + (f" ({dims})" if dims else "")
    if found is None:
        out["msg"] = (
            f"Not checked: project {params['project']}'s Compute Engine quotas hold none named {label} for "
            f"{region} (Cloud Quotas API); check the {quota_type} quota for {machine} by hand ({key['url']})."
        )
        module.warn(out["msg"])
        return out
    info, dims_info = found
    value = int((dims_info.get("details") or {}).get("value") or 0)
    documented = key.get("unit_documented", True)
    unit = key["unit"] if documented else "units"
    quota_id = info.get("quotaId")
    out["quota"] = {
        "display_name": key["display_name"],
        "quota_id": quota_id,
        "dimensions": dims_info.get("dimensions") or {},
        "value": value,
        "unit": key["unit"] if documented else "undocumented (chips or slices)",
    }
    # A negative value sets no limit. A quota whose unit Google does not document (chips or slices) is never read
    # as either: 0 fits no slice in any unit, at least `needed` fits in both, anything between is not decidable.
    floor = needed if documented else 1
    if 0 <= value < floor:
        refusal = (
            f"Quota too low for {plans}: project {params['project']} has {value} {unit} of {quota_type} Compute "
            f"Engine quota {label} (quota ID {quota_id}) in {region}, and one slice of {machine} needs {needed} "
            f"{key['unit'] if documented else 'chips'}."
        )
        fix = (
            f"Fix: request an increase of {quota_id} in {region} to at least {needed} ({DOC_QUOTA_INCREASE}; the "
            f"quotas GKE's TPU and GPU pools draw on: {DOC_GKE_QUOTAS}); Google reviews each request, and approval "
            f"can take days ({DOC_QUOTA_APPROVAL})."
        )
        if params.get("fail_when_short", True):
            raise GkeError(
                f"{refusal} Nothing was created. {fix} Or pick a region/zone or a smaller profile that fits, or create "
                "the cluster anyway and let the pools that need the quota wait (it bills meanwhile: "
                "gke_cluster_quota_create_anyway: true, playbooks: -e planb_quota_create_anyway=true), or skip the "
                "check (gke_cluster_quota_check: false, playbooks: -e planb_quota_check=false)."
            )
        out.update(short=True, request_url=DOC_QUOTA_INCREASE, msg=f"{refusal} {fix}")
        module.warn(out["msg"])
        return out
    if 0 <= value < needed:
        out["msg"] = (
            f"Not decidable: project {params['project']} has {value} of {quota_type} quota {label} in {region}, and "
            f"Google does not document whether one unit is a chip or a slice: it fits one slice of {machine} "
            f"({needed} chips) if it counts slices, not if it counts chips. Check it in the console, or request "
            f"{needed} ({DOC_GKE_QUOTAS})."
        )
        module.warn(out["msg"])
        return out
    out["checked"] = True
    out["msg"] = f"{value} {unit} of {quota_type} quota {label} in {region}; one slice needs {needed}"
    return out
