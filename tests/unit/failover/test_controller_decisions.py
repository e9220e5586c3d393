"""The stockout failover controller's decisions, without a cluster.

tests/e2e/topologies/test_stockout_failover.py proves the move end to end on the local stack. These tests pin down
what the controller decides and what it writes: which evictions it acts on, which it leaves to Kueue,
the exact patches of the RayJob and the Workload, the one Event per move, and a restart mid-move.

The controller is the one `python -m planb.failover` builds, talking to an in-memory API server
(tests/support/shared/failover/fake_api.py `FakeCluster`) that has the calls of planb.failover.kubeapi.Api;
tests/integration/failover/test_kubeapi.py proves those calls on the wire. No network, no subprocess, no sleep.

The objects are shaped as Kueue v0.19.2 (kueue.x-k8s.io/v1beta2) and KubeRay v1.6.2 write them. The
names, reasons and messages come from their sources at those tags:
* the Workload is `rayjob-<job>-<hash>`, owned by its RayJob, its pod sets the RayJob's templates
  (head, one per worker group with count replicas x numOfHosts, submitter in K8sJobMode);
* admission: QuotaReserved (reason QuotaReserved, "Quota reserved in ClusterQueue <cq>"), Admitted,
  PodsReady False (WaitForStart); Kueue unsuspends the RayJob and merges each assigned flavor's
  nodeLabels into the pod templates' nodeSelector;
* waitForPodsReady's eviction (workload_controller.go reconcileNotReadyTimeout): Evicted True, reason
  PodsReadyTimeout, "Exceeded the PodsReady timeout <namespace>/<name>", the quota still reserved;
* the release (jobframework, once the job is suspended and its templates restored): QuotaReserved False
  (reason Pending with the default feature gates, the eviction's message), Requeued False, Admitted
  False (NoReservation), status.admission removed.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

from planb.failover.controller import (
    AFTER_ANNOTATION,
    EVENT_REASON,
    FROM_ANNOTATION,
    MOVED_ANNOTATION,
)
from tests.support.shared.failover.fake_api import (
    FakeCluster,
)
from tests.support.shared.failover.kueue_steps import (
    Clock,
    Kueue,
    make_cluster,
    start_controller,
    watch,
)
from tests.support.shared.failover.objects import (
    JOB,
    NOT_ON_PLAN_A,
    NS,
    PLAN_A,
    PLAN_B,
    WL,
    expected_event,
    moved_rayjob_patch,
    rayjob_object,
)

Obj = dict[str, Any]

pytestmark = pytest.mark.usefixtures("no_network")


# ---------------------------------------------------------------- 1. the eviction it acts on


def test_a_pods_ready_timeout_on_plan_a_patches_the_rayjob_once_and_waits_for_the_quota(
    cluster: FakeCluster, kueue: Kueue, clock: Clock
) -> None:
    controller = start_controller(cluster)
    controller.reconcile(kueue.admit(PLAN_A))
    assert cluster.writes == [], "an admitted job waiting for its pods is not touched"

    evicted = kueue.evict()
    job_as_read = cluster.read("rayjobs", JOB)
    controller.reconcile(evicted)

    (patch,) = cluster.writes
    assert (patch.verb, patch.plural, patch.namespace, patch.name) == ("patch", "rayjobs", NS, JOB)
    assert patch.content_type == "application/json-patch+json"
    assert patch.body == moved_rayjob_patch(job_as_read, "2026-05-04T10:00:02Z")
    job = cluster.read("rayjobs", JOB)
    assert job["metadata"]["annotations"] == {
        **job_as_read["metadata"]["annotations"],
        MOVED_ANNOTATION: "2026-05-04T10:00:02Z",
        FROM_ANNOTATION: "on-demand",
        AFTER_ANNOTATION: "600.0",
    }
    # Head and submitter untouched; the accelerator group keeps its selectors and tolerations.
    assert job["spec"]["rayClusterSpec"]["headGroupSpec"] == job_as_read["spec"]["rayClusterSpec"]["headGroupSpec"]
    assert job["spec"]["submitterPodTemplate"] == job_as_read["spec"]["submitterPodTemplate"]
    worker = job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]
    before = job_as_read["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]
    assert worker == {**before, "affinity": NOT_ON_PLAN_A}
    # Kueue still holds the quota: the Workload's pod sets are immutable, no Event yet.
    assert cluster.patches("workloads") == []
    assert cluster.events() == []
    assert controller.moves_done == 1


def test_once_kueue_releases_the_quota_the_workload_excludes_plan_a_and_one_event_is_recorded(
    cluster: FakeCluster, kueue: Kueue, clock: Clock
) -> None:
    controller = start_controller(cluster)
    controller.reconcile(kueue.admit(PLAN_A))
    controller.reconcile(kueue.evict())
    clock.now = "2026-05-04T10:00:03Z"
    released = kueue.release()
    controller.reconcile(released)

    (patch,) = cluster.patches("workloads")
    assert (patch.namespace, patch.name, patch.content_type) == (NS, WL, "application/json-patch+json")
    # Only the accelerator pod set (index 1: head, tpu-group, submitter), guarded by the version read.
    assert patch.body == [
        {"op": "test", "path": "/metadata/resourceVersion", "value": released["metadata"]["resourceVersion"]},
        {"op": "add", "path": "/spec/podSets/1/template/spec/affinity", "value": NOT_ON_PLAN_A},
    ]
    wl = cluster.read("workloads", WL)
    assert [p["template"]["spec"].get("affinity") for p in wl["spec"]["podSets"]] == [None, NOT_ON_PLAN_A, None]
    assert [e.body for e in cluster.writes if e.verb == "create"] == [expected_event("2026-05-04T10:00:03Z")]
    (event,) = cluster.events()
    assert (event["reason"], event["message"]) == (EVENT_REASON, "moved to plan B after 10m: plan A had no capacity")
    assert [(w.verb, w.plural) for w in cluster.writes] == [
        ("patch", "rayjobs"),
        ("patch", "workloads"),
        ("create", "events"),
    ]

    # Its own MODIFIED event, a resync, the re-admission on plan B and the job running there: no more writes.
    watch(controller, kueue.current, kueue.current, functools.partial(kueue.admit, PLAN_B))
    assert len(cluster.writes) == 3
    assert controller.moves_done == 1


def test_a_workload_holding_its_quota_is_decided_without_reading_its_rayjob(
    cluster: FakeCluster, kueue: Kueue, clock: Clock
) -> None:
    """Admitted and not evicted, a Workload needs nothing of its RayJob, moved or not: a poll reads no RayJob (one
    per admitted job every poll was most of the controller's requests), and the eviction is still acted on."""
    controller = start_controller(cluster)
    cluster.calls.clear()
    controller.reconcile(kueue.admit(PLAN_A))
    controller.reconcile(kueue.current())
    assert [call for call in cluster.calls if call[1] == "rayjobs"] == []
    controller.reconcile(kueue.evict())
    assert ("get", "rayjobs", JOB) in cluster.calls
    controller.reconcile(kueue.release())
    assert [(w.verb, w.plural) for w in cluster.writes] == [
        ("patch", "rayjobs"),
        ("patch", "workloads"),
        ("create", "events"),
    ]
    cluster.calls.clear()
    watch(controller, functools.partial(kueue.admit, PLAN_B), kueue.current)
    assert [call for call in cluster.calls if call[1] == "rayjobs"] == []
    assert len(cluster.writes) == 3


def test_an_eviction_first_seen_with_the_quota_already_released_moves_the_job_in_one_pass(
    cluster: FakeCluster, kueue: Kueue, clock: Clock
) -> None:
    """Kueue clears the admission right after the eviction; the controller remembers plan A."""
    controller = start_controller(cluster)
    controller.reconcile(kueue.admit(PLAN_A))
    kueue.evict()
    released = kueue.release()
    assert "admission" not in released["status"]
    controller.reconcile(released)
    assert [(w.verb, w.plural) for w in cluster.writes] == [
        ("patch", "rayjobs"),
        ("patch", "workloads"),
        ("create", "events"),
    ]
    assert cluster.read("rayjobs", JOB)["metadata"]["annotations"][MOVED_ANNOTATION] == clock.now


def test_a_stale_workload_from_the_watch_is_refused_and_changes_nothing(
    cluster: FakeCluster, kueue: Kueue, clock: Clock
) -> None:
    """Kueue released the quota before the controller handled the eviction: it reads the Workload again
    and finishes at once; the release's own event, still queued, is older than its patch."""
    controller = start_controller(cluster)
    controller.reconcile(kueue.admit(PLAN_A))
    evicted = kueue.evict()
    queued = kueue.release()
    controller.safe_reconcile(evicted)
    moved = [(w.verb, w.plural) for w in cluster.writes]
    assert moved == [("patch", "rayjobs"), ("patch", "workloads"), ("create", "events")]
    controller.safe_reconcile(queued)  # 422 on the version test, logged, not raised
    assert [(w.verb, w.plural, w.body[0]["value"]) for w in cluster.rejected] == [
        ("patch", "workloads", queued["metadata"]["resourceVersion"])
    ]
    controller.safe_reconcile(kueue.current())
    assert [(w.verb, w.plural) for w in cluster.writes] == moved
    assert len(cluster.events()) == 1


def test_a_rayjob_without_annotations_gets_the_annotation_map_first(clock: Clock) -> None:
    cluster = make_cluster(rayjob_object(annotations=False))
    kueue = Kueue(cluster)
    controller = start_controller(cluster)
    controller.reconcile(kueue.admit(PLAN_A))
    controller.reconcile(kueue.evict())
    (patch,) = cluster.writes
    assert patch.body[2] == {"op": "add", "path": "/metadata/annotations", "value": {}}
    assert [op["path"] for op in patch.body[3:]] == [
        "/metadata/annotations/planb.dev~1failover-moved-at",
        "/metadata/annotations/planb.dev~1failover-from",
        "/metadata/annotations/planb.dev~1failover-after",
    ]
    assert set(cluster.read("rayjobs", JOB)["metadata"]["annotations"]) == {
        MOVED_ANNOTATION,
        FROM_ANNOTATION,
        AFTER_ANNOTATION,
    }


def test_only_accelerator_pod_templates_get_the_exclusion(clock: Clock) -> None:
    cluster = make_cluster(rayjob_object(cpu_group=True))
    kueue = Kueue(cluster)
    wl = cluster.read("workloads", WL)
    assert [p["name"] for p in wl["spec"]["podSets"]] == ["head", "cpu-group", "tpu-group", "submitter"]
    controller = start_controller(cluster)
    controller.reconcile(kueue.admit(PLAN_A))
    kueue.evict()
    controller.reconcile(kueue.release())
    groups = cluster.read("rayjobs", JOB)["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    assert [(g["groupName"], g["template"]["spec"].get("affinity")) for g in groups] == [
        ("cpu-group", None),
        ("tpu-group", NOT_ON_PLAN_A),
    ]
    (patch,) = cluster.patches("workloads")
    assert [op["path"] for op in patch.body[1:]] == ["/spec/podSets/2/template/spec/affinity"]


def test_a_rayjob_changed_under_the_controller_is_read_again_and_patched_once(
    cluster: FakeCluster, kueue: Kueue, clock: Clock, naps: list[float]
) -> None:
    controller = start_controller(cluster)
    controller.reconcile(kueue.admit(PLAN_A))
    evicted = kueue.evict()
    read_first = cluster.read("rayjobs", JOB)["metadata"]["resourceVersion"]
    written: list[Obj] = []

    def kuberay_writes() -> None:
        status = {"desiredWorkerReplicas": 4, "desiredTPU": "16"}
        written.append(cluster.update("rayjobs", JOB, lambda job: job["status"].update(rayClusterStatus=status)))

    # KubeRay writes the RayJob between the controller's read and its patch: the "test" op fails (422).
    cluster.before_next_patch = kuberay_writes
    controller.reconcile(evicted)
    assert naps == [0.2]
    (rejected,) = cluster.rejected
    assert rejected.body[0] == {"op": "test", "path": "/metadata/resourceVersion", "value": read_first}
    (patch,) = cluster.writes
    assert patch.body == moved_rayjob_patch(written[0], clock.now)
    assert cluster.read("rayjobs", JOB)["status"]["rayClusterStatus"] == {
        "desiredWorkerReplicas": 4,
        "desiredTPU": "16",
    }
    assert controller.moves_done == 1
