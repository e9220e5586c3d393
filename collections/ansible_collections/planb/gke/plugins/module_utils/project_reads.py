# planb.gke: what the day-0 check (gcp_project_check) reads, and what each answer blocks.
"""The day-0 check's reads, one function per area, each returning its findings (``Finding``): a blocker, which
fails the check, or a note, something it could not read or decide. The organisation policies' area is
``project_org_policies``.

Every read is a GET, or a POST Google documents as read-only (Cloud Resource Manager's testIamPermissions and
getIamPolicy, allowed under the cloud-platform.read-only scope of cloudresourcemanager.v3.json):

* APIs: Service Usage ``services.get`` per API (https://cloud.google.com/service-usage/docs/reference/rest/v1/services/get).
* Networks: Compute Engine ``networks.get`` and ``subnetworks.get``
  (https://cloud.google.com/compute/docs/reference/rest/v1/networks/get, .../subnetworks/get).
* The node service account's roles: Cloud Resource Manager v3 ``projects.get`` (the project number of the Compute
  Engine default service account, ``NUMBER-compute@developer.gserviceaccount.com``,
  https://cloud.google.com/compute/docs/access/service-accounts#default_service_account) and ``projects.getIamPolicy``
  (https://cloud.google.com/resource-manager/reference/rest/v3/projects/getIamPolicy).

An answer 403 with reason SERVICE_DISABLED (https://cloud.google.com/apis/design/errors#error_info) is the API
being off: a blocker naming that API, whatever area read it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ansible_collections.planb.gke.plugins.module_utils.client import api_path
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError
from ansible_collections.planb.gke.plugins.module_utils.iam import ResourceManagerClient
from ansible_collections.planb.gke.plugins.module_utils.locations import region_of
from ansible_collections.planb.gke.plugins.module_utils.project_apis import ApiClient

Body = dict[str, Any]

DOC_ENABLE = "https://cloud.google.com/service-usage/docs/enable-disable"
DOC_NETWORK = "https://cloud.google.com/vpc/docs/vpc#default-network"
DOC_SECONDARY = "https://cloud.google.com/kubernetes-engine/docs/how-to/alias-ips#secondary_ranges"
#: GKE's hardening page: the minimal role of a node service account.
DOC_NODE_SA = "https://cloud.google.com/kubernetes-engine/docs/how-to/hardening-your-cluster#use_least_privilege_sa"
NODE_ROLE = "roles/container.defaultNodeServiceAccount"
#: Roles that hold every permission of NODE_ROLE: the Compute Engine default account's automatic Editor grant.
NODE_ROLE_ALSO = ("roles/editor", "roles/owner")


@dataclass(frozen=True)
class Finding:
    """One line of the report. ``by`` says whose rule it is: ``google`` (Google refuses or requires it) or ``planb``
    (planb's policy, its reason in ``what``); ``blocker`` False is a note (not read, or not decidable)."""

    area: str
    what: str
    fix: str
    by: str = "google"
    blocker: bool = True
    service: str = ""

    def as_dict(self) -> Body:
        return {"area": self.area, "what": self.what, "fix": self.fix, "by": self.by, "service": self.service}


def reason(exc: GkeError) -> str:
    """The ErrorInfo reason of an error or of the Google answer it wraps."""
    cause = exc.__cause__
    return exc.reason or (cause.reason if isinstance(cause, GkeError) else "")


def disabled_service(exc: GkeError) -> str:
    """The API an answer says is off (SERVICE_DISABLED), "" for any other error."""
    if reason(exc) != "SERVICE_DISABLED":
        return ""
    cause = exc.__cause__
    metadata = exc.metadata or (cause.metadata if isinstance(cause, GkeError) else {})
    return str(metadata.get("service") or "")


def api_off(area: str, service: str, project: str) -> Finding:
    return Finding(
        area="apis",
        what=f"the API {service} is off on project {project}, and Google answers every call to it 403 "
        f"SERVICE_DISABLED (found reading {area})",
        fix=f"`gcloud services enable {service} --project {project}` ({DOC_ENABLE})",
        service=service,
    )


def not_read(area: str, exc: GkeError, project: str) -> Finding:
    """A read that failed: the API being off is a blocker naming it, anything else a note with Google's words."""
    service = disabled_service(exc)
    if service:
        return api_off(area, service, project)
    return Finding(
        area, f"not read: {exc}", "grant the right the rights section names, then run the check again", blocker=False
    )


# ---- APIs -----------------------------------------------------------------------------------------------------------
def api_findings(client: ApiClient, project: str, services: list[str]) -> list[Finding]:
    """One blocker per API that is off; when Service Usage itself is off, one blocker saying to turn it on first."""
    off: list[str] = []
    for service in services:
        try:
            answer = client.request("GET", api_path("projects", project, "services", service))
        except GkeError as exc:
            if disabled_service(exc) == "serviceusage.googleapis.com":
                listed = " ".join(dict.fromkeys(["serviceusage.googleapis.com", *services]))
                others = ", ".join(s for s in services if s != "serviceusage.googleapis.com")
                return [
                    Finding(
                        "apis",
                        f"the Service Usage API (serviceusage.googleapis.com) is off on project {project}: planb reads "
                        "and enables APIs through it, and until it is on this check cannot tell which of the APIs "
                        f"planb needs are off ({others})",
                        "turn on Service Usage first, in the console (https://console.cloud.google.com/apis/library/"
                        f"serviceusage.googleapis.com?project={project}) "
                        f"or `gcloud services enable serviceusage.googleapis.com --project {project}`; then "
                        f"`gcloud services enable {listed} --project {project}` ({DOC_ENABLE})",
                        service="serviceusage.googleapis.com",
                    )
                ]
            return [not_read("the APIs' state", exc, project)]
        if str(answer.get("state")) != "ENABLED":
            off.append(service)
    return [
        Finding(
            "apis",
            f"the API {service} is off on project {project}",
            f"`gcloud services enable {' '.join(off)} --project {project}` ({DOC_ENABLE})",
            service=service,
        )
        for service in off
    ]


# ---- the network ----------------------------------------------------------------------------------------------------
def network_parts(value: str, project: str, kind: str) -> tuple[str, str]:
    """(project, name) of a network or subnetwork given by name or as projects/P/.../NAME (a Shared VPC host's)."""
    match = re.fullmatch(rf"(?:.*/)?projects/([^/]+)/(?:global|regions/[^/]+)/{kind}/([^/]+)", value)
    return (match.group(1), match.group(2)) if match else (project, value)


def network_findings(
    client: ApiClient, project: str, location: str, network: str, subnetwork: str, secondary: list[str]
) -> list[Finding]:
    """The network (default unless named) exists, and the named subnetwork with every named secondary range."""
    host, name = network_parts(network or "default", project, "networks")
    try:
        found = client.request("GET", api_path("projects", host, "global", "networks", name), allow_404=True)
    except GkeError as exc:
        return [not_read("the network", exc, project)]
    if found is None:
        fix = (
            f"create it (`gcloud compute networks create default --subnet-mode=auto --project {project}`; an "
            "organisation may skip it, constraints/compute.skipDefaultNetworkCreation) or name your VPC and subnet "
            "(NETWORK, SUBNETWORK)"
            if not network
            else "create it, or name one that exists (NETWORK)"
        )
        return [
            Finding(
                "network",
                f"the VPC network {name} does not exist in project {host}; GKE refuses a cluster on it ({DOC_NETWORK})",
                fix,
            )
        ]
    if not subnetwork:
        return []
    sub_project, sub = network_parts(subnetwork, project, "subnetworks")
    region = region_of(location)
    try:
        body = client.request(
            "GET", api_path("projects", sub_project, "regions", region, "subnetworks", sub), allow_404=True
        )
    except GkeError as exc:
        return [not_read("the subnetwork", exc, project)]
    if body is None:
        return [
            Finding(
                "network",
                f"the subnetwork {sub} does not exist in region {region} of project {sub_project}",
                "create it in the cluster's region, or name one that exists (SUBNETWORK)",
            )
        ]
    ranges = {str(r.get("rangeName")) for r in body.get("secondaryIpRanges") or []}
    return [
        Finding(
            "network",
            f"the subnetwork {sub} has no secondary range named {wanted} (it has "
            f"{', '.join(sorted(ranges)) or 'none'}); GKE refuses a range name the subnet lacks ({DOC_SECONDARY})",
            f"add it (`gcloud compute networks subnets update {sub} --region {region} --add-secondary-ranges "
            f"{wanted}=CIDR`), or name one the subnet has",
        )
        for wanted in secondary
        if wanted not in ranges
    ]


# ---- the node service account ---------------------------------------------------------------------------------------
def node_account_findings(client: ResourceManagerClient, project: str, account: str) -> list[Finding]:
    """The nodes' service account holds roles/container.defaultNodeServiceAccount on the project."""
    try:
        if not account:
            number = str(client.request("GET", api_path("projects", project)).get("name", "")).rsplit("/", 1)[-1]
            account = f"{number}-compute@developer.gserviceaccount.com"
        policy = client.request(
            "POST", api_path("projects", project) + ":getIamPolicy", {"options": {"requestedPolicyVersion": 3}}
        )
    except GkeError as exc:
        return [not_read("the node service account's roles", exc, project)]
    member = f"serviceAccount:{account}"
    roles = {
        b.get("role")
        for b in policy.get("bindings") or []
        if member in (b.get("members") or []) and not b.get("condition")
    }
    if roles & {NODE_ROLE, *NODE_ROLE_ALSO}:
        return []
    return [
        Finding(
            "node_service_account",
            f"the nodes' service account {account} holds no {NODE_ROLE} on project {project}. planb's policy: this is "
            "a blocker, because GKE creates the nodes anyway but they cannot write their logs and metrics, and GKE "
            f"documents this role as the minimum a node service account needs ({DOC_NODE_SA})",
            f"`gcloud projects add-iam-policy-binding {project} --member={member} --role={NODE_ROLE}`",
            by="planb",
        )
    ]
