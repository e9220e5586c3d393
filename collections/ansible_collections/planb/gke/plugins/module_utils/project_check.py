# planb.gke: the day-0 check (gcp_project_check): every blocker of a project, read at once, in one report.
"""gcp_project_check's logic: every area read, every finding gathered, one report.

Areas, in the report's order: the APIs planb needs (Service Usage), the caller's rights (``iam.rights_for`` and
``iam.held_permissions``, gcp_iam_check's table and call, plus the rights the check's own reads use, and
``serviceusage.services.use`` on a quota project), the quotas one slice of each rung draws on (accelerator, on-demand
and preemptible, ``project_apis.find_quota`` as gcp_quota_check reads them) and the CPUs of the default pool, the
organisation policies planb's bodies would break, the network, the nodes' service account and the flex-start zones
of the DWS rungs (``locations.flex_start_zone_problems``). The reads are in ``project_reads``.

Nothing is written and nothing is enabled: every request is a GET or one of Cloud Resource Manager's read-only POSTs.
"""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.planb.gke.plugins.module_utils import rung_kinds
from ansible_collections.planb.gke.plugins.module_utils._generated.machine_types import FACTS as MACHINE_TYPES
from ansible_collections.planb.gke.plugins.module_utils.credentials import check_auth
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError
from ansible_collections.planb.gke.plugins.module_utils.iam import (
    QUOTA_PROJECT_RIGHT,
    QUOTA_PROJECT_ROLE,
    RESOURCEMANAGER_ENDPOINT,
    ResourceManagerClient,
    Right,
    held_permissions,
    rights_for,
    role_text,
)
from ansible_collections.planb.gke.plugins.module_utils.locations import flex_start_zone_problems, region_of
from ansible_collections.planb.gke.plugins.module_utils.project_apis import (
    CLOUDQUOTAS_ENDPOINT,
    DOC_QUOTA_APPROVAL,
    DOC_QUOTA_INCREASE,
    QUOTA_FACT,
    SERVICEUSAGE_ENDPOINT,
    ApiClient,
    endpoint,
    find_quota,
    quota_infos,
)
from ansible_collections.planb.gke.plugins.module_utils.project_egress import nat_findings, webhook_findings
from ansible_collections.planb.gke.plugins.module_utils.project_org_policies import (
    ORGPOLICY_ENDPOINT,
    OrgPolicyClient,
    policy_findings,
)
from ansible_collections.planb.gke.plugins.module_utils.project_reads import (
    Finding,
    api_findings,
    network_findings,
    node_account_findings,
    not_read,
)
from ansible_collections.planb.gke.plugins.module_utils.reservation import compute_client

Body = dict[str, Any]

#: The APIs every run needs besides the role's (gke_cluster_apis): the reads of this check and of the run.
CHECK_APIS = (
    "serviceusage.googleapis.com",
    "cloudresourcemanager.googleapis.com",
    "compute.googleapis.com",
    "cloudquotas.googleapis.com",
    "orgpolicy.googleapis.com",
)
#: The rights this check's own reads use (beyond the run's, which iam.RIGHTS holds).
CHECK_RIGHTS = (
    Right(
        "orgpolicy.policy.get",
        ("roles/orgpolicy.policyViewer",),
        "read the organisation policies (day-0 check)",
        ("day0",),
    ),
    Right("resourcemanager.projects.get", ("roles/browser",), "read the project's number (day-0 check)", ("day0",)),
    Right(
        "resourcemanager.projects.getIamPolicy",
        ("roles/iam.securityReviewer",),
        "read the node service account's roles (day-0 check)",
        ("day0",),
    ),
    Right("compute.networks.get", ("roles/compute.networkViewer",), "read the network (day-0 check)", ("day0",)),
    Right("compute.subnetworks.get", ("roles/compute.networkViewer",), "read the subnetwork (day-0 check)", ("day0",)),
    Right(
        "compute.routers.list", ("roles/compute.networkViewer",), "read the Cloud NAT routers (day-0 check)", ("day0",)
    ),
)
#: Compute Engine's CPU quotas (https://cloud.google.com/compute/resource-usage#cpu_quota): machine family -> the
#: regional quota its vCPUs draw on, and the project's total over every region, which every vCPU draws on too.
DOC_CPU_QUOTA = "https://cloud.google.com/compute/resource-usage#cpu_quota"
CPU_FAMILY_QUOTA = {"e2": "CPUs", "n1": "CPUs", "n2": "N2 CPUs", "n2d": "N2D CPUs", "c2": "C2 CPUs", "c3": "C3 CPUs"}
CPU_ALL_REGIONS = "CPUs (all regions)"
_VCPUS = re.compile(r"^(?P<family>[a-z0-9]+)-(standard|highmem|highcpu)-(?P<vcpus>[0-9]+)$")


