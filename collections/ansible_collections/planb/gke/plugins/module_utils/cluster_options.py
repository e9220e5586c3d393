# planb.gke: a cluster's isolation, identity and release options, checked before any API call.
"""Private nodes and the control plane's range, the nodes' service account, the release channel.

Each check names the option, what is wrong and the fix, and the page the rule comes from; what is GKE's rule and
what is planb's policy is said in the message. The node service account's shape is checked for gke_node_pool too.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

Params = dict[str, Any]

#: GKE's legacy (VPC Network Peering) private cluster page: the control plane's range is a /28 that overlaps no
#: range of the cluster's network.
DOC_PRIVATE_LEGACY = "https://cloud.google.com/kubernetes-engine/docs/how-to/legacy/network-isolation"
#: gcloud's --master-ipv4-cidr: "should have a netmask of size /28 and should be used in conjunction with the
#: --enable-private-nodes flag".
DOC_GCLOUD_CREATE = "https://cloud.google.com/sdk/gcloud/reference/container/clusters/create"
#: GKE's network isolation page (private nodes on current, Private Service Connect based clusters).
DOC_ISOLATION = "https://cloud.google.com/kubernetes-engine/docs/how-to/network-isolation"
#: A user-managed service account: SA_NAME@PROJECT_ID.iam.gserviceaccount.com, its ID 6-30 characters matching
#: [a-z]([-a-z0-9]*[a-z0-9]) (IAM v1 projects.serviceAccounts.create, accountId).
DOC_SERVICE_ACCOUNT = "https://cloud.google.com/iam/docs/reference/rest/v1/projects.serviceAccounts/create"
#: Compute Engine's default service account: PROJECT_NUMBER-compute@developer.gserviceaccount.com.
DOC_DEFAULT_SERVICE_ACCOUNT = "https://cloud.google.com/compute/docs/access/service-accounts#default_service_account"
#: Authorized networks for the control plane's endpoint: up to 50 CIDR ranges on the public endpoint (100 with private
#: nodes' internal endpoint), each an IPv4 range.
DOC_AUTHORIZED_NETWORKS = "https://cloud.google.com/kubernetes-engine/docs/how-to/authorized-networks"
#: GKE's limit of authorized networks on a cluster's public endpoint (DOC_AUTHORIZED_NETWORKS).
MAX_AUTHORIZED_NETWORKS = 50
#: GKE release channels (container v1 ReleaseChannel.channel).
DOC_RELEASE_CHANNELS = "https://cloud.google.com/kubernetes-engine/docs/concepts/release-channels"

#: container v1 ReleaseChannel.channel's enum (googleapiclient's container.v1.json) less UNSPECIFIED, which the
#: document marks deprecated; tests/unit/test_cluster_options.py compares them.
RELEASE_CHANNELS = ("RAPID", "REGULAR", "STABLE", "EXTENDED")
#: The prefix length GKE takes for the control plane's range.
MASTER_PREFIX = 28
#: RFC 1918's private ranges.
RFC1918 = tuple(ipaddress.IPv4Network(block) for block in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))

_ACCOUNT_ID = r"[a-z][-a-z0-9]{4,28}[a-z0-9]"
#: A project ID, or a domain-scoped one as it appears in an email (example.com:my-project -> my-project.example.com).
_PROJECT_IN_EMAIL = r"[a-z][-a-z0-9]{4,28}[a-z0-9](\.[a-z0-9][-a-z0-9]*)*"
SERVICE_ACCOUNT = re.compile(
    rf"^{_ACCOUNT_ID}@{_PROJECT_IN_EMAIL}\.iam\.gserviceaccount\.com$|^[0-9]{{1,20}}-compute@developer\.gserviceaccount\.com$"
)


def service_account_problem(option: str, value: str | None) -> str | None:
    """Why ``value`` is not a service account email, or None (unset is GKE's default, Compute Engine's)."""
    if not value or SERVICE_ACCOUNT.fullmatch(value):
        return None
    return (
        f"{option} {value!r} is not a service account email: SA_NAME@PROJECT_ID.iam.gserviceaccount.com, SA_NAME "
        f"6-30 lowercase letters, digits or hyphens starting with a letter ({DOC_SERVICE_ACCOUNT}), or Compute "
        f"Engine's PROJECT_NUMBER-compute@developer.gserviceaccount.com ({DOC_DEFAULT_SERVICE_ACCOUNT}); leave it "
        "unset for GKE's default"
    )


def master_cidr_problem(value: str) -> str | None:
    """Why ``value`` cannot be the control plane's range, or None."""
    try:
        block = ipaddress.IPv4Network(value, strict=False)
    except ValueError:
        return f"master_ipv4_cidr {value!r} is not an IPv4 CIDR block such as 172.16.0.32/28"
    if block.prefixlen != MASTER_PREFIX:
        return (
            f"master_ipv4_cidr {value} must be a /28: GKE's rule for the control plane's range ({DOC_PRIVATE_LEGACY}, "
            f"{DOC_GCLOUD_CREATE}); for example 172.16.0.32/28"
        )
    if str(block) != value:
        return f"master_ipv4_cidr {value} has host bits set: the /28 block that holds it is {block}"
    if not any(block.subnet_of(private) for private in RFC1918):
        return (
            f"master_ipv4_cidr {value} is refused: planb's policy is an RFC 1918 range (10.0.0.0/8, 172.16.0.0/12, "
            "192.168.0.0/16), because a public range there would hide those public addresses from the cluster's "
            "network, and planb cannot tell a privately used public range from a mistyped one"
        )
    return None


