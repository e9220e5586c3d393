"""The Grafana dashboard: every query names a metric planb's failover controller or Kueue v0.19.2 exports, and the
chart ships it as a ConfigMap Grafana's sidecar loads, only when asked.

planb's names are read from the controller's own output (planb.failover.metrics, parsed by prometheus-client's
parser); Kueue's from tests/support/shared/kueue/metrics-v0.19.2.tsv, the list taken from Kueue v0.19.2's
pkg/metrics/metrics.go (the file cites the lines).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from planb.build import golden
from planb.failover.metrics import ControllerMetrics

Render = Callable[..., list[dict[str, Any]]]
Obj = dict[str, Any]

DASHBOARD = golden.CHART_DIR / "dashboards" / "planb.json"
KUEUE_METRICS = Path(__file__).parents[2] / "support" / "shared" / "kueue" / "metrics-v0.19.2.tsv"
QUEUES = ("--set", "mode=queues")
#: PromQL words that are not metric names: functions, aggregations and their modifiers.
PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset"}
#: The sample names each metric type exposes (Prometheus' exposition formats).
SUFFIXES = {"histogram": ("_bucket", "_sum", "_count"), "summary": ("_sum", "_count", ""), "counter": ("_total",)}


def exposed(name: str, kind: str) -> set[str]:
    if kind == "counter" and name.endswith("_total"):  # Go's client: the counter's own name
        return {name}
    return {name + suffix for suffix in SUFFIXES.get(kind, ("",))}


def planb_names() -> set[str]:
    text = ControllerMetrics(("google.com/tpu",), ("cluster-queue",)).render()
    return {n for family in text_string_to_metric_families(text) for n in exposed(family.name, family.type)}


def kueue_names() -> set[str]:
    rows = [line.split("\t") for line in KUEUE_METRICS.read_text().splitlines() if line and not line.startswith("#")]
    assert len(rows) == 60 and all(len(row) == 3 for row in rows), "name, type, source line per row"
    return {n for name, kind, _ in rows for n in exposed(name, kind)}


def queries(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("expr"), str):
            yield node["expr"]
        for value in node.values():
            yield from queries(value)
    elif isinstance(node, list):
        for item in node:
            yield from queries(item)


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects: identifiers outside strings, label matchers, ranges and
    grouping clauses that are not called as functions."""
    bare = re.sub(r'"(?:\\.|[^"\\])*"', '""', expr)
    bare = re.sub(r"\{[^}]*\}", " ", bare)
    bare = re.sub(r"\[[^\]]*\]", " ", bare)
    bare = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", bare)
    names = set()
    for match in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", bare):
        following = bare[match.end() :].lstrip()
        if following.startswith("(") or match.group() in PROMQL_WORDS:
            continue
        names.add(match.group())
    return names


def test_the_name_reader_finds_the_selected_metrics_only() -> None:
    expr = 'histogram_quantile(0.9, sum by (le, plan) (rate(a_seconds_bucket{x=~"b|c_total"}[$__rate_interval]))) + d'
    assert metric_names(expr) == {"a_seconds_bucket", "d"}


def test_every_query_names_a_metric_planb_or_kueue_v0_19_2_exports() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    found = {name for expr in queries(dashboard) for name in metric_names(expr)}
    known = planb_names() | kueue_names()
    assert found - known == set(), (
        f"{DASHBOARD.name}: no planb or Kueue v0.19.2 metric is named {sorted(found - known)}"
    )
    # Both sources are used, and the panels the issue names are there.
    assert "planb_time_to_admission_seconds_bucket" in found and found & kueue_names()
    titles = {p["title"] for p in dashboard["panels"]}
    assert {"Jobs per plan", "Time to admission per plan", "Moves and migrations", "DWS requests by state"} <= titles
    goodput = next(p for p in dashboard["panels"] if p["title"] == "Goodput")
    assert "not a metric yet" in goodput["description"]


def test_time_series_panels_query_per_rate_interval_not_over_the_whole_range() -> None:
    # $__range is the whole dashboard range: in a time series every point would sum the same window (a stat
    # panel's value); $__rate_interval is the window of each point, at least four scrape intervals.
    dashboard = json.loads(DASHBOARD.read_text())
    series = [p for p in dashboard["panels"] if p["type"] == "timeseries"]
    assert "Moves and migrations" in {p["title"] for p in series}
    for panel in series:
        for expr in queries(panel):
            assert "$__range" not in expr, f"{panel['title']}: {expr}"
            if re.search(r"\b(rate|increase)\(", expr):
                assert "[$__rate_interval]" in expr, f"{panel['title']}: {expr}"


def test_the_dashboard_ships_as_a_sidecar_config_map_only_when_asked(template: Render) -> None:
    assert [o for o in template(*QUEUES) if o["metadata"]["name"].endswith("-dashboard")] == []
    on = template(*QUEUES, "--set", "dashboard.enabled=true", "--set", "dashboard.namespace=monitoring")
    (cm,) = [o for o in on if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-dashboard")]
    assert cm["metadata"]["namespace"] == "monitoring"
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(cm["data"]["planb.json"]) == json.loads(DASHBOARD.read_text())
    assert not [o for o in template("--set", "dashboard.enabled=true") if o["metadata"]["name"].endswith("-dashboard")]
