# planb.gke: what the day-0 check (gcp_project_check) reads of the organisation's policies, and what each blocks.
"""The day-0 check's read of the organisation policies planb's cluster and pool bodies would break, one constraint at
a time with the Org Policy API v2 effective policy, each answer turned into findings (``project_reads.Finding``):
Shielded VM, external IPs, resource locations, VPC peering (with a control plane range), and the image and
encryption policies of ``project_policies``.

Every read is a GET of the effective policy, ``projects.policies.getEffectivePolicy``
(https://cloud.google.com/resource-manager/docs/reference/orgpolicy/rest/v2/projects.policies/getEffectivePolicy;
permission ``orgpolicy.policy.get``, role ``roles/orgpolicy.policyViewer``). A rule with a ``condition`` (tags) may or
may not apply to planb's VMs, so it is a note; a spec without rules is the constraint's default.
"""

from __future__ import annotations

from typing import Any

from ansible_collections.planb.gke.plugins.module_utils.client import api_path
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError
from ansible_collections.planb.gke.plugins.module_utils.locations import is_zone, region_of
from ansible_collections.planb.gke.plugins.module_utils.project_apis import ApiClient
from ansible_collections.planb.gke.plugins.module_utils.project_policies import CHECKS
from ansible_collections.planb.gke.plugins.module_utils.project_reads import (
    Finding,
    disabled_service,
    not_read,
)

Body = dict[str, Any]

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
ORGPOLICY_ENDPOINT = "https://orgpolicy.googleapis.com"


class OrgPolicyClient(ApiClient):
    """The Organization Policy API v2 over the collection's REST client; it takes no query parameters."""

    API_VERSION, QUERIES = "v2", False


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
