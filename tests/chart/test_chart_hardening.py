"""Issue 11's chart hardening, on real `helm template` output.

* Queues: the ClusterQueue serves only the namespaces it selects, plan B's quota is finite and sized
  from the profile, and `helm uninstall` keeps the queue objects so running Workloads do not break.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb.catalog import golden, profiles, values
from tests.chart.conftest import Helm

Render = Callable[..., list[dict[str, Any]]]
CHART = golden.CHART_DIR
SELECTOR = {"app.kubernetes.io/name": "planb", "app.kubernetes.io/instance": "job-1"}
QUEUE_KINDS = {"AdmissionCheck", "ClusterQueue", "LocalQueue", "ProvisioningRequestConfig", "ResourceFlavor"}


def by_kind(objs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == kind]


@pytest.fixture()
def notes(helm: Helm, tmp_path: Path) -> Callable[..., str]:
    """NOTES.txt as helm renders it for a release (tpl of the real file in a copy of the chart)."""
    chart = tmp_path / "planb"
    shutil.copytree(CHART, chart)
    (chart / "NOTES.probe").write_text((CHART / "templates" / "NOTES.txt").read_text())
    (chart / "templates" / "zz-notes-probe.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes-probe\n"
        'data:\n  notes: {{ tpl (.Files.Get "NOTES.probe") . | toJson }}\n'
    )

    def render(*args: str) -> str:
        done = helm("template", "job-1", str(chart), *args)
        assert done.returncode == 0, done.stderr
        (probe,) = [d for d in yaml.safe_load_all(done.stdout) if d and d["metadata"]["name"] == "notes-probe"]
        return str(probe["data"]["notes"])

    return render


# -- Queues: who may submit, how much of plan B, and uninstall (issue 11, medium 9)


def test_cluster_queue_serves_only_the_local_queue_namespace_by_default(template: Render) -> None:
    (cq,) = by_kind(template("--set", "mode=queues"), "ClusterQueue")
    assert cq["spec"]["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "default"}}
    moved = template("--set", "mode=queues", "--set", "queues.localQueue.namespace=team-a")
    (cq,) = by_kind(moved, "ClusterQueue")
    assert cq["spec"]["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "team-a"}}


def test_cluster_queue_namespace_selector_is_a_value(template: Render) -> None:
    access = r"queues.namespaceSelector.matchLabels.planb\.dev/queue-access=true"
    objs = template("--set", "mode=queues", "--set-string", access)
    (cq,) = by_kind(objs, "ClusterQueue")
    assert cq["spec"]["namespaceSelector"] == {"matchLabels": {"planb.dev/queue-access": "true"}}


@pytest.mark.parametrize("profile", values.SHIPPED)
def test_dws_quota_is_finite_and_one_slice_of_the_profile(template: Render, profile: str) -> None:
    objs = template("-f", str(CHART / "values" / f"{profile}.yaml"), "--set", "mode=queues")
    (cq,) = by_kind(objs, "ClusterQueue")
    (group,) = cq["spec"]["resourceGroups"]
    quotas = {f["name"]: {r["name"]: r["nominalQuota"] for r in f["resources"]} for f in group["flavors"]}
    prof = profiles.get(profile)
    # Plan B's pool holds one slice by default (planb_dws_slices: 1), the same size as plan A's.
    assert quotas["dws"][prof.resource_name] == prof.chips_per_slice
    assert quotas["dws"] == quotas["on-demand"]


def test_queue_objects_are_kept_by_helm_uninstall(template: Render) -> None:
    objs = template("--set", "mode=queues")
    assert {o["kind"] for o in objs} == QUEUE_KINDS
    for obj in objs:
        assert obj["metadata"].get("annotations", {}).get("helm.sh/resource-policy") == "keep", obj["kind"]
    for obj in template("--set", "mode=queues", "--set", "queues.keepOnUninstall=false"):
        assert "helm.sh/resource-policy" not in obj["metadata"].get("annotations", {}), obj["kind"]


def test_queues_notes_say_uninstall_keeps_the_queues(notes: Callable[..., str]) -> None:
    text = notes("--set", "mode=queues")
    assert "helm uninstall keeps" in text
    assert "kubectl delete clusterqueue cluster-queue" in text
