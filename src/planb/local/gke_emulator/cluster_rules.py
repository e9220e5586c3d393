"""GKE's documented validation of a cluster in clusters.create, as the emulator applies it server-side: its name and
version, private nodes and the control plane's range, the pods' and services' secondary ranges; each pool it holds
is checked as nodePools.create checks one (``gke_emulator.rules``, which also says what a refusal is).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from planb.catalog.versions import parse_version
from planb.local.gke_emulator.rules import check, check_name, check_node_pool

Body = dict[str, Any]

DOC_VERSIONS = "https://cloud.google.com/kubernetes-engine/docs/release-notes"
#: The container v1 NetworkConfig: defaultEnablePrivateNodes and the deprecated PrivateClusterConfig.enablePrivateNodes
#: are never both given (the discovery document says the same).
DOC_NETWORK_CONFIG = (
    "https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters#NetworkConfig"
)
#: GKE's private clusters page (VPC Network Peering): "Private clusters must be VPC-native clusters", and the control
#: plane's range is a /28.
DOC_PRIVATE_CLUSTERS = "https://cloud.google.com/kubernetes-engine/docs/how-to/legacy/network-isolation"
#: Oldest minor version the emulator (like GKE's release channels in 2026) still creates.
OLDEST_SUPPORTED_MINOR = (1, 32)
#: container v1 IPAllocationPolicy.clusterSecondaryRangeName / servicesSecondaryRangeName: "This must be an existing
#: secondary range associated with the cluster subnetwork. This field is only applicable with use_ip_aliases is true".
DOC_IP_ALLOCATION = (
    "https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters#IPAllocationPolicy"
)


def check_secondary_ranges(cluster: Body, subnet_ranges: list[str] | None) -> None:
    """The pods' and services' secondary range names: with useIpAliases, and ranges of the cluster's subnetwork
    (``subnet_ranges``: its range names, None when the emulator's day-0 setup does not hold that subnetwork)."""
    allocation = cluster.get("ipAllocationPolicy") or {}
    names = [allocation.get(f) for f in ("clusterSecondaryRangeName", "servicesSecondaryRangeName")]
    check(
        not any(names) or bool(allocation.get("useIpAliases")),
        "ipAllocationPolicy.clusterSecondaryRangeName and servicesSecondaryRangeName are only applicable with "
        "useIpAliases true",
        DOC_IP_ALLOCATION,
    )
    for name in names:
        check(
            not name or subnet_ranges is None or name in subnet_ranges,
            f"Secondary range {name!r} must be an existing secondary range of subnetwork "
            f"{cluster.get('subnetwork') or 'default'} (it has {', '.join(subnet_ranges or []) or 'none'})",
            DOC_IP_ALLOCATION,
        )


def check_cluster(cluster: Body) -> None:
    """What GKE refuses in clusters.create."""
    check_name("Cluster", str(cluster.get("name", "")))
    version = str(cluster.get("initialClusterVersion") or "latest")
    if version != "latest":
        parsed = parse_version(version)
        check(parsed is not None, f"Version {version!r} is not a GKE version", DOC_VERSIONS)
        assert parsed is not None
        check(
            parsed[:2] >= OLDEST_SUPPORTED_MINOR,
            f"Master version {version!r} is unsupported",
            DOC_VERSIONS,
        )
    check_private_nodes(cluster)
    for pool in cluster.get("nodePools") or []:
        check_node_pool(pool, version)


def check_private_nodes(cluster: Body) -> None:
    """Private nodes and the control plane's range, as GKE documents them."""
    network = cluster.get("networkConfig") or {}
    private = cluster.get("privateClusterConfig") or {}
    check(
        "defaultEnablePrivateNodes" not in network or "enablePrivateNodes" not in private,
        "It is invalid to specify both PrivateClusterConfig.enablePrivateNodes and "
        "NetworkConfig.defaultEnablePrivateNodes",
        DOC_NETWORK_CONFIG,
    )
    allocation = cluster.get("ipAllocationPolicy") or {}
    check(
        not (network.get("defaultEnablePrivateNodes") or private.get("enablePrivateNodes"))
        or (allocation.get("useIpAliases") is not False and not allocation.get("useRoutes")),
        "Private clusters must be VPC-native clusters (ipAllocationPolicy.useIpAliases)",
        DOC_PRIVATE_CLUSTERS,
    )
    cidr = private.get("masterIpv4CidrBlock")
    if cidr:
        try:
            block: ipaddress.IPv4Network | None = ipaddress.IPv4Network(cidr)
        except ValueError:
            block = None
        check(
            block is not None and block.prefixlen == 28,
            f"privateClusterConfig.masterIpv4CidrBlock {cidr!r} must be a /28 IPv4 CIDR block",
            DOC_PRIVATE_CLUSTERS,
        )