def release_channel_problem(value: str | None) -> str | None:
    """Why ``value`` is not a release channel planb sets, or None (unset leaves the cluster's channel to GKE)."""
    if not value or value in RELEASE_CHANNELS:
        return None
    if value == "UNSPECIFIED":
        return (
            "release_channel UNSPECIFIED is refused: planb's policy, because the container v1 discovery document "
            "deprecates it ('it will be removed in the future'); set RAPID, REGULAR, STABLE or EXTENDED, or leave "
            f"release_channel unset to keep the cluster's channel ({DOC_RELEASE_CHANNELS})"
        )
    channels = ", ".join(RELEASE_CHANNELS)
    return f"release_channel {value!r} is not a GKE release channel: {channels} ({DOC_RELEASE_CHANNELS})"


def authorized_networks_problems(networks: list[str] | None) -> list[str]:
    """Why ``networks`` cannot be the control plane's authorized networks, one line each; [] when they can."""
    problems: list[str] = []
    if networks and len(networks) > MAX_AUTHORIZED_NETWORKS:
        problems.append(
            f"master_authorized_networks has {len(networks)} ranges: GKE takes at most {MAX_AUTHORIZED_NETWORKS} on "
            f"the public endpoint ({DOC_AUTHORIZED_NETWORKS}); merge ranges into wider blocks"
        )
    for value in networks or []:
        try:
            block = ipaddress.IPv4Network(value, strict=False)
        except ValueError:
            problems.append(
                f"master_authorized_networks entry {value!r} is not an IPv4 CIDR block such as 203.0.113.0/24 "
                f"({DOC_AUTHORIZED_NETWORKS})"
            )
            continue
        if str(block) != value:
            problems.append(f"master_authorized_networks entry {value} has host bits set: write {block}")
    return problems


def default_pool_autoscaling_problems(low: int | None, high: int | None, count: int) -> list[str]:
    """Why default-pool's autoscaling bounds do not hold, one line each; [] when unset or they hold."""
    if low is None or high is None:
        return []
    if low < 1:
        return [
            f"default_pool_min_node_count {low} is refused: planb's policy is a floor of at least 1, because "
            "default-pool runs Kueue, the KubeRay operator and every job's Ray head: with no node there, no job is "
            "admitted until the autoscaler adds one; set 1 or more"
        ]
    if high < low:
        return [f"default_pool_max_node_count {high} is below default_pool_min_node_count {low}; raise the maximum"]
    if not low <= count <= high:
        return [
            f"default_pool_node_count {count} is outside default_pool_min_node_count..default_pool_max_node_count "
            f"({low}..{high}): GKE's autoscaler would move it at once; set a count within the bounds"
        ]
    return []


def option_problems(
    *,
    master_ipv4_cidr: str | None,
    private_nodes: bool,
    node_service_account: str | None,
    release_channel: str | None,
    master_authorized_networks: list[str] | None = None,
) -> list[str]:
    """The problems of gke_cluster's private_nodes, master_ipv4_cidr, node_service_account, release_channel and
    master_authorized_networks."""
    problems: list[str] = authorized_networks_problems(master_authorized_networks)
    if master_ipv4_cidr:
        problem = master_cidr_problem(master_ipv4_cidr)
        if problem:
            problems.append(problem)
        if not private_nodes:
            problems.append(
                "master_ipv4_cidr needs private_nodes true: planb's policy, because the range is the control plane's "
                "in a cluster with private nodes (gcloud's --master-ipv4-cidr 'should be used in conjunction with "
                f"the --enable-private-nodes flag', {DOC_GCLOUD_CREATE}); set private_nodes, or drop master_ipv4_cidr"
            )
    for problem in (
        service_account_problem("node_service_account", node_service_account),
        release_channel_problem(release_channel),
    ):
        if problem:
            problems.append(problem)
    return problems


def cluster_option_problems(params: Params) -> list[str]:
    """option_problems of gke_cluster's options as a dict."""
    return option_problems(
        master_ipv4_cidr=params.get("master_ipv4_cidr"),
        private_nodes=bool(params.get("private_nodes")),
        node_service_account=params.get("node_service_account"),
        release_channel=params.get("release_channel"),
        master_authorized_networks=params.get("master_authorized_networks"),
    )
