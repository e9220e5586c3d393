"""The evaluator the dashboard's e2e test reads the panels with (tests/support/shared/dashboard_queries.py): it finds
every selector of every panel, and tells a series with data from one without."""

from __future__ import annotations

import pytest

from tests.support.shared.dashboard_queries import Matcher, dashboard_queries, parse_text, selectors

TEXT = """\
# TYPE kueue_cluster_queue_resource_usage gauge
kueue_cluster_queue_resource_usage{cluster_queue="cluster-queue",flavor="dws",resource="google.com/tpu"} 16
kueue_cluster_queue_resource_usage{cluster_queue="cluster-queue",flavor="default-cpu",resource="cpu"} 4
# TYPE planb_time_to_admission_seconds histogram
planb_time_to_admission_seconds_bucket{le="10.0",plan="dws",cluster_queue="cluster-queue",region=""} 0
planb_time_to_admission_seconds_bucket{le="+Inf",plan="dws",cluster_queue="cluster-queue",region=""} 1
planb_time_to_admission_seconds_count{plan="dws",cluster_queue="cluster-queue",region=""} 1
planb_time_to_admission_seconds_sum{plan="dws",cluster_queue="cluster-queue",region=""} 20
planb_time_to_admission_seconds_bucket{le="+Inf",plan="on-demand",cluster_queue="cluster-queue",region=""} 0
planb_time_to_admission_seconds_count{plan="on-demand",cluster_queue="cluster-queue",region=""} 0
planb_time_to_admission_seconds_sum{plan="on-demand",cluster_queue="cluster-queue",region=""} 0
"""


def test_every_panel_but_the_text_one_has_queries_and_every_query_a_selector() -> None:
    queries = dashboard_queries()
    assert [title for title, found in queries.items() if not found] == ["Goodput"]
    assert {"$region", "$cluster_queue"} <= set(queries)
    for found in queries.values():
        for query in found:
            assert query.selectors, query


def test_the_selectors_and_their_matchers_are_read_with_the_variables_at_all() -> None:
    expr = (
        "histogram_quantile(0.9, sum by (le, cluster_queue) (rate(kueue_admission_wait_time_seconds_bucket"
        '{cluster_queue=~"$cluster_queue", resource!="a\\"b"}[$__rate_interval]))) + on (x) up'
    )
    first, second = selectors(expr)
    assert first.name == "kueue_admission_wait_time_seconds_bucket" and first.quantile
    assert first.matchers == (Matcher("cluster_queue", "=~", ".*"), Matcher("resource", "!=", 'a"b'))
    assert (second.name, second.matchers, second.quantile) == ("up", (), False)


def test_a_selector_has_data_only_where_a_sample_matches() -> None:
    samples = parse_text(TEXT)
    usage = 'sum by (flavor) (kueue_cluster_queue_resource_usage{cluster_queue=~".*", resource=~"google.com/tpu|x"})'
    (selector,) = selectors(usage)
    assert [dict(s.labels)["flavor"] for s in selector.select(samples)] == ["dws"]
    assert selector.has_data(samples)
    (gpu,) = selectors('kueue_cluster_queue_resource_usage{resource="nvidia.com/gpu"}')
    assert not gpu.has_data(samples)
    # A regex matcher is anchored at both ends, as PromQL's.
    (partial,) = selectors('kueue_cluster_queue_resource_usage{resource=~"google"}')
    assert not partial.has_data(samples)


def test_a_quantile_has_data_only_where_an_observation_was_counted() -> None:
    samples = parse_text(TEXT)
    quantile = 'histogram_quantile(0.5, sum by (le) (rate(planb_time_to_admission_seconds_bucket{plan="%s"}[5m])))'
    (dws,) = selectors(quantile % "dws")
    (on_demand,) = selectors(quantile % "on-demand")
    assert dws.has_data(samples)
    assert on_demand.select(samples) and not on_demand.has_data(samples)


def test_an_unknown_variable_is_refused() -> None:
    with pytest.raises(ValueError, match=r"\$team"):
        selectors('kueue_pending_workloads{cluster_queue=~"$team"}')
