"""planb.local.stack.kuberay_layout without a server: which layout and version the environment asks for, and the
operator Deployment as KubeRay's Helm chart labels it (what the chart's queues release looks for)."""

from __future__ import annotations

import re

import pytest

from planb import paths
from planb.local.stack import kuberay_layout
from planb.local.stack.kuberay_layout import KubeRayLayoutError


def test_the_default_is_the_pinned_operator_in_cluster() -> None:
    assert kuberay_layout.from_env({}) == ("in-cluster", paths.versions()["KUBERAY_VERSION"])
    env = {kuberay_layout.LAYOUT_ENV: "hosted", kuberay_layout.VERSION_ENV: "v1.4.2"}
    assert kuberay_layout.from_env(env) == ("hosted", "v1.4.2")


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({kuberay_layout.LAYOUT_ENV: "addon"}, "PLANB_KUBERAY_LAYOUT='addon': expected one of in-cluster, hosted"),
        ({kuberay_layout.VERSION_ENV: "latest"}, "version 'latest' (PLANB_KUBERAY_OPERATOR_VERSION, or --version)"),
        (
            {kuberay_layout.VERSION_ENV: "1.6.2"},
            "version '1.6.2' (PLANB_KUBERAY_OPERATOR_VERSION, or --version): expected a tag such as v1.6.2",
        ),
    ],
)
def test_a_bad_setting_is_named(env: dict[str, str], named: str) -> None:
    with pytest.raises(KubeRayLayoutError, match=re.escape(named)):
        kuberay_layout.from_env(env)


def test_the_deployment_carries_kuberay_charts_labels_and_no_replica() -> None:
    obj = kuberay_layout.deployment("v1.6.2")
    assert obj["metadata"] == {
        "name": "kuberay-operator",
        "namespace": "ray-system",
        "labels": {"app.kubernetes.io/name": "kuberay-operator", "app.kubernetes.io/instance": "kuberay-operator"},
    }
    assert obj["spec"]["replicas"] == 0
    template = obj["spec"]["template"]
    assert template["metadata"]["labels"]["app.kubernetes.io/name"] == "kuberay-operator"
    assert template["spec"]["containers"] == [{"name": "kuberay-operator", "image": "quay.io/kuberay/operator:v1.6.2"}]
