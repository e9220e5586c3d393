"""The queues chart's failover controller: off by default, a stock image when on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from planb.catalog import chart_files

Render = Callable[..., list[dict[str, Any]]]


def kinds(objs: list[dict[str, Any]]) -> list[str]:
    return sorted(o["kind"] for o in objs)


def test_off_by_default(template: Render) -> None:
    objs = template("--set", "mode=queues")
    assert not [o for o in objs if "failover" in o["metadata"]["name"]]


def test_not_in_cluster_in_local_mode(template: Render) -> None:
    objs = template(
        "--set", "mode=queues", "--set-json", "failover.afterMinutes=0.5", "--set", "failover.inCluster=false"
    )
    assert not [o for o in objs if "failover" in o["metadata"]["name"]]


def test_on_renders_a_stock_image_deployment_with_the_script(template: Render) -> None:
    objs = template("--set", "mode=queues", "--set", "failover.afterMinutes=10")
    mine = [o for o in objs if o["metadata"]["name"].endswith("-failover")]
    assert kinds(mine) == ["ClusterRole", "ClusterRoleBinding", "ConfigMap", "Deployment", "ServiceAccount"]
    cm = next(o for o in mine if o["kind"] == "ConfigMap")
    assert cm["data"]["failover_controller.py"] == chart_files.FAILOVER_SOURCE.read_text()
    pod = next(o for o in mine if o["kind"] == "Deployment")["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["image"] == "python:3.11-slim"
    assert "--after-seconds=600" in container["args"][0]
    assert "--plan-a-flavor=on-demand" in container["args"][0]
    rules = next(o for o in mine if o["kind"] == "ClusterRole")["rules"]
    granted = {(g, r): set(rule["verbs"]) for rule in rules for g in rule["apiGroups"] for r in rule["resources"]}
    assert granted[("kueue.x-k8s.io", "workloads")] >= {"watch", "patch"}
    assert granted[("ray.io", "rayjobs")] >= {"patch"}
    assert granted[("", "events")] == {"create"}
