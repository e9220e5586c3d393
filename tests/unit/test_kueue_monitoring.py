"""The kueue role's Managed Prometheus objects (roles/kueue/templates/monitoring.yml.j2), rendered with the role's
defaults and an operator's bound, and checked against the fields Google's CRDs declare (no Managed Prometheus
operator runs locally, so nothing here applies them).

The fields checked are those of GoogleCloudPlatform/prometheus-engine's manifests/setup.yaml, the CRDs
clusterpodmonitorings and clusterrules (monitoring.googleapis.com/v1): a ClusterPodMonitoring's spec requires
`selector` and `endpoints`, each endpoint `port` and `interval`; `scheme`, `path`, `tls.insecureSkipVerify` and
`authorization` (`type`, `credentials.secret` with `name` and `key` required, `namespace`) are the endpoint's; a
ClusterRules' spec requires `groups`, each with `name`, `interval` and `rules` of `alert`, `expr`, `for`, `labels`,
`annotations`. The Go client's duration format is Prometheus' (`30s`, `60m`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jinja2
import yaml

from planb import paths
from tests.support.shared.dashboard_queries import selectors

ROLE = paths.REPO / "collections" / "ansible_collections" / "planb" / "gke" / "roles" / "kueue"
KUEUE_METRICS = Path(__file__).parents[1] / "support" / "shared" / "kueue" / "metrics-v0.19.2.tsv"
ENDPOINT_FIELDS = {"port", "path", "scheme", "interval", "timeout", "tls", "authorization"}
RULE_FIELDS = {"alert", "expr", "for", "labels", "annotations"}
DURATION = re.compile(r"[0-9]+(ms|s|m|h)")


def render(**overrides: Any) -> list[dict[str, Any]]:
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    text = env.from_string((ROLE / "templates" / "monitoring.yml.j2").read_text()).render({**defaults, **overrides})
    return [doc for doc in yaml.safe_load_all(text) if doc]


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def test_a_cluster_pod_monitoring_for_kueue_over_https_with_a_token_and_one_for_the_failover_controller() -> None:
    objects = render()
    monitorings = {o["metadata"]["name"]: o for o in by_kind(objects, "ClusterPodMonitoring")}
    assert set(monitorings) == {"planb-kueue", "planb-failover"}
    for monitoring in monitorings.values():
        assert monitoring["apiVersion"] == "monitoring.googleapis.com/v1"
        assert "namespace" not in monitoring["metadata"]  # cluster-scoped
        assert set(monitoring["spec"]) == {"selector", "endpoints"} and monitoring["spec"]["selector"]["matchLabels"]
        for endpoint in monitoring["spec"]["endpoints"]:
            assert set(endpoint) <= ENDPOINT_FIELDS and {"port", "interval"} <= set(endpoint)
            assert DURATION.fullmatch(endpoint["interval"])
    (kueue,) = monitorings["planb-kueue"]["spec"]["endpoints"]
    assert kueue["scheme"] == "https" and kueue["tls"] == {"insecureSkipVerify": True}
    assert kueue["authorization"] == {
        "type": "Bearer",
        "credentials": {"secret": {"name": "planb-metrics-scraper-token", "key": "token", "namespace": "kueue-system"}},
    }
    assert monitorings["planb-failover"]["spec"]["selector"]["matchLabels"] == {
        "app.kubernetes.io/name": "planb-failover"
    }


def test_the_scraper_may_get_metrics_and_the_collectors_may_read_its_token_only() -> None:
    objects = render()
    (role,) = by_kind(objects, "ClusterRole")
    assert role["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    (secret,) = by_kind(objects, "Secret")
    assert secret["type"] == "kubernetes.io/service-account-token"
    assert secret["metadata"]["annotations"] == {"kubernetes.io/service-account.name": "planb-metrics-scraper"}
    (reader,) = by_kind(objects, "Role")
    assert reader["rules"] == [
        {
            "apiGroups": [""],
            "resources": ["secrets"],
            "resourceNames": [secret["metadata"]["name"]],
            "verbs": ["get", "list", "watch"],
        }
    ]
    (binding,) = by_kind(objects, "RoleBinding")
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "collector", "namespace": "gmp-system"}]


def test_the_pending_alert_takes_the_operators_bound_and_reads_a_metric_kueue_exports() -> None:
    (rules,) = by_kind(render(kueue_monitoring_pending_alert_minutes=90), "ClusterRules")
    assert rules["apiVersion"] == "monitoring.googleapis.com/v1"
    (group,) = rules["spec"]["groups"]
    assert {"name", "interval", "rules"} == set(group)
    (rule,) = group["rules"]
    assert set(rule) == RULE_FIELDS and rule["alert"] == "PlanbJobPendingTooLong"
    assert rule["for"] == "90m" and DURATION.fullmatch(rule["for"])
    # Prometheus' own template variables reach the rule unrendered by the role's Jinja.
    assert (
        "{{ $labels.cluster_queue }}" in rule["annotations"]["summary"]
        and "90 minutes" in rule["annotations"]["summary"]
    )
    kueue = {line.split("\t")[0] for line in KUEUE_METRICS.read_text().splitlines() if line and line[0] != "#"}
    assert {s.name for s in selectors(rule["expr"])} == {"kueue_pending_workloads"} <= kueue
