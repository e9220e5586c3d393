"""The keeper waits, per job, the larger of --release-after and the job's own largest pod grace period
plus planb.regions.keeper.grace.RELEASE_MARGIN_S, after a region last held its RayJob or RayCluster (release), and
after a quarantined region last held a stale one (rejoin). Fakes from tests/support/unit/keeper_fakes.py (release_after
3 s)."""

from __future__ import annotations

import pytest

from planb import cli
from planb.regions.keeper import grace
from planb.regions.keeper.tick import Keeper, KeeperSettings
from tests.support.unit.keeper_fakes import (
    CONFIG,
    MANAGER_JOB,
    RAY,
    FakeKube,
    Obj,
    keeper_state,
    make,
    manager,
    manager_workload,
    region_rayjob,
    released,
    ticks,
)

REGION_CLUSTER = f"{RAY}/namespaces/default/rayclusters/job-1-raycluster-x"


def cluster_spec(worker_grace: int | None, head_grace: int | None = None) -> Obj:
    def template(value: int | None) -> Obj:
        return {
            "spec": {"containers": [{"name": "ray"}]}
            | ({} if value is None else {"terminationGracePeriodSeconds": value})
        }

    return {
        "headGroupSpec": {"template": template(head_grace)},
        "workerGroupSpecs": [{"template": template(worker_grace)}],
    }


def raycluster(worker_grace: int) -> Obj:
    owner = {"apiVersion": "ray.io/v1", "kind": "RayJob", "name": "job-1", "uid": "region-rj-uid", "controller": True}
    meta = {"namespace": "default", "name": "job-1-raycluster-x", "uid": "rc-uid", "ownerReferences": [owner]}
    return {"metadata": meta, "spec": cluster_spec(worker_grace)}


def test_a_job_with_a_600_s_grace_is_not_released_105_s_after_its_raycluster_is_gone(
    regions: dict[str, FakeKube],
) -> None:
    """Fails on the code before the fix: the job was released release_after (3 s here; 105 s by default) after its
    RayCluster was gone, while its workers still had up to 600 s to save to the checkpoint the next region reads."""
    kube = manager(regions={"a": True}, state=keeper_state(), workload=manager_workload("Evicted", "QuotaReserved"))
    kube.objects[MANAGER_JOB]["spec"]["rayClusterSpec"] = cluster_spec(600)
    regions["a"] = FakeKube({REGION_CLUSTER: raycluster(600)})
    said: list[str] = []
    clock = [0.0]
    keeper = make(kube, said, clock)
    ticks(keeper, clock, 0, 10)
    regions["a"].objects.pop(REGION_CLUSTER)
    ticks(keeper, clock, 11, 10 + 105, 10 + 629)
    assert not released(kube), said
    ticks(keeper, clock, 10 + 631)
    assert released(kube), said


def test_a_job_without_a_longer_grace_keeps_release_after(regions: dict[str, FakeKube]) -> None:
    """The control: pods with no grace period set (Kubernetes' 30 s) under a release_after of 3 s wait 60 s."""
    kube = manager(regions={"a": True}, state=keeper_state(), workload=manager_workload("Evicted", "QuotaReserved"))
    kube.objects[MANAGER_JOB]["spec"]["rayClusterSpec"] = cluster_spec(None)
    regions["a"] = FakeKube({})
    said: list[str] = []
    clock = [0.0]
    keeper = make(kube, said, clock)
    ticks(keeper, clock, 0, 59)
    assert not released(kube), said
    ticks(keeper, clock, 61)
    assert released(kube), said


def test_the_release_margin_is_the_keepers_setting(regions: dict[str, FakeKube]) -> None:
    """`--release-margin 2` (KeeperSettings.release_margin): pods with Kubernetes' 30 s wait 32 s, not 60."""
    kube = manager(regions={"a": True}, state=keeper_state(), workload=manager_workload("Evicted", "QuotaReserved"))
    kube.objects[MANAGER_JOB]["spec"]["rayClusterSpec"] = cluster_spec(None)
    regions["a"] = FakeKube({})
    said: list[str] = []
    clock = [0.0]
    settings = KeeperSettings(lost_after=5, release_after=3, release_margin=2)
    keeper = Keeper(kube, settings, say=said.append, clock=lambda: clock[0])  # type: ignore[arg-type]
    ticks(keeper, clock, 0, 31)
    assert not released(kube), said
    ticks(keeper, clock, 33)
    assert released(kube), said


def test_a_region_whose_stale_rayjob_had_a_600_s_grace_rejoins_630_s_after_it_was_gone(
    regions: dict[str, FakeKube],
) -> None:
    """Fails on the code before the fix: the region was let back release_after after its stale RayJob was deleted."""
    moved = manager_workload("QuotaReserved", "Admitted", cluster_name="b")
    config = {"metadata": {"resourceVersion": "7"}, "spec": {"clusters": ["b"]}}
    kube = manager(regions={"a": True, "b": True}, state=keeper_state(["a"]), workload=moved, config=config)
    stale = region_rayjob("Running")
    stale["spec"] = {"rayClusterSpec": cluster_spec(600)}
    regions["a"] = FakeKube({MANAGER_JOB: stale})
    regions["b"] = FakeKube({})
    said: list[str] = []
    clock = [0.0]
    keeper = make(kube, said, clock)
    ticks(keeper, clock, 0)
    assert regions["a"].deleted == [MANAGER_JOB]
    ticks(keeper, clock, 1, 105, 629)
    assert not [p for p, _ in kube.patches if p == CONFIG], said
    ticks(keeper, clock, 631)
    assert [body for p, body in kube.patches if p == CONFIG] == [
        {"metadata": {"resourceVersion": "7"}, "spec": {"clusters": ["b", "a"]}}
    ]


def test_the_largest_grace_reads_head_and_worker_templates_and_kubernetes_default() -> None:
    assert grace.largest_grace({"spec": {"rayClusterSpec": cluster_spec(600, 900)}}) == 900
    assert grace.largest_grace({"spec": cluster_spec(None)}) == 30  # a RayCluster, nothing set: Kubernetes' default
    assert grace.largest_grace({"spec": {"rayClusterSpec": cluster_spec(True)}}) == 30  # type: ignore[arg-type]
    assert grace.largest_grace({"spec": {"suspend": True}}) is None
    assert grace.wait_after([{"spec": {"rayClusterSpec": cluster_spec(3600)}}], 105.0) == 3630.0
    assert grace.wait_after([{"spec": {}}], 105.0) == 105.0
    assert grace.wait_after([{"spec": {"rayClusterSpec": cluster_spec(10)}}], 3.0, margin=2.0) == 32.0


def test_planb_regions_keep_takes_a_margin_of_zero_or_more_and_refuses_a_negative_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parser = cli.build_parser(["planb.regions.cli"])
    args = parser.parse_args(["regions", "keep", "--release-margin", "0"])
    assert (args.release_margin, args.release_after) == (0.0, grace.RELEASE_MARGIN_S + 75.0)
    with pytest.raises(SystemExit):
        parser.parse_args(["regions", "keep", "--release-margin", "-1"])
    assert "--release-margin: '-1' is below zero" in capsys.readouterr().err
