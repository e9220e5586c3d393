"""The failover controller's /metrics, scraped over HTTP on 127.0.0.1 and read by prometheus-client's own parser.

The controller polls the in-memory API server of tests/support/shared/failover while Kueue's steps change the Workload;
its real endpoint (planb.failover.metrics.serve) answers the scrape.
"""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from planb.failover import metrics
from planb.failover.controller import Controller
from planb.failover.exposition import Counter, Histogram, MetricError
from tests.support.shared.failover.fake_api import FakeCluster
from tests.support.shared.failover.kueue_steps import Kueue, start_controller, timeout, watch
from tests.support.shared.failover.objects import CLUSTER_QUEUE, KUEUE_API, NS, PLAN_A, PLAN_B, WL

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]
REGION = "us-east5"


class Endpoint:
    """A controller with its metrics endpoint on 127.0.0.1 (a free port)."""

    def __init__(self, controller: Controller) -> None:
        self.controller = controller
        self.server = metrics.serve("127.0.0.1", 0, controller.metrics, controller.health)
        self.port = int(self.server.server_address[1])

    def get(self, path: str) -> tuple[int, str, str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("GET", path)
            resp = conn.getresponse()
            return resp.status, resp.getheader("Content-Type") or "", resp.read().decode()
        finally:
            conn.close()

    def scrape(self) -> Samples:
        status, content_type, text = self.get("/metrics")
        assert status == 200 and content_type.startswith("text/plain; version=0.0.4"), (status, content_type)
        return {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text)
            for s in family.samples
        }


@pytest.fixture()
def endpoint(cluster: FakeCluster) -> Iterator[Endpoint]:
    served = Endpoint(start_controller(cluster, region=REGION))
    yield served
    served.server.shutdown()
    served.server.server_close()


