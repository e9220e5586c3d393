"""Where the manager finds a region's kubeconfig: its MultiKueueCluster's clusterSource."""

from __future__ import annotations

import re

import pytest

from planb import paths
from planb.errors import UsageError
from planb.kube import MAX_ERROR_TEXT
from planb.regions.access.connection import (
    DEADLINE_ENV,
    MAX_BYTES_ENV,
    REGION_DEADLINE_S,
    REGION_MAX_BYTES,
    RegionAccessError,
    kubeconfig_source,
    region_connection,
    region_limits,
)


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


# Each request to a region: an overall deadline and a size cap, from the environment
# (planb.regions.access.connection).
def test_a_regions_limits_default_to_30_s_and_64_mib() -> None:
    limits = region_limits({})
    assert (limits.deadline_s, limits.max_bytes) == (30.0, 64 << 20)
    assert (limits.deadline_setting, limits.size_setting) == (DEADLINE_ENV, MAX_BYTES_ENV)


@pytest.mark.parametrize(
    ("deadline", "size", "expected"),
    [
        ("1", "65536", (1.0, 65536)),
        ("2.5", "64Ki", (2.5, 65536)),
        (" 10 ", "3Mi", (10.0, 3 << 20)),
        ("", "1Gi", (30.0, 1 << 30)),
    ],
)
def test_a_regions_limits_are_read_from_the_environment(deadline: str, size: str, expected: tuple[float, int]) -> None:
    limits = region_limits({DEADLINE_ENV: deadline, MAX_BYTES_ENV: size})
    assert (limits.deadline_s, limits.max_bytes) == expected


@pytest.mark.parametrize(
    ("name", "value"),
    [
        (DEADLINE_ENV, "0"),
        (DEADLINE_ENV, "-1"),
        (DEADLINE_ENV, "nan"),
        (DEADLINE_ENV, "inf"),
        (DEADLINE_ENV, "30s"),
        (MAX_BYTES_ENV, "0"),
        (MAX_BYTES_ENV, "-1"),
        (MAX_BYTES_ENV, "64KB"),
        (MAX_BYTES_ENV, "1.5Mi"),
    ],
)
def test_a_limit_that_is_not_one_is_refused_by_name_with_the_fix(name: str, value: str) -> None:
    with pytest.raises(UsageError, match=rf"{name}='{re.escape(value)}' is not .* Fix: "):
        region_limits({name: value})


def test_the_documents_give_the_limits_and_their_defaults_as_the_code_has_them() -> None:
    regions = " ".join((paths.REPO / "docs" / "regions.md").read_text().split())
    assert f"| `{DEADLINE_ENV}` | {REGION_DEADLINE_S:g} (seconds) |" in regions
    assert f"| `{MAX_BYTES_ENV}` | {REGION_MAX_BYTES >> 20}Mi (bytes, or with `Ki`, `Mi`, `Gi`) |" in regions
    assert f"kept to its first {MAX_ERROR_TEXT:,} characters" in regions
    security = " ".join((paths.REPO / "docs" / "security.md").read_text().split())
    assert f"`{DEADLINE_ENV}` (default {REGION_DEADLINE_S:g} s," in security
    assert f"`{MAX_BYTES_ENV}` (default {REGION_MAX_BYTES >> 20} MiB," in security
    assert f"kept to {MAX_ERROR_TEXT:,} characters" in security


class AskedManager:
    """A manager API server that records each path asked and holds nothing."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def get(self, path: str) -> None:
        self.asked.append(path)


@pytest.mark.parametrize("region", ["..", ".", "a/b", "%2e%2e", "US-EAST5", "a\n", "", "x" * 254])
def test_a_region_name_that_is_not_dns_1123_is_refused_before_anything_is_asked(region: str) -> None:
    """The region's name went into the MultiKueueCluster's URL, quoted but ``..`` as it is; now a name
    that is not a DNS-1123 subdomain is refused by name (escaped, cut to 100 characters) and nothing is asked."""
    manager = AskedManager()
    with pytest.raises(
        RegionAccessError, match=r"is not a DNS-1123 subdomain, as a MultiKueueCluster's name"
    ) as caught:
        region_connection(manager, region)  # type: ignore[arg-type]
    assert manager.asked == []
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 500
