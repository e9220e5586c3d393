"""One region runs a job at a time, and the regions keeper never deletes what it must not: a copy of a Workload still
racing and a RayCluster tied to its RayJob by ownerReference alone. Fakes from
tests/support/unit/keeper_fakes.py."""

from __future__ import annotations

from planb.regions.keeper import quarantine, release
from tests.support.unit.keeper_fakes import (
    CONFIG,
    KUEUE,
    MANAGER_JOB,
    RAY,
    STATE,
    FakeKube,
    keeper_state,
    make,
    manager,
    manager_workload,
    region_copy,
    region_rayjob,
    released,
    ticks,
)

COPY = f"{KUEUE}/namespaces/default/workloads/rayjob-job-1-abcde"


def racing() -> dict:
    """A manager Workload still racing: quota reserved, its MultiKueue check Pending, no clusterName."""
    workload = manager_workload("QuotaReserved")
    workload["status"]["admissionChecks"][0]["state"] = "Pending"
    return workload


def test_a_returning_region_out_of_the_config_loses_its_copy_of_a_workload_still_racing(
    regions: dict[str, FakeKube],
) -> None:
    """A quarantined region, out of the MultiKueueConfig, that answers again: the copy and RayJob of a
    Workload with no clusterName are deleted before the region is let back, because Kueue reads copies only in the
    config's regions and, once the region is back, the earliest Admitted copy would win: the job would run twice."""
    config = {"metadata": {"resourceVersion": "7"}, "spec": {"clusters": ["b"]}}
    kube = manager(regions={"a": True, "b": True}, state=keeper_state(["a"]), workload=racing(), config=config)
    left = region_copy()
    left["metadata"]["uid"] = "copy-uid"
    regions["a"] = FakeKube({COPY: left, MANAGER_JOB: region_rayjob("Running")})
    regions["b"] = FakeKube({})
    said: list[str] = []
    clock = [0.0]
    keeper = make(kube, said, clock)
    ticks(keeper, clock, 0)
    assert sorted(regions["a"].deleted) == sorted([COPY, MANAGER_JOB])
    assert regions["a"].delete_options[COPY] == {
        "propagationPolicy": "Background",
        "preconditions": {"uid": "copy-uid"},
    }
    assert regions["b"].deleted == []
    assert not [p for p, _ in kube.patches if p == CONFIG], "let back in the same tick as its deletes"
    ticks(keeper, clock, 1)
    assert not [p for p, _ in kube.patches if p == CONFIG], "let back before release_after passed since the deletes"
    ticks(keeper, clock, 3)
    assert (CONFIG, {"metadata": {"resourceVersion": "7"}, "spec": {"clusters": ["b", "a"]}}) in kube.patches
    assert (
        STATE,
        {"metadata": {"resourceVersion": "3"}, "data": {quarantine.QUARANTINED_KEY: None, "waiting": None}},
    ) in kube.patches


def test_a_region_in_the_config_keeps_its_copy_of_a_workload_still_racing(regions: dict[str, FakeKube]) -> None:
    """The same copy in a region the config lists (the ConfigMap still naming it quarantined) is live: Kueue
    races it, so nothing there is deleted."""
    config = {"metadata": {"resourceVersion": "7"}, "spec": {"clusters": ["a", "b"]}}
    kube = manager(regions={"a": True, "b": True}, state=keeper_state(["a"]), workload=racing(), config=config)
    regions["a"] = FakeKube({COPY: region_copy(), MANAGER_JOB: region_rayjob("Running")})
    regions["b"] = FakeKube({})
    said: list[str] = []
    clock = [0.0]
    ticks(make(kube, said, clock), clock, 0, 1)
    assert regions["a"].deleted == [] and regions["b"].deleted == []


def test_a_raycluster_owned_by_the_rayjob_without_the_origin_label_blocks_the_release(
    regions: dict[str, FakeKube],
) -> None:
    """A region's RayCluster whose only link to the job is KubeRay's controller ownerReference to the RayJob (no
    origin label, no originated-from labels) may still run it: the quota is not released while it is there."""
    owner = {"apiVersion": "ray.io/v1", "kind": "RayJob", "name": "job-1", "uid": "x", "controller": True}
    left = {"metadata": {"namespace": "default", "name": "job-1-raycluster-x", "ownerReferences": [owner]}}
    assert release.rayclusters_of("job-1", [left]) == [left]
    evicted = manager_workload("Evicted", "QuotaReserved")
    kube = manager(regions={"europe-west4": True}, state=keeper_state(), workload=evicted)
    regions["europe-west4"] = FakeKube({f"{RAY}/namespaces/default/rayclusters/job-1-raycluster-x": left})
    said: list[str] = []
    clock = [0.0]
    ticks(make(kube, said, clock), clock, 0, 10, 20)
    assert not released(kube), said
    assert "europe-west4 still has RayCluster job-1-raycluster-x of its RayJob" in said[-1]
