"""One move per job across controller restarts, wherever the process dies."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from planb.failover.controller import (
    MOVED_ANNOTATION,
    move_message,
)
from tests.support.shared.failover.fake_api import (
    FakeCluster,
    Killed,
)
from tests.support.shared.failover.kueue_steps import (
    Clock,
    Kueue,
    start_controller,
    timeout,
    watch,
)
from tests.support.shared.failover.objects import (
    AFTER,
    JOB,
    NOT_ON_PLAN_A,
    PLAN_A,
    PLAN_B,
    WL,
    expected_event,
)

Obj = dict[str, Any]

pytestmark = pytest.mark.usefixtures("no_network")


# ---------------------------------------------------------------- 3. one move across restarts


@pytest.mark.parametrize("quota_released_first", [True, False], ids=["released-first", "released-later"])
def test_killed_between_the_rayjob_and_the_workload_patch_a_restart_finishes_the_move_once(
    cluster: FakeCluster, kueue: Kueue, clock: Clock, quota_released_first: bool
) -> None:
    killed = start_controller(cluster)
    killed.reconcile(kueue.admit(PLAN_A))
    evicted = kueue.evict()
    if quota_released_first:
        evicted = kueue.release()
    cluster.kill_after_patch_of = "rayjobs"
    with pytest.raises(Killed):
        killed.reconcile(evicted)
    assert [(w.verb, w.plural) for w in cluster.writes] == [("patch", "rayjobs")]
    moved_at = cluster.read("rayjobs", JOB)["metadata"]["annotations"][MOVED_ANNOTATION]

    # A new process, started with another timeout: the move's own wait (the annotation) is the one reported.
    clock.now = "2026-05-04T10:05:00Z"
    restarted = start_controller(cluster, after_seconds=900)
    released = evicted if quota_released_first else kueue.release()
    # The list at start-up, then its own MODIFIED event and a resync.
    restarted.reconcile(released)
    watch(restarted, kueue.current, kueue.current)
    assert [(w.verb, w.plural) for w in cluster.writes] == [
        ("patch", "rayjobs"),
        ("patch", "workloads"),
        ("create", "events"),
    ]
    assert restarted.moves_done == 0
    assert cluster.read("rayjobs", JOB)["metadata"]["annotations"][MOVED_ANNOTATION] == moved_at
    assert [w.body for w in cluster.writes if w.verb == "create"] == [expected_event("2026-05-04T10:05:00Z")]
    assert cluster.events()[0]["message"] == "moved to plan B after 10m: plan A had no capacity"
    assert cluster.read("workloads", WL)["spec"]["podSets"][1]["template"]["spec"]["affinity"] == NOT_ON_PLAN_A

    # Re-admitted on plan B; yet another restart changes nothing.
    watch(start_controller(cluster), functools.partial(kueue.admit, PLAN_B))
    watch(start_controller(cluster), kueue.current)
    assert len(cluster.writes) == 3
    assert len(cluster.events()) == 1


def test_killed_before_the_event_a_restart_records_it_and_patches_nothing(
    cluster: FakeCluster, kueue: Kueue, clock: Clock
) -> None:
    killed = start_controller(cluster)
    killed.reconcile(kueue.admit(PLAN_A))
    kueue.evict()
    released = kueue.release()
    cluster.kill_after_patch_of = "workloads"
    with pytest.raises(Killed):
        killed.reconcile(released)
    assert cluster.events() == []

    restarted = start_controller(cluster)
    watch(restarted, kueue.current, kueue.current, kueue.current)
    assert [(w.verb, w.plural) for w in cluster.writes] == [
        ("patch", "rayjobs"),
        ("patch", "workloads"),
        ("create", "events"),
    ]
    assert [e["message"] for e in cluster.events()] == [move_message(AFTER)]


def test_a_restarted_controller_does_not_record_a_second_event(
    cluster: FakeCluster, kueue: Kueue, clock: Clock
) -> None:
    first = start_controller(cluster)
    watch(first, *timeout(kueue))
    (event,) = cluster.events()

    clock.now = "2026-05-04T11:00:00Z"
    for _ in range(2):
        restarted = start_controller(cluster)
        watch(restarted, kueue.current, kueue.current)
    assert [(w.verb, w.plural) for w in cluster.writes] == [
        ("patch", "rayjobs"),
        ("patch", "workloads"),
        ("create", "events"),
    ]
    assert cluster.events() == [event]
    # Each new process tried once (the API server refused: AlreadyExists), then remembered it.
    assert [(w.verb, w.plural) for w in cluster.rejected] == [("create", "events")] * 2
