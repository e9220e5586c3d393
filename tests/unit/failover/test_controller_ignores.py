"""What the failover controller leaves alone: other evictions, plan B, other owners, other ClusterQueues."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from planb.failover import controller as failover
from planb.failover.controller import (
    FROM_ANNOTATION,
    MOVED_ANNOTATION,
)
from tests.support.shared.failover.fake_api import (
    FakeCluster,
)
from tests.support.shared.failover.kueue_steps import (
    Clock,
    Kueue,
    condition,
    make_cluster,
    set_condition,
    start_controller,
    timeout,
    watch,
)
from tests.support.shared.failover.objects import (
    CLUSTER_QUEUE,
    EVICTED_MESSAGE,
    JOB,
    NOT_ON_PLAN_A,
    NS,
    PLAN_A,
    PLAN_B,
    PODS_READY_TIMEOUT,
    RAY_API,
    WL,
    moved_rayjob_patch,
    rayjob_object,
    workload_object,
)

Obj = dict[str, Any]

pytestmark = pytest.mark.usefixtures("no_network")


# ------------------------------------------------------------------------- 2. what it ignores

OTHER_EVICTIONS = [
    pytest.param(
        "Preempted",
        "Preempted to accommodate a workload (UID: 7c1d9e2f-0a3b-4c5d-8e6f-9a0b1c2d3e4f, JobUID: "
        "1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b) due to prioritization in the ClusterQueue; "
        "preemptor path: /cluster-queue; preemptee path: /cluster-queue",
        True,
        id="preempted",
    ),
    pytest.param("Deactivated", "The workload is deactivated", False, id="deactivated"),
    pytest.param(
        "DeactivatedDueToRequeuingLimitExceeded",
        "The workload is deactivated due to exceeding the maximum number of re-queuing retries",
        False,
        id="requeuing-limit",
    ),
    pytest.param(
        "AdmissionCheck",
        'Evicted due to AdmissionCheck in Retry state: "dws-prov" (Retrying after a failure)',
        True,
        id="admission-check",
    ),
    pytest.param("ClusterQueueStopped", "The ClusterQueue is stopped", True, id="cluster-queue-stopped"),
]


@pytest.mark.parametrize(("reason", "message", "active"), OTHER_EVICTIONS)
def test_other_evictions_from_plan_a_are_left_to_kueue(
    cluster: FakeCluster, kueue: Kueue, reason: str, message: str, active: bool
) -> None:
    controller = start_controller(cluster)
    watch(controller, kueue.admit, functools.partial(kueue.evict, reason, message, active), kueue.release)
    assert cluster.writes == []
    assert MOVED_ANNOTATION not in cluster.read("rayjobs", JOB)["metadata"]["annotations"]


def test_a_pods_ready_timeout_evicted_condition_with_status_false_is_ignored(
    cluster: FakeCluster, kueue: Kueue
) -> None:
    controller = start_controller(cluster)
    controller.reconcile(kueue.admit(PLAN_A))
    stale = condition("Evicted", "False", PODS_READY_TIMEOUT, EVICTED_MESSAGE, "2026-05-04T10:00:02Z")
    controller.reconcile(cluster.update("workloads", WL, lambda wl: set_condition(wl, stale)))
    assert cluster.writes == []


def test_a_pods_ready_timeout_on_plan_b_is_left_to_kueue(cluster: FakeCluster, kueue: Kueue) -> None:
    controller = start_controller(cluster)
    watch(controller, *timeout(kueue, PLAN_B))
    assert cluster.writes == []


def test_an_eviction_from_plan_a_the_controller_never_saw_admitted_is_not_acted_on(
    cluster: FakeCluster, kueue: Kueue
) -> None:
    """Started after Kueue cleared the admission: it cannot tell plan A from plan B, so it leaves the job."""
    kueue.admit(PLAN_A)
    kueue.evict()
    released = kueue.release()
    controller = start_controller(cluster)
    controller.reconcile(released)
    assert cluster.writes == []


def test_a_slow_retry_on_plan_a_is_left_to_kueue(cluster: FakeCluster, kueue: Kueue) -> None:
    """Ready on plan A, then KubeRay retries the job and the recovery times out: plan A has the capacity."""
    controller = start_controller(cluster)
    recovery = functools.partial(kueue.evict, cause="WaitForRecovery")
    watch(controller, kueue.admit, kueue.ready, kueue.kuberay_retries, recovery, kueue.release, kueue.current)
    assert failover.condition(kueue.current(), "Evicted")["reason"] == PODS_READY_TIMEOUT  # type: ignore[index]
    assert cluster.writes == []
    assert MOVED_ANNOTATION not in cluster.read("rayjobs", JOB)["metadata"]["annotations"]


def test_a_stockout_on_plan_a_after_a_slow_retry_there_still_moves_the_job(
    cluster: FakeCluster, kueue: Kueue, clock: Clock
) -> None:
    controller = start_controller(cluster)
    recovery = functools.partial(kueue.evict, cause="WaitForRecovery")
    watch(controller, kueue.admit, kueue.ready, kueue.kuberay_retries, recovery, kueue.release)
    assert cluster.writes == []
    watch(controller, *timeout(kueue))
    assert [(w.verb, w.plural) for w in cluster.writes] == [
        ("patch", "rayjobs"),
        ("patch", "workloads"),
        ("create", "events"),
    ]
    assert cluster.read("rayjobs", JOB)["metadata"]["annotations"][FROM_ANNOTATION] == PLAN_A


def test_a_controller_started_during_a_recovery_eviction_on_plan_a_leaves_it_to_kueue(
    cluster: FakeCluster, kueue: Kueue
) -> None:
    """First seen evicted, the quota still held on plan A, after an earlier stockout there and a recovery
    timeout now: which one this eviction is cannot be told, so the job is not exiled."""
    kueue.admit(PLAN_A)
    kueue.evict()
    kueue.release()
    kueue.admit(PLAN_A)
    kueue.ready()
    kueue.kuberay_retries()
    evicted = kueue.evict(cause="WaitForRecovery")
    counts = failover.pods_ready_timeouts(evicted)
    assert counts == {"WaitForStart": 1, "WaitForRecovery": 1}
    controller = start_controller(cluster)
    watch(controller, kueue.current, kueue.release)
    assert cluster.writes == []


def test_a_moved_job_evicted_again_on_plan_b_is_not_moved_again(
    cluster: FakeCluster, kueue: Kueue, clock: Clock
) -> None:
    first = start_controller(cluster)
    watch(first, *timeout(kueue))
    writes = len(cluster.writes)
    moved = cluster.read("rayjobs", JOB)["metadata"]["annotations"]
    clock.now = "2026-05-04T10:30:00Z"
    # The same process, and one restarted since, both see plan B time out too.
    for controller in (first, start_controller(cluster)):
        watch(controller, *timeout(kueue, PLAN_B))
    assert cluster.writes[writes:] == []
    assert cluster.read("rayjobs", JOB)["metadata"]["annotations"] == moved
    assert len(cluster.events()) == 1


OTHER_OWNERS = [
    pytest.param({"apiVersion": "batch/v1", "kind": "Job", "name": JOB, "uid": "0b1c"}, id="batch-job"),
    pytest.param({"apiVersion": RAY_API, "kind": "RayCluster", "name": JOB, "uid": "0b1d"}, id="raycluster"),
    pytest.param({"apiVersion": "example.dev/v1", "kind": "RayJob", "name": JOB, "uid": "0b1e"}, id="other-group"),
]


@pytest.mark.parametrize("owner", OTHER_OWNERS)
def test_a_workload_not_owned_by_a_rayjob_is_not_even_read(owner: Obj, clock: Clock) -> None:
    """A RayJob named like the owner exists: only the owner's kind and group keep it out."""
    job = rayjob_object()
    cluster = make_cluster(job, workload_object(job, owner))
    kueue = Kueue(cluster)
    controller = start_controller(cluster)
    watch(controller, *timeout(kueue))
    assert cluster.calls == []


