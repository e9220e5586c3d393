"""The Cloud Quotas API the GKE roles read before they create pools (QuotaInfos of compute.googleapis.com, paged as
the real API pages them) and the emulator's switch that sets a quota (``planb local gke-emulator set-quota``).

The QuotaInfos are found by display name and dimensions from planb's catalog (``planb.catalog.quotas``),
as the roles look them up; their ``quotaId`` and ``metric`` are the emulator's own (``planb-emulated-*``),
never Google's, which planb does not know. Served under ``/cloudquotas/v1/`` by ``gke_emulator.project``.
(https://cloud.google.com/docs/quotas/reference/rest/v1/projects.locations.services.quotaInfos/list.)
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs

from planb.catalog import gpu, quotas, tpu
from planb.local.gke_emulator.errors import ProjectApiError

Body = dict[str, Any]

#: Every accelerator quota's value unless set otherwise: enough for any profile of the catalog.
DEFAULT_QUOTA = 100000
#: Compute Engine's CPU quotas by display name -> regional (False: the project's total over every region), read by the
#: day-0 check (https://cloud.google.com/compute/resource-usage#cpu_quota); set with gke_emulator.project_setup.
CPU_QUOTAS = {"CPUs": True, "N2 CPUs": True, "N2D CPUs": True, "C2 CPUs": True, "C3 CPUs": True,
              "Preemptible CPUs": True, "CPUs (all regions)": False}  # fmt: skip
#: QuotaInfos per page when the caller does not say (small, so clients must follow nextPageToken).
PAGE_SIZE = 3


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


def set_quota(state: Body, request: Body) -> Body:
    """The emulator-only switch: the quota a machine type's pools of a quota type consume, in a region, set (the
    newest first, replacing one for the same project, quota and dimensions)."""
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
    state["quotas"] = [
        q
        for q in state["quotas"]
        if (q["project"], q["displayName"], q["dimensions"])
        != (entry["project"], key.display_name, entry["dimensions"])
    ]
    state["quotas"].insert(0, entry)
    return {"quotas": state["quotas"]}


def quota_infos(state: Body, project: str, service: str, query: str) -> Body:
    """One page of the project's QuotaInfos for `service` (compute.googleapis.com's; none for another), each with
    the values set for it, most specific first, and the default last."""
    if service != "compute.googleapis.com":
        return {"quotaInfos": []}
    by_name: dict[str, list[quotas.QuotaKey]] = {}
    for key in [key for quota_type in QUOTA_TYPES for key in quota_keys(quota_type).values()]:
        if key not in by_name.setdefault(key.display_name, []):
            by_name[key.display_name].append(key)
    by_name.update({name: [] for name in CPU_QUOTAS})
    default = state.get("quotaDefaults", {}).get(project, DEFAULT_QUOTA)
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
            for q in state["quotas"]
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