# ---- rights ----------------------------------------------------------------------------------------------------
def rights_findings(client: ResourceManagerClient, project: str, needs: list[str]) -> list[Finding]:
    """gcp_iam_check's call over the run's rights and the check's own, and the quota project's right."""
    rights = [*rights_for(needs), *CHECK_RIGHTS]
    asked = list(dict.fromkeys(right.permission for right in rights))
    try:
        held = set(held_permissions(client, project, asked))
        quota_project = client.quota_project()
        quota_held = quota_project is None or QUOTA_PROJECT_RIGHT in held_permissions(
            client, quota_project, [QUOTA_PROJECT_RIGHT], quota_project
        )
    except GkeError as exc:
        return [not_read("the caller's rights", exc, project)]
    out = [
        Finding(
            "rights",
            f"the caller lacks {right.permission} on project {project}, which the run uses to {right.task}"
            + ("" if right.on == "project" else f" (Google checks it on {right.on}: granted there alone, ignore this)"),
            f"grant the caller {role_text(right)} (`gcloud projects add-iam-policy-binding {project} "
            f"--member=user:EMAIL --role={right.roles[0]}`)",
            blocker=right.on == "project",
        )
        for right in rights
        if right.permission not in held
    ]
    if not quota_held:
        out.append(
            Finding(
                "rights",
                f"the caller lacks {QUOTA_PROJECT_RIGHT} on quota project {quota_project}, which every call of the "
                "run names (x-goog-user-project); Google refuses those calls",
                f"grant the caller {QUOTA_PROJECT_ROLE} on project {quota_project}, or name a quota project it may "
                "use (quota_project, GOOGLE_CLOUD_QUOTA_PROJECT)",
            )
        )
    return out


# ---- quotas ----------------------------------------------------------------------------------------------------
def quota_needs(params: Body) -> list[tuple[Body, int, str, str]]:
    """(quota key, needed, quota type, what draws on it) for each rung kind's accelerator quota and the default pool's
    CPUs (a pool of a GPU or TPU machine type draws on its accelerator quota; its vCPUs are not checked here)."""
    out: list[tuple[Body, int, str, str]] = []
    facts = MACHINE_TYPES.get(params["machine_type"]) or {}
    # A rung's kind -> the accelerator quota its pools draw on (its catalog entry; a reservation's VMs took theirs
    # when it was made, so it draws on none).
    quota_of = [(str(r.get("name")), (rung_kinds.kind(r.get("kind")) or {}).get("quota")) for r in params["rungs"]]
    for quota_type in dict.fromkeys(quota for _rung, quota in quota_of if quota):
        key = facts.get(QUOTA_FACT[quota_type])
        if key is not None:
            rungs = ", ".join(name for name, quota in quota_of if quota == quota_type)
            out.append((key, params["needed"], quota_type, f"one slice of {params['machine_type']} (rungs {rungs})"))
    match = _VCPUS.fullmatch(params["default_pool_machine_type"])
    family = CPU_FAMILY_QUOTA.get(match["family"]) if match else None
    if match and family:
        vcpus = int(match["vcpus"]) * params["default_pool_node_count"]
        what = f"the default pool's {params['default_pool_node_count']} x {params['default_pool_machine_type']}"
        for name in (family, CPU_ALL_REGIONS):
            out.append(
                (
                    {"display_name": name, "dimensions": {}, "unit": "vCPUs", "url": DOC_CPU_QUOTA},
                    vcpus,
                    "on-demand",
                    what,
                )
            )
    return out


def quota_findings(client: ApiClient, project: str, location: str, params: Body) -> list[Finding]:
    """A blocker per quota below what one slice (or the default pool) needs, with the request link."""
    needs = quota_needs(params)
    if not needs:
        return []
    try:
        infos = quota_infos(client, project)
    except GkeError as exc:
        return [not_read("the quotas", exc, project)]
    region, out = region_of(location), []
    for key, needed, quota_type, what in needs:
        found = find_quota(infos, key, region)
        label = f"'{key['display_name']}'" + "".join(f" ({k}={v})" for k, v in key.get("dimensions", {}).items())
        if found is None:
            out.append(
                Finding(
                    "quota",
                    f"no {quota_type} quota {label} for {region} in project {project}'s list",
                    f"check it by hand ({key['url']})",
                    blocker=False,
                )
            )
            continue
        info, dims = found
        value = int((dims.get("details") or {}).get("value") or 0)
        documented = key.get("unit_documented", True)
        if value < 0 or value >= needed:
            continue
        if not documented and value > 0:
            out.append(
                Finding(
                    "quota",
                    f"{value} of {quota_type} quota {label} in {region}: Google does not say "
                    f"whether a unit is a chip or a slice, so it may not fit {what} ({needed} chips)",
                    f"check it in the console ({key['url']})",
                    blocker=False,
                )
            )
            continue
        quota_id = info.get("quotaId") or key["display_name"]
        where = "across all regions" if key["display_name"] == CPU_ALL_REGIONS else f"in {region}"
        meanwhile = (
            "the cluster's own nodes need it, so site.yml cannot create the cluster before"
            if key["unit"] == "vCPUs"
            else "site.yml creates the cluster meanwhile and leaves the pools that need it"
        )
        out.append(
            Finding(
                "quota",
                f"project {project} has {value} {key['unit'] if documented else 'units'} of {quota_type} quota {label} "
                f"(quota ID {quota_id}) {where}, and {what} needs {needed}; Google refuses VMs beyond quota",
                f"request an increase of {quota_id} {where} to at least {needed} in the console "
                f"(https://console.cloud.google.com/iam-admin/quotas?project={project}, {DOC_QUOTA_INCREASE}); Google "
                f"reviews each request and approval can take days ({DOC_QUOTA_APPROVAL}), so ask now: {meanwhile}",
            )
        )
    return out


