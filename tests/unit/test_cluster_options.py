"""gke_cluster's isolation, identity and release options (planb.gke's module_utils/cluster_options.py), checked before
any API call: the control plane's range, the service account's shape, the release channels the discovery document
offers."""

from __future__ import annotations

import pytest
from ansible_collections.planb.gke.plugins.module_utils import cluster_options
from ansible_collections.planb.gke.plugins.module_utils.cluster_options import (
    cluster_option_problems,
    master_cidr_problem,
    release_channel_problem,
    service_account_problem,
)

from planb.local.gke_emulator import discovery


def test_the_release_channels_are_the_discovery_documents_less_the_deprecated_one() -> None:
    channel = discovery.schema("container", "ReleaseChannel")["properties"]["channel"]
    offered = [value for value, old in zip(channel["enum"], channel["enumDeprecated"], strict=True) if not old]
    assert tuple(offered) == cluster_options.RELEASE_CHANNELS
    assert "UNSPECIFIED" in channel["enum"]
    refused = release_channel_problem("UNSPECIFIED")
    assert refused is not None and "planb's policy" in refused and "because" in refused
    unknown = release_channel_problem("FAST")
    assert unknown is not None and "RAPID, REGULAR, STABLE, EXTENDED" in unknown
    assert release_channel_problem("STABLE") is None and release_channel_problem(None) is None


@pytest.mark.parametrize(
    ("cidr", "fragment"),
    [
        ("172.16.0.32/28", None),
        ("10.255.255.240/28", None),
        ("192.168.1.0/28", None),
        ("172.16.0.0/24", "must be a /28: GKE's rule"),
        ("172.16.0.33/28", "host bits set: the /28 block that holds it is 172.16.0.32/28"),
        ("8.8.8.0/28", "planb's policy is an RFC 1918 range"),
        ("172.32.0.0/28", "planb's policy is an RFC 1918 range"),
        ("fd00::/124", "not an IPv4 CIDR block"),
        ("172.16.0.32", "must be a /28"),
    ],
)
def test_the_control_planes_range_is_an_rfc1918_slash_28(cidr: str, fragment: str | None) -> None:
    problem = master_cidr_problem(cidr)
    if fragment is None:
        assert problem is None
    else:
        assert problem is not None and fragment in problem, problem


@pytest.mark.parametrize(
    ("email", "valid"),
    [
        ("planb-nodes@my-project.iam.gserviceaccount.com", True),
        ("planb-nodes@my-project.example.com.iam.gserviceaccount.com", True),  # a domain-scoped project's
        ("123456789012-compute@developer.gserviceaccount.com", True),
        ("nodes@my-project.iam.gserviceaccount.com", False),  # an account ID is 6-30 characters
        ("Planb-Nodes@my-project.iam.gserviceaccount.com", False),
        ("planb-nodes@my-project.iam.gserviceaccount.com.evil", False),
        ("someone@example.com", False),
        ("default", False),
    ],
)
def test_a_service_account_is_checked_by_shape(email: str, valid: bool) -> None:
    problem = service_account_problem("node_service_account", email)
    assert (problem is None) is valid, problem
    if not valid:
        assert problem is not None and problem.startswith(f"node_service_account {email!r} is not a service account")


def test_a_master_range_needs_private_nodes() -> None:
    params = {"master_ipv4_cidr": "172.16.0.32/28", "private_nodes": False}
    (problem,) = cluster_option_problems(params)
    assert problem.startswith("master_ipv4_cidr needs private_nodes true: planb's policy, because")
    assert cluster_option_problems({**params, "private_nodes": True}) == []
    assert cluster_option_problems({"private_nodes": True}) == []  # GKE picks the control plane's address itself
