"""The failover controller's pod as values place it: failover.resources, nodeSelector, tolerations
and affinity. Their defaults render the manifest the chart rendered when they were hard-coded (the CPU pool, 50m and
64Mi requested, 128Mi the limit); each set value lands in the Deployment; a value of the wrong type is refused by the
schema. And chart-testing's values files (charts/planb/ci/*-values.yaml, which `ct lint` reads) render, and stay out
of the packaged chart.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb.build import golden
from tests.support.shared.chart.helm import Helm

Render = Callable[..., list[dict[str, Any]]]
Obj = dict[str, Any]

ON = ("--set", "mode=queues", "--set", "failover.afterMinutes=10")
NAME = f"{golden.RELEASE}-failover"
SCHEMA = "values don't meet the specifications of the schema(s)"
CI = golden.CHART_DIR / "ci"


def pod_spec(objs: list[Obj]) -> Obj:
    (deployment,) = [o for o in objs if o["kind"] == "Deployment" and o["metadata"]["name"] == NAME]
    spec: Obj = deployment["spec"]["template"]["spec"]
    return spec


def test_the_defaults_render_what_was_hard_coded(template: Render) -> None:
    spec = pod_spec(template(*ON, "--set", "nodePools.cpu=cpu-pool"))
    assert spec["nodeSelector"] == {"cloud.google.com/gke-nodepool": "cpu-pool"}
    assert "tolerations" not in spec and "affinity" not in spec
    (container,) = spec["containers"]
    assert container["resources"] == {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}}


def test_each_value_lands_in_the_deployment(template: Render, tmp_path: Path) -> None:
    tolerations = [
        {"key": "planb.dev/system", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "dedicated", "operator": "Equal", "value": "ops", "effect": "NoExecute", "tolerationSeconds": 60},
    ]
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}
                ]
            }
        }
    }
    resources = {"requests": {"cpu": "100m", "memory": "96Mi"}, "limits": {"cpu": "1", "memory": "256Mi"}}
    values = tmp_path / "placement.yaml"
    values.write_text(
        yaml.safe_dump(
            {
                "failover": {
                    "resources": resources,
                    "nodeSelector": {"cloud.google.com/gke-nodepool": "system-pool", "planb.dev/role": "ops"},
                    "tolerations": tolerations,
                    "affinity": affinity,
                }
            }
        )
    )
    spec = pod_spec(template(*ON, "-f", str(values)))
    # A nodeSelector replaces the CPU pool's whole, rather than merging with it.
    assert spec["nodeSelector"] == {"cloud.google.com/gke-nodepool": "system-pool", "planb.dev/role": "ops"}
    assert spec["tolerations"] == tolerations
    assert spec["affinity"] == affinity
    assert spec["containers"][0]["resources"] == resources


def test_resources_render_only_what_is_set(template: Render) -> None:
    """A null drops a default: limits only, requests only, or no resources at all."""
    limits_only = pod_spec(template(*ON, "--set", "failover.resources.requests=null"))
    assert limits_only["containers"][0]["resources"] == {"limits": {"memory": "128Mi"}}
    requests_only = pod_spec(template(*ON, "--set", "failover.resources.limits=null"))
    assert requests_only["containers"][0]["resources"] == {"requests": {"cpu": "50m", "memory": "64Mi"}}
    neither = pod_spec(
        template(*ON, "--set", "failover.resources.limits=null", "--set", "failover.resources.requests=null")
    )
    assert "resources" not in neither["containers"][0]


@pytest.mark.parametrize(
    ("value", "where"),
    [
        pytest.param(("--set", "failover.resources=lots"), "/failover/resources", id="resources-string"),
        pytest.param(("--set", "failover.resources.requests.cpu=lots"), "/failover/resources/requests/cpu", id="cpu"),
        pytest.param(("--set", "failover.resources.limits.gpu=1"), "additional properties 'gpu'", id="limits-gpu"),
        pytest.param(("--set-json", 'failover.nodeSelector=["pool"]'), "/failover/nodeSelector", id="selector-list"),
        pytest.param(("--set-json", 'failover.nodeSelector={"pool":1}'), "/failover/nodeSelector/pool", id="label-int"),
        pytest.param(("--set", "failover.tolerations=ops"), "/failover/tolerations", id="tolerations-string"),
        pytest.param(("--set", "failover.tolerations[0].operator=In"), "/failover/tolerations/0/operator", id="op"),
        pytest.param(("--set", "failover.affinity.nodeSelector.pool=ops"), "additional properties", id="affinity-key"),
        pytest.param(("--set-json", "failover.affinity=[]"), "/failover/affinity", id="affinity-list"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused(helm: Helm, value: tuple[str, str], where: str) -> None:
    done = helm("template", golden.RELEASE, str(golden.CHART_DIR), *ON, *value)
    assert done.returncode != 0
    assert SCHEMA in done.stderr and where in done.stderr, done.stderr


@pytest.mark.parametrize("path", sorted(CI.glob("*-values.yaml")), ids=lambda p: p.name)
def test_each_chart_testing_values_file_renders(template: Render, path: Path) -> None:
    """`ct lint` and `ct install` take exactly ci/*-values.yaml; each renders its mode's objects."""
    mode = yaml.safe_load(path.read_text())["mode"]
    kinds = {o["kind"] for o in template("-f", str(path))}
    assert ("RayJob" in kinds) == (mode == "job") and ("ClusterQueue" in kinds) == (mode == "queues")


def test_chart_testing_covers_both_modes_and_the_controllers_values() -> None:
    files = {p.name: yaml.safe_load(p.read_text()) for p in CI.glob("*-values.yaml")}
    assert {v["mode"] for v in files.values()} == {"job", "queues"}
    placed = [v["failover"] for v in files.values() if "failover" in v]
    assert any({"resources", "nodeSelector", "tolerations", "affinity"} <= set(f) for f in placed)


def test_ci_is_left_out_of_the_chart(helm: Helm, tmp_path: Path) -> None:
    """helm loads a chart (for template, package and install alike) without what .helmignore names: ci/ is absent
    from .Files of a copy that has it."""
    chart = tmp_path / "planb"
    shutil.copytree(golden.CHART_DIR, chart)
    assert (chart / "ci").is_dir()
    (chart / "templates" / "zz-files-probe.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: files-probe\ndata:\n  files: |\n"
        '    {{- range $path, $_ := .Files.Glob "**" }}\n    {{ $path }}\n    {{- end }}\n'
    )
    done = helm("template", golden.RELEASE, str(chart), "--show-only", "templates/zz-files-probe.yaml")
    assert done.returncode == 0, done.stderr
    files = yaml.safe_load(done.stdout)["data"]["files"].split()
    assert "README.md" in files and "files/train.py" in files
    assert [f for f in files if f.startswith("ci/")] == []
