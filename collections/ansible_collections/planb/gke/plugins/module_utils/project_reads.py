# planb.gke: what the day-0 check (gcp_project_check) reads, and what each answer blocks.
"""The day-0 check's reads, one function per area, each returning its findings (``Finding``): a blocker, which
fails the check, or a note, something it could not read or decide.

Every read is a GET, or a POST Google documents as read-only (Cloud Resource Manager's testIamPermissions and
getIamPolicy, allowed under the cloud-platform.read-only scope of cloudresourcemanager.v3.json):

* APIs: Service Usage ``services.get`` per API (https://cloud.google.com/service-usage/docs/reference/rest/v1/services/get).
* Organisation policies: the Org Policy API v2 effective policy, ``projects.policies.getEffectivePolicy``
  (https://cloud.google.com/resource-manager/docs/reference/orgpolicy/rest/v2/projects.policies/getEffectivePolicy;
  permission ``orgpolicy.policy.get``, role ``roles/orgpolicy.policyViewer``). A rule with a ``condition`` (tags) may
  or may not apply to planb's VMs, so it is a note; a spec without rules is the constraint's default.
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
from ansible_collections.planb.gke.plugins.module_utils.locations import is_zone, region_of
from ansible_collections.planb.gke.plugins.module_utils.project_apis import ApiClient
from ansible_collections.planb.gke.plugins.module_utils.project_policies import CHECKS

Body = dict[str, Any]

DOC_ENABLE = "https://cloud.google.com/service-usage/docs/enable-disable"
DOC_ORG_POLICY = "https://cloud.google.com/resource-manager/docs/organization-policy/org-policy-constraints"
#: Shielded GKE nodes: secure boot is off unless the pool turns it on.
DOC_SHIELDED = "https://cloud.google.com/kubernetes-engine/docs/how-to/shielded-gke-nodes"
DOC_PRIVATE = "https://cloud.google.com/kubernetes-engine/docs/how-to/network-isolation"
#: GKE's VPC Network Peering form of private cluster: the control plane's range (masterIpv4CidrBlock) on a network of
#: a Google-managed project, peered with the cluster's.
DOC_PEERING = "https://cloud.google.com/kubernetes-engine/docs/how-to/legacy/network-isolation"
#: GKE's answer under constraints/compute.restrictVpcPeering, from the create operation, after the call was accepted:
#: "Constraint constraints/compute.restrictVpcPeering violated for project NUMBER. Peering the network
#: projects/gke-prod-.../global/networks/gke-n...-net is not allowed." (a cluster made with --master-ipv4-cidr-block).
GKE_PEERING_REFUSAL = "https://github.com/GoogleCloudPlatform/pubsec-declarative-toolkit/issues/914"
DOC_NETWORK = "https://cloud.google.com/vpc/docs/vpc#default-network"
DOC_SECONDARY = "https://cloud.google.com/kubernetes-engine/docs/how-to/alias-ips#secondary_ranges"
#: GKE's hardening page: the minimal role of a node service account.
DOC_NODE_SA = "https://cloud.google.com/kubernetes-engine/docs/how-to/hardening-your-cluster#use_least_privilege_sa"
NODE_ROLE = "roles/container.defaultNodeServiceAccount"
#: Roles that hold every permission of NODE_ROLE: the Compute Engine default account's automatic Editor grant.
NODE_ROLE_ALSO = ("roles/editor", "roles/owner")
ORGPOLICY_ENDPOINT = "https://orgpolicy.googleapis.com"


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


class OrgPolicyClient(ApiClient):
    """The Organization Policy API v2 over the collection's REST client; it takes no query parameters."""

    API_VERSION, QUERIES = "v2", False


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


# ---- organisation policies ------------------------------------------------------------------------------------------
def _rules(policy: Body) -> tuple[list[Body], bool]:
    """The effective policy's unconditional rules, and whether it has conditional ones."""
    rules = list((policy.get("spec") or {}).get("rules") or [])
    return [r for r in rules if not r.get("condition")], any(r.get("condition") for r in rules)


def _restricted(rules: list[Body]) -> bool:
    """Whether a list constraint's rules keep any value out (denyAll, or a list of values without allowAll)."""
    if any(r.get("allowAll") for r in rules):
        return False
    return any(
        r.get("denyAll") or (r.get("values") or {}).get("allowedValues") or (r.get("values") or {}).get("deniedValues")
        for r in rules
    )


def _locations(rules: list[Body], location: str) -> tuple[bool, bool]:
    """gcp.resourceLocations: (refused, undecided) for a cluster at ``location``."""
    region = region_of(location)
    ours = {location, region, f"in:{region}-locations", f"zones/{location}" if is_zone(location) else region}
    allowed = [v for r in rules for v in (r.get("values") or {}).get("allowedValues") or []]
    denied = [v for r in rules for v in (r.get("values") or {}).get("deniedValues") or []]
    if any(r.get("denyAll") for r in rules) or ours & set(denied):
        return True, False
    if not allowed or ours & set(allowed) or any(r.get("allowAll") for r in rules):
        return False, False
    groups = any(v.startswith("in:") for v in allowed)
    return not groups, groups