def test_a_workload_without_owner_is_ignored(clock: Clock) -> None:
    job = rayjob_object()
    wl = workload_object(job)
    del wl["metadata"]["ownerReferences"]
    cluster = make_cluster(job, wl)
    kueue = Kueue(cluster)
    controller = start_controller(cluster)
    watch(controller, *timeout(kueue))
    assert cluster.calls == []


def test_a_workload_whose_rayjob_is_gone_is_ignored(cluster: FakeCluster, kueue: Kueue) -> None:
    controller = start_controller(cluster)
    controller.reconcile(kueue.admit(PLAN_A))
    del cluster.objects[(RAY_API, "rayjobs", NS, JOB)]
    controller.reconcile(kueue.evict())
    controller.reconcile(kueue.release())
    assert cluster.writes == []
    assert ("get", "rayjobs", JOB) in cluster.calls


# ------------------------------------------- 4. only its own ClusterQueue and namespaces


def test_a_workload_of_another_cluster_queue_with_a_flavor_of_the_same_name_is_left_alone(
    cluster: FakeCluster, kueue: Kueue
) -> None:
    controller = start_controller(cluster)
    watch(controller, *timeout(kueue, PLAN_A, cluster_queue="team-b-queue"))
    assert cluster.writes == []


def test_a_workload_of_its_own_cluster_queue_still_moves(cluster: FakeCluster, kueue: Kueue, clock: Clock) -> None:
    controller = start_controller(cluster)
    watch(controller, *timeout(kueue, PLAN_A, cluster_queue=CLUSTER_QUEUE))
    assert [(w.verb, w.plural) for w in cluster.writes] == [
        ("patch", "rayjobs"),
        ("patch", "workloads"),
        ("create", "events"),
    ]


def test_it_lists_only_its_namespaces(cluster: FakeCluster) -> None:
    other = workload_object(rayjob_object())
    other["metadata"].update(namespace="team-b", uid="9f3c")
    cluster.put("workloads", other)
    assert [w["metadata"]["namespace"] for w in start_controller(cluster).list_workloads()] == [NS, "team-b"]
    mine = start_controller(cluster, namespaces=(NS,))
    assert [w["metadata"]["namespace"] for w in mine.list_workloads()] == [NS]
    assert cluster.calls[-1] == ("list", "workloads", NS)


def test_plan_a_s_label_from_the_chart_needs_no_resource_flavor_read(
    cluster: FakeCluster, kueue: Kueue, clock: Clock
) -> None:
    """The chart passes plan A's node label: no cluster-scoped read, and the same move."""
    controller = start_controller(cluster, plan_a_label=("planb.dev/plan", PLAN_A))
    controller.reconcile(kueue.admit(PLAN_A))
    evicted = kueue.evict()
    job_as_read = cluster.read("rayjobs", JOB)
    watch(controller, lambda: evicted, kueue.release)
    assert [c for c in cluster.calls if c[1] == "resourceflavors"] == []
    assert cluster.patches("rayjobs")[0].body == moved_rayjob_patch(job_as_read, clock.now)
    assert cluster.read("workloads", WL)["spec"]["podSets"][1]["template"]["spec"]["affinity"] == NOT_ON_PLAN_A
