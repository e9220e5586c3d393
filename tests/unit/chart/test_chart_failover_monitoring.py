"""The failover controller's metrics as a cluster scrapes them: a Service, an optional PodMonitoring (Google Cloud
Managed Service for Prometheus) and ServiceMonitor (Prometheus Operator), both off by default, and probes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from planb.build import golden
from tests.support.shared.chart.helm import Helm

Render = Callable[..., list[dict[str, Any]]]
Obj = dict[str, Any]

ON = ("--set", "mode=queues", "--set", "failover.afterMinutes=10")
NAME = f"{golden.RELEASE}-failover"


def one(objs: list[Obj], kind: str) -> Obj:
    (found,) = [o for o in objs if o["kind"] == kind and o["metadata"]["name"] == NAME]
    return found


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def test_the_service_selects_the_controllers_pod_and_the_probes_use_its_port(template: Render) -> None:
    objs = template(*ON)
    kinds = {o["kind"] for o in objs}
    assert not kinds & {"PodMonitoring", "ServiceMonitor"}, "both are off by default"
    pod = one(objs, "Deployment")["spec"]["template"]
    service = one(objs, "Service")
    assert selects(service["spec"]["selector"], pod["metadata"]["labels"])
    assert service["spec"]["ports"] == [{"name": "metrics", "port": 9090, "targetPort": "metrics", "protocol": "TCP"}]
    (container,) = pod["spec"]["containers"]
    assert container["ports"] == [{"name": "metrics", "containerPort": 9090}]
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}
    assert not [a for a in container["args"] if a.startswith("--region")]
    with_region = one(template(*ON, "--set", "failover.region=us-east5"), "Deployment")
    assert "--region=us-east5" in with_region["spec"]["template"]["spec"]["containers"][0]["args"]


def test_the_monitors_select_what_they_scrape(template: Render) -> None:
    objs = template(
        *ON,
        *("--set", "failover.podMonitoring.enabled=true", "--set", "failover.serviceMonitor.enabled=true"),
        *("--set", "failover.serviceMonitor.labels.release=prometheus", "--set", "failover.podMonitoring.interval=15s"),
    )
    pod = one(objs, "Deployment")["spec"]["template"]
    pm, sm, service = one(objs, "PodMonitoring"), one(objs, "ServiceMonitor"), one(objs, "Service")
    assert pm["apiVersion"] == "monitoring.googleapis.com/v1"
    assert selects(pm["spec"]["selector"]["matchLabels"], pod["metadata"]["labels"])
    assert pm["spec"]["endpoints"] == [{"port": "metrics", "path": "/metrics", "interval": "15s"}]
    assert sm["apiVersion"] == "monitoring.coreos.com/v1"
    assert sm["metadata"]["labels"]["release"] == "prometheus"
    assert selects(sm["spec"]["selector"]["matchLabels"], service["metadata"]["labels"])
    assert sm["spec"]["namespaceSelector"] == {"matchNames": [service["metadata"]["namespace"]]}
    assert sm["spec"]["endpoints"] == [{"port": "metrics", "path": "/metrics", "interval": "30s"}]


@pytest.mark.parametrize(
    ("value", "where"),
    [
        pytest.param("failover.podMonitoring.interval=30 seconds", "/failover/podMonitoring/interval", id="interval"),
        pytest.param("failover.region=US East", "/failover/region", id="region"),
        pytest.param("dashboard.extra=1", "additional properties", id="dashboard-extra"),
    ],
)
def test_monitoring_values_are_checked(helm: Helm, value: str, where: str) -> None:
    done = helm("template", golden.RELEASE, str(golden.CHART_DIR), *ON, "--set", value)
    assert done.returncode != 0
    assert "values don't meet the specifications of the schema(s)" in done.stderr and where in done.stderr, done.stderr