def _peering_refused(rules: list[Body]) -> str:
    """compute.restrictVpcPeering: "google" when its rules refuse every peering (denyAll), "planb" when they allow a
    list of networks, which cannot name GKE's control plane network before the cluster exists, else ""."""
    if any(r.get("allowAll") for r in rules):
        return ""
    if any(r.get("denyAll") for r in rules):
        return "google"
    return "planb" if any((r.get("values") or {}).get("allowedValues") for r in rules) else ""


def policy_findings(
    client: OrgPolicyClient,
    project: str,
    location: str,
    private_nodes: bool,
    secure_boot: bool = True,
    master_ipv4_cidr: str = "",
) -> list[Finding]:
    """The organisation policies planb's cluster and pool bodies would break (``secure_boot``: the pools turn it
    on, so constraints/compute.requireShieldedVm is met; ``master_ipv4_cidr``: the control plane's range, which asks
    GKE for the VPC Network Peering form, so constraints/compute.restrictVpcPeering is read too)."""
    out: list[Finding] = []
    exception = (
        "ask your organisation policy administrator (roles/orgpolicy.policyAdmin) for an exception on project "
        f"{project} (`gcloud org-policies reset CONSTRAINT --project {project}`)"
    )
    constraints = ["compute.requireShieldedVm", "compute.vmExternalIpAccess", "gcp.resourceLocations", *CHECKS]
    for constraint in constraints + (["compute.restrictVpcPeering"] if master_ipv4_cidr else []):
        try:
            policy = client.request(
                "GET", api_path("projects", project, "policies", constraint) + ":getEffectivePolicy"
            )
        except GkeError as exc:
            out.append(not_read("the organisation policies", exc, project))
            if disabled_service(exc):
                return out
            continue
        rules, conditional = _rules(policy or {})
        name = f"constraints/{constraint}"
        if conditional:
            out.append(
                Finding(
                    "org_policy",
                    f"{name} has conditional rules (tags) the check cannot evaluate",
                    f"read them: `gcloud org-policies describe {constraint} --effective --project {project}`",
                    blocker=False,
                )
            )
        for what, fix, blocker in CHECKS[constraint](rules, project) if constraint in CHECKS else []:
            out.append(Finding("org_policy", what, fix, blocker=blocker))  # project_policies: images, CMEK
        if constraint == "compute.requireShieldedVm" and any(r.get("enforce") for r in rules) and not secure_boot:
            out.append(
                Finding(
                    "org_policy",
                    f"{name} is enforced on project {project}: Compute Engine refuses a VM without Shielded VM secure "
                    f"boot ({DOC_ORG_POLICY}), and GKE leaves secure boot off unless a pool turns it on "
                    f"({DOC_SHIELDED}); the inventory turns it off (planb_secure_boot: false), so planb's pools are "
                    "sent without shieldedInstanceConfig.enableSecureBoot",
                    "set planb_secure_boot: true (the default) and recreate the pools made without it; or "
                    + exception.replace("CONSTRAINT", constraint),
                )
            )
        if constraint == "compute.vmExternalIpAccess" and _restricted(rules) and not private_nodes:
            out.append(
                Finding(
                    "org_policy",
                    f"{name} restricts external IP addresses on project {project}, and GKE gives each node one unless "
                    f"the cluster has private nodes ({DOC_PRIVATE}); Compute Engine refuses those VMs",
                    "set planb_private_nodes: true (PRIVATE_NODES) in the inventory, with Cloud NAT or a mirror for "
                    "the images and packages the nodes pull (planb does not create Cloud NAT); or "
                    + exception.replace("CONSTRAINT", constraint),
                )
            )
        if constraint == "gcp.resourceLocations":
            refused, undecided = _locations(rules, location)
            if refused:
                out.append(
                    Finding(
                        "org_policy",
                        f"{name} does not allow {location} on project {project}",
                        "pick a zone the policy allows (ZONE), or " + exception.replace("CONSTRAINT", constraint),
                    )
                )
            elif undecided:
                out.append(
                    Finding(
                        "org_policy",
                        f"{name} allows value groups (in:...) the check cannot expand",
                        f"make sure they include {location}",
                        blocker=False,
                    )
                )
        whose = _peering_refused(rules) if constraint == "compute.restrictVpcPeering" else ""
        if whose:
            why = (
                "it refuses every peering"
                if whose == "google"
                else "it allows only the networks it lists, and GKE names the peer network, in a Google-managed "
                "project, only when it creates the cluster. planb's policy: this is a blocker, because the form "
                "below needs no peering and GKE reports the refusal only after it accepted the create call"
            )
            out.append(
                Finding(
                    "org_policy",
                    f"{name} restricts VPC peering on project {project}: {why}. planb_master_ipv4_cidr "
                    f"({master_ipv4_cidr}, MASTER_IPV4_CIDR) asks GKE for the VPC Network Peering form of private "
                    f"cluster ({DOC_PEERING}), whose control plane peers from a Google-managed project; GKE accepts "
                    'the create call and its operation then fails, "Constraint constraints/compute.restrictVpcPeering '
                    f'violated ... Peering the network projects/gke-prod-... is not allowed" ({GKE_PEERING_REFUSAL})',
                    'use the Private Service Connect form: leave MASTER_IPV4_CIDR unset (planb_master_ipv4_cidr: "") '
                    f"and keep planb_private_nodes: true; GKE then connects the control plane without peering "
                    f"({DOC_PRIVATE}; docs/first-run.md, section 4); or " + exception.replace("CONSTRAINT", constraint),
                    by=whose,
                )
            )
    return out


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