def key(name: str, **labels: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    return name, tuple(sorted(labels.items()))


def plan(name: str) -> dict[str, Any]:
    return {"plan": name, "cluster_queue": CLUSTER_QUEUE, "region": REGION}


def test_time_to_admission_has_a_bucket_series_and_counts_each_workload_once(
    endpoint: Endpoint, kueue: Kueue, cluster: FakeCluster
) -> None:
    kueue.admit(PLAN_A, at="2026-05-04T09:50:42Z")  # created 09:50:00: 42 s
    endpoint.controller.poll_once()
    endpoint.controller.poll_once()  # a second poll sees the same admission: no second observation
    got = endpoint.scrape()
    bucket = "planb_time_to_admission_seconds_bucket"
    assert got[key(bucket, le="30.0", **plan(PLAN_A))] == 0
    assert got[key(bucket, le="60.0", **plan(PLAN_A))] == 1
    assert got[key(bucket, le="+Inf", **plan(PLAN_A))] == 1
    assert got[key("planb_time_to_admission_seconds_count", **plan(PLAN_A))] == 1
    assert got[key("planb_time_to_admission_seconds_sum", **plan(PLAN_A))] == 42
    assert got[key("planb_admitted_workloads", **plan(PLAN_A))] == 1

    # helm uninstall of the job: its Workload goes; what it added stays, the gauge of jobs per plan falls.
    del cluster.objects[(KUEUE_API, "workloads", NS, WL)]
    endpoint.controller.poll_once()
    after = endpoint.scrape()
    assert after[key("planb_time_to_admission_seconds_count", **plan(PLAN_A))] == 1
    assert after[key("planb_time_to_admission_seconds_sum", **plan(PLAN_A))] == 42
    assert key("planb_admitted_workloads", **plan(PLAN_A)) not in after
    assert endpoint.controller.prometheus.admission_seen == set(), "a deleted Workload's uid is not kept"


def test_a_wait_of_days_in_dws_lands_in_a_finite_bucket_up_to_its_7_day_horizon(
    endpoint: Endpoint, kueue: Kueue
) -> None:
    # A ProvisioningRequest's retries run up to 7 days: a 6-day wait is told apart from a 2-day one, not only +Inf.
    assert max(metrics.WAIT_BUCKETS) >= 7 * 86400
    kueue.admit(PLAN_B, at="2026-05-10T09:50:00Z")  # created 2026-05-04T09:50:00Z: 6 days
    endpoint.controller.poll_once()
    got = endpoint.scrape()
    bucket = "planb_time_to_admission_seconds_bucket"
    assert got[key(bucket, le=str(4 * 86400.0), **plan(PLAN_B))] == 0
    assert got[key(bucket, le=str(7 * 86400.0), **plan(PLAN_B))] == 1


def test_time_to_running_is_observed_when_the_pods_are_ready(endpoint: Endpoint, kueue: Kueue) -> None:
    kueue.admit(PLAN_A)
    endpoint.controller.poll_once()
    assert key("planb_time_to_running_seconds_count", **plan(PLAN_A)) not in endpoint.scrape()
    kueue.ready(at="2026-05-04T09:55:00Z")  # 300 s after creation
    endpoint.controller.poll_once()
    got = endpoint.scrape()
    assert got[key("planb_time_to_running_seconds_bucket", le="300.0", **plan(PLAN_A))] == 1
    assert got[key("planb_time_to_running_seconds_bucket", le="120.0", **plan(PLAN_A))] == 0
    assert got[key("planb_time_to_running_seconds_sum", **plan(PLAN_A))] == 300


def test_a_move_counts_once_and_a_restarted_controller_counts_it_again_from_the_annotation(
    endpoint: Endpoint, kueue: Kueue, cluster: FakeCluster
) -> None:
    watch(endpoint.controller, *timeout(kueue, PLAN_A))
    kueue.admit(PLAN_B, at="2026-05-04T10:20:00Z")
    endpoint.controller.poll_once()
    endpoint.controller.poll_once()
    got = endpoint.scrape()
    assert got[key("planb_failover_moves_total", **plan(PLAN_A))] == 1
    assert got[key("planb_failover_moved_jobs")] == 1
    # Plan B's admission is its own observation: creation to re-admission, plan A's wait included.
    assert got[key("planb_time_to_admission_seconds_sum", **plan(PLAN_B))] == 30 * 60
    dws_ready = {"check": "dws-prov", "state": "Ready", "cluster_queue": CLUSTER_QUEUE, "region": REGION}
    assert got[key("planb_admission_check_workloads", **dws_ready)] == 1

    restarted = start_controller(cluster, region=REGION)
    restarted.poll_once()
    restarted.poll_once()
    # The RayJob has no admission of its own: its team is the ClusterQueue its LocalQueue's Workload was admitted to.
    moved = 'planb_failover_moves_total{plan="on-demand",cluster_queue="cluster-queue",region="us-east5"} 1.0'
    assert moved in restarted.metrics()


def test_a_concurrent_variant_evicted_for_a_preferred_plan_is_one_migration(endpoint: Endpoint, kueue: Kueue) -> None:
    def variant(wl: dict[str, Any]) -> None:
        wl["metadata"].setdefault("annotations", {})["kueue.x-k8s.io/workload-allowed-resource-flavors"] = PLAN_B

    kueue.cluster.update("workloads", WL, variant)
    kueue.admit(PLAN_B)
    endpoint.controller.poll_once()
    assert key("planb_migrations_total", **plan(PLAN_B)) not in endpoint.scrape()
    kueue.evict(reason="FlavorMigration", message="migrating to a preferred flavor")
    endpoint.controller.poll_once()
    kueue.evict(reason="FlavorMigration", message="again, until the quota is released")
    endpoint.controller.poll_once()
    assert endpoint.scrape()[key("planb_migrations_total", **plan(PLAN_B))] == 1


def test_the_probes_say_ready_after_the_first_list_and_why_not_before(endpoint: Endpoint) -> None:
    assert endpoint.get("/healthz")[0] == 200
    status, _, body = endpoint.get("/readyz")
    assert (status, body) == (503, "the Workloads were not listed yet\n")
    endpoint.controller.poll_once()
    assert endpoint.get("/readyz")[::2] == (200, "ok\n")
    assert endpoint.get("/nothing")[0] == 404


def test_the_exposition_refuses_what_prometheus_would_not_read() -> None:
    with pytest.raises(MetricError, match="counter only goes up"):
        Counter("x", "x").inc({}, -1)
    with pytest.raises(MetricError, match="labels"):
        Histogram("y_seconds", "y", ("plan",), (1.0,)).observe({"flavor": "a"}, 1.0)
    with pytest.raises(MetricError, match="without _total"):
        Counter("z_total", "z")
