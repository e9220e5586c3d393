"""The pinned versions live in one file; what repeats them elsewhere must agree."""

from __future__ import annotations

import yaml

from planb import paths


def test_kueue_role_default_is_the_pinned_version() -> None:
    defaults = yaml.safe_load((paths.REPO / "roles" / "kueue" / "defaults" / "main.yml").read_text())
    assert defaults["kueue_version"] == paths.versions()["KUEUE_VERSION"]


def test_every_pinned_version_is_a_tag() -> None:
    versions = paths.versions()
    assert set(versions) >= {
        "KUBERNETES_VERSION",
        "ETCD_VERSION",
        "KWOK_VERSION",
        "KUEUE_VERSION",
        "HELM_VERSION",
        "KUBERAY_VERSION",
        "AUTOSCALER_APIS_VERSION",
    }
    assert versions["KUBERNETES_VERSION"].startswith("v1.34.")
    assert versions["HELM_VERSION"].startswith("v3.19.")
    assert all(v.startswith("v") for v in versions.values())