def flex_start_findings(params: Body) -> list[Finding]:
    """A blocker per flex-start (DWS) rung whose zone is outside GKE's flex-start list for its generation (Google's
    rule): a rung whose kind's pool settings make flex-start pools."""
    zone = params["tpu_zone"] or params["location"]
    problems = flex_start_zone_problems(
        params["machine_type"], params["location"], [zone] if params["tpu_zone"] else None, True
    )
    return [
        Finding("flex_start", f"DWS rung {rung.get('name')}: {problem}", "see the sentence above")
        for rung in params["rungs"]
        if ((rung_kinds.kind(rung.get("kind")) or {}).get("settings") or {}).get("flex_start")
        for problem in problems
    ]


# ---- the check ------------------------------------------------------------------------------------------------------
def report(project: str, findings: list[Finding]) -> str:
    """The one report: every blocker numbered, Google's rules apart from planb's policy, then the notes."""
    blockers = [f for f in findings if f.blocker]
    lines = [f"Day-0 check of project {project}: {len(blockers)} blocker(s); nothing was written or enabled."]
    for number, finding in enumerate(blockers, 1):
        whose = "Google" if finding.by == "google" else "planb's policy"
        lines.append(f"{number}. [{finding.area}] ({whose}) {finding.what}. Fix: {finding.fix}.")
    notes = [f for f in findings if not f.blocker]
    lines += [f"note [{f.area}]: {f.what}. {f.fix}." for f in notes]
    return "\n".join(lines)


def run_project_check(module: Any) -> Body:
    """gcp_project_check: read every area; the result's ``blockers`` (the module fails on any) and ``msg``, the
    report. Raises GkeError only for bad input or credentials, before any read."""
    params = module.params
    if params["needed"] < 1:
        raise GkeError(f"needed must be at least 1, got {params['needed']}")
    check_auth(params)
    project, location = params["project"], params["location"]
    usage = ApiClient(
        params, endpoint(params, "serviceusage_endpoint", SERVICEUSAGE_ENDPOINT, "serviceusage"), "Service Usage API"
    )
    manager = ResourceManagerClient(
        params,
        endpoint(params, "resourcemanager_endpoint", RESOURCEMANAGER_ENDPOINT, "cloudresourcemanager"),
        "Cloud Resource Manager API",
    )
    quotas = ApiClient(
        params, endpoint(params, "quota_endpoint", CLOUDQUOTAS_ENDPOINT, "cloudquotas"), "Cloud Quotas API"
    )
    policies = OrgPolicyClient(
        params, endpoint(params, "orgpolicy_endpoint", ORGPOLICY_ENDPOINT, "orgpolicy"), "Organization Policy API"
    )
    services = list(dict.fromkeys([*params["apis"], *CHECK_APIS]))
    findings = [
        *api_findings(usage, project, services),
        *rights_findings(manager, project, params["needs"]),
        *quota_findings(quotas, project, location, params),
        *policy_findings(
            policies, project, location, params["private_nodes"], params["secure_boot"], params["master_ipv4_cidr"]
        ),
        *network_findings(
            compute_client(params),
            project,
            location,
            params["network"],
            params["subnetwork"],
            params["secondary_ranges"],
        ),
        *nat_findings(
            compute_client(params), project, location, params["network"], params["private_nodes"], params["cloud_nat"]
        ),
        *webhook_findings(project, params["network"], params["private_nodes"], params["master_ipv4_cidr"]),
        *node_account_findings(manager, project, params["node_service_account"]),
        *flex_start_findings(params),
    ]
    # An API found off by several areas is one blocker.
    seen: set[str] = set()
    unique = []
    for finding in findings:
        if finding.service and finding.service in seen:
            continue
        seen.add(finding.service)
        unique.append(finding)
    blockers = [f.as_dict() for f in unique if f.blocker]
    result: Body = {
        "changed": False,
        "blockers": blockers,
        "notes": [f.as_dict() for f in unique if not f.blocker],
        "msg": report(project, unique),
    }
    for note in result["notes"]:
        module.warn(f"[{note['area']}] {note['what']}. {note['fix']}.")
    return result
