"""GKE's VPC Network Peering form of private cluster under ``constraints/compute.restrictVpcPeering``, as the emulator
answers it: the create call is accepted and its operation fails.

* A cluster body with ``privateClusterConfig.masterIpv4CidrBlock`` asks for the peering form: its control plane sits
  on a network of a Google-managed project, peered with the cluster's (GKE's private cluster page for that form,
  DOC_PEERING). Without the range GKE connects the control plane by Private Service Connect, without peering
  (DOC_PSC, DOC_PSC_BLOG), so the constraint does not apply.
* The constraint is a list constraint of the networks the project's networks may be peered with (Organization Policy's
  constraint list, DOC_ORG_POLICY). Its allowed or denied values name networks
  (``projects/P/global/networks/N``) or the projects, folders and organisations under which they lie
  (``under:...``); the effective policy's rules are read as ``getEffectivePolicy`` returns them (DOC_EFFECTIVE).
* GKE's answer comes from the create operation, not from the call: "Error waiting for creating GKE cluster:
  Constraint constraints/compute.restrictVpcPeering violated for project NUMBER. Peering the network
  projects/gke-prod-europe-north1-6277/global/networks/gke-n7f73fb7ea7f912295f2-0b9c-230b-net is not allowed."
  (GKE_ANSWER, GKE_ANSWER_CIDR: the same with ``--master-ipv4-cidr-block``). The emulator names a peer network of that
  shape, derived from the cluster's name; which Google-managed project GKE picks is GKE's.

The emulator's reading: a rule with a ``condition`` is not applied (the emulator holds no tags); ``allowAll`` allows;
``denyAll`` refuses; allowed values allow only a value naming the peer network or its project; denied values refuse
those. A list of the organisation's own networks, projects or folders does not name GKE's project, so it refuses.
"""

from __future__ import annotations

import hashlib
from typing import Any

Body = dict[str, Any]

DOC_ORG_POLICY = "https://cloud.google.com/resource-manager/docs/organization-policy/org-policy-constraints"
DOC_EFFECTIVE = (
    "https://cloud.google.com/resource-manager/docs/reference/orgpolicy/rest/v2/projects.policies/getEffectivePolicy"
)
DOC_PEERING = "https://cloud.google.com/kubernetes-engine/docs/how-to/legacy/network-isolation"
DOC_PSC = "https://cloud.google.com/kubernetes-engine/docs/how-to/network-isolation"
DOC_PSC_BLOG = (
    "https://cloud.google.com/blog/products/containers-kubernetes/understanding-gkes-new-control-plane-connectivity"
)
GKE_ANSWER = "https://github.com/GoogleCloudPlatform/terraform-google-secure-cicd/issues/70"
GKE_ANSWER_CIDR = "https://github.com/GoogleCloudPlatform/pubsec-declarative-toolkit/issues/914"
CONSTRAINT = "compute.restrictVpcPeering"


def peer_network(project: str, location: str, cluster: str) -> str:
    """The network of the Google-managed project a peering-form cluster's control plane would sit on."""
    digest = hashlib.sha256(f"{project}/{location}/{cluster}".encode()).hexdigest()
    region = location if location.count("-") < 2 else location.rsplit("-", 1)[0]
    return (
        f"projects/gke-prod-{region}-{digest[:4]}/global/networks/"
        f"gke-n{digest[4:24]}-{digest[24:28]}-{digest[28:32]}-net"
    )


def _names(value: str, network: str) -> bool:
    """Whether an allowed or denied value names ``network`` or the project it lies in."""
    peer_project = network.split("/")[1]
    return value.removeprefix("under:") in (network, f"projects/{peer_project}")


def peering_refusal(cluster: Body, project: str, number: str, location: str, policies: Body) -> str | None:
    """The create operation's error for ``cluster`` under the effective constraint (``policies``: the emulator's org
    policies, ``"{project}/{constraint}"`` or ``"*/{constraint}"`` to a spec), or None when GKE creates it."""
    if not (cluster.get("privateClusterConfig") or {}).get("masterIpv4CidrBlock"):
        return None
    spec = policies.get(f"{project}/{CONSTRAINT}", policies.get(f"*/{CONSTRAINT}")) or {}
    rules = [rule for rule in spec.get("rules") or [] if not rule.get("condition")]
    network = peer_network(project, location, str(cluster.get("name") or ""))
    allowed = [v for r in rules for v in (r.get("values") or {}).get("allowedValues") or []]
    denied = [v for r in rules for v in (r.get("values") or {}).get("deniedValues") or []]
    if any(r.get("allowAll") for r in rules):
        return None
    refused = (
        any(r.get("denyAll") for r in rules)
        or any(_names(v, network) for v in denied)
        or (bool(allowed) and not any(_names(v, network) for v in allowed))
    )
    if not refused:
        return None
    return (
        f"Constraint constraints/{CONSTRAINT} violated for project {number}. Peering the network {network} is not "
        "allowed."
    )
