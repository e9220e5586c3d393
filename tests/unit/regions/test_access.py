"""Where the manager finds a region's kubeconfig: its MultiKueueCluster's clusterSource."""

from __future__ import annotations

import pytest

from planb.regions.access import RegionAccessError, kubeconfig_source


def cluster(source: dict) -> dict:
    return {"metadata": {"name": "us-east5"}, "spec": {"clusterSource": source}}


def test_a_secret_kubeconfig_is_read_by_name_and_secret_is_kueues_default_location_type() -> None:
    assert kubeconfig_source(cluster({"kubeConfig": {"location": "us-east5"}})) == ("Secret", "us-east5")
    path = {"kubeConfig": {"location": "/etc/kueue/us-east5", "locationType": "Path"}}
    assert kubeconfig_source(cluster(path)) == ("Path", "/etc/kueue/us-east5")


def test_a_cluster_profile_region_is_refused_by_name_with_the_fix() -> None:
    refused = r"MultiKueueCluster us-east5 uses clusterProfileRef.*kubeConfig Secret"
    with pytest.raises(RegionAccessError, match=refused):
        kubeconfig_source(cluster({"clusterProfileRef": {"name": "us-east5"}}))
