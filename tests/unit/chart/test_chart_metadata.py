"""Chart.yaml as a published chart's: the Kubernetes range planb supports, one annotation and label domain, the
pinned Kueue and KubeRay versions."""

from __future__ import annotations

import pytest
import yaml

from planb import paths
from planb.build import golden
from tests.support.shared.chart.helm import Helm

CHART_YAML = yaml.safe_load((golden.CHART_DIR / "Chart.yaml").read_text())


def test_the_annotations_name_the_pinned_kueue_and_kuberay() -> None:
    pins = paths.versions()
    assert CHART_YAML["annotations"] == {
        "planb.dev/kueue-version": pins["KUEUE_VERSION"],
        "planb.dev/kuberay-version": pins["KUBERAY_VERSION"],
    }


def test_the_chart_and_planb_write_one_domain() -> None:
    """planb's labels and annotations are planb.dev/; the old planb.io/ is gone from the chart and the code."""
    roots = (golden.CHART_DIR, paths.REPO / "src", paths.REPO / "tests" / "golden")
    stale = [
        str(path.relative_to(paths.REPO))
        for root in roots
        for path in root.rglob("*")
        if path.is_file()
        and path.suffix in {".py", ".yaml", ".tpl", ".txt", ".json"}
        and "planb.io/" in path.read_text()
    ]
    assert stale == []


@pytest.mark.parametrize(
    ("kube_version", "installs"),
    [
        (paths.versions()["KUBERNETES_VERSION"], True),  # what the local stack runs
        ("v1.34.1-gke.1829001", True),  # GKE's versions read as semver pre-releases: the range's "-0" admits them
        ("v1.33.5-gke.1080000", False),
    ],
)
def test_kube_version_admits_gke_1_34_and_later(helm: Helm, kube_version: str, installs: bool) -> None:
    assert CHART_YAML["kubeVersion"] == ">=1.34.0-0"
    done = helm("template", "job-1", str(golden.CHART_DIR), "--kube-version", kube_version)
    assert (done.returncode == 0) is installs, done.stderr
    if not installs:
        assert "chart requires kubeVersion: >=1.34.0-0" in done.stderr


def test_the_chart_says_where_it_comes_from() -> None:
    assert CHART_YAML["home"] in CHART_YAML["sources"]
    assert [m["name"] for m in CHART_YAML["maintainers"]] == ["planb"]
