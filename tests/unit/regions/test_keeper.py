"""The regions keeper's ticks (planb.regions.keeper.tick) against fake manager and region API servers: what it
writes, releases and deletes."""

from __future__ import annotations

import copy
import json

import pytest

from planb.catalog import profiles, training
from planb.regions.access import kueue_objects as ko
from planb.regions.keeper import grace, quarantine
from planb.regions.keeper import tick as keeper_mod
from planb.regions.keeper.options import KeeperSettings
from tests.support.unit.keeper_fakes import (
    CONFIG,
    KUEUE,
    MANAGER_JOB,
    ORIGIN,
    RAY,
    STATE,
    FakeKube,
    Obj,
    keeper_state,
    make,
    manager,
    manager_workload,
    region_copy,
    region_rayjob,
    released,
    ticks,
)


def test_a_suspending_rayjob_is_not_released_while_its_region_is_active(regions: dict[str, FakeKube]) -> None:
    """The manager's RayJob reads Suspending (copied from the region, where KubeRay is still
    deleting the RayCluster); the region is Active and still has the RayJob, so the quota stays held. Once the
    region's RayJob is gone, the keeper releases it."""
    evicted = manager_workload("Evicted", "QuotaReserved")
    kube = manager(regions={"us-east5": True, "europe-west4": True}, state=keeper_state(), workload=evicted)
    regions["us-east5"] = FakeKube({MANAGER_JOB: region_rayjob("Suspending")})
    regions["europe-west4"] = FakeKube({})
    said: list[str] = []
    clock = [0.0]
    keeper = make(kube, said, clock)
    ticks(keeper, clock, 0, 10, 20, 60)
    assert not released(kube), kube.patches
    assert said == ["not releasing the quota of default/job-1 yet: us-east5 still has its RayJob, reading 'Suspending'"]
    del regions["us-east5"].objects[MANAGER_JOB]  # KubeRay suspended it and Kueue deleted it there
    ticks(keeper, clock, 61, 62)
    assert not released(kube), "released before release_after passed since the region last held the job"
    ticks(keeper, clock, 63)
    assert released(kube), kube.patches
    assert said[-1].startswith("released the quota of default/job-1: its Workload was evicted")


REGION_CLUSTER = f"{RAY}/namespaces/default/rayclusters/job-1-raycluster-x"


def region_raycluster(origin: str = ORIGIN) -> Obj:
    """The RayCluster KubeRay made for the region's RayJob: its labels copied, the RayJob its controller."""
    labels = {ko.ORIGIN: origin, "ray.io/originated-from-cr-name": "job-1", "ray.io/originated-from-crd": "RayJob"}
    owner = {"apiVersion": "ray.io/v1", "kind": "RayJob", "name": "job-1", "uid": "region-rj-uid", "controller": True}
    meta = {"namespace": "default", "name": "job-1-raycluster-x", "labels": labels, "ownerReferences": [owner]}
    return {"metadata": meta}


def test_the_quota_is_held_while_a_region_still_has_the_rayjobs_raycluster(regions: dict[str, FakeKube]) -> None:
    """Kueue deleted the region's RayJob with background propagation, so its RayCluster
    (and its pods, in their grace period) is still there: the quota stays held, and release_after counts from the
    last tick at which a region held the RayJob or its RayCluster, not from the eviction."""
    evicted = manager_workload("Evicted", "QuotaReserved")
    kube = manager(regions={"us-east5": True, "europe-west4": True}, state=keeper_state(), workload=evicted)
    regions["us-east5"] = FakeKube({REGION_CLUSTER: region_raycluster()})
    theirs = region_raycluster("other")
    theirs["metadata"]["labels"]["ray.io/originated-from-cr-name"] = "job-2"
    theirs["metadata"]["ownerReferences"][0]["name"] = "job-2"
    regions["europe-west4"] = FakeKube({f"{RAY}/namespaces/default/rayclusters/theirs": theirs})
    said: list[str] = []
    clock = [0.0]
    keeper = make(kube, said, clock)
    ticks(keeper, clock, 0, 10, 20)
    assert not released(kube), kube.patches
    assert said == [
        "not releasing the quota of default/job-1 yet: us-east5 still has RayCluster job-1-raycluster-x of its "
        "RayJob: its pods may still run"
    ]
    del regions["us-east5"].objects[REGION_CLUSTER]  # the garbage collector deleted it; its pods may still stop
    ticks(keeper, clock, 21, 22)
    assert not released(kube), kube.patches
    ticks(keeper, clock, 23)
    assert released(kube), kube.patches


def test_the_default_release_after_outlasts_the_largest_workers_grace_period() -> None:
    """A RayCluster's pods keep running for their grace period after it is gone (the
    chart's workers: planb.catalog.training.grace_period_seconds, 50-75 s), so by default the keeper waits past the
    largest of them, with a margin, before a second region may start the job."""
    largest = max(training.grace_period_seconds(name) for name in profiles.names())
    assert largest >= 75
    assert KeeperSettings().release_after >= largest + 15
    assert keeper_mod.KeeperSettings.release_after == largest + grace.RELEASE_MARGIN_S  # the class default


def test_a_suspending_rayjob_in_a_region_kueue_no_longer_reaches_is_released(regions: dict[str, FakeKube]) -> None:
    evicted = manager_workload("Evicted", "QuotaReserved")
    kube = manager(regions={"us-east5": False, "europe-west4": True}, state=keeper_state(), workload=evicted)
    regions["europe-west4"] = FakeKube({})  # us-east5 is not read: Kueue does not reach it
    said: list[str] = []
    clock = [0.0]
    keeper = make(kube, said, clock)
    ticks(keeper, clock, 0, 4)
    # Not Active for less than lost_after (5 s): a failed reconnect turns Active False at once, and Kueue itself
    # waits workerLostTimeout before it takes a job from an unreachable region, which likely still runs it.
    assert not released(kube), said
    assert said == [
        "not releasing the quota of default/job-1 yet: us-east5 is not Active in Kueue, but not lost yet: it may "
        "still run the job"
    ]
    ticks(keeper, clock, 5)
    assert released(kube), said


def test_only_the_rayjob_the_workloads_owner_reference_names_by_uid_is_released(regions: dict[str, FakeKube]) -> None:
    """A Workload's ownerReference is whatever whoever may edit Workloads wrote: the keeper patches the RayJob it
    names only when the uid matches, as Kueue writes it, and never puts a name that is not a Kubernetes name into
    a URL (urllib3 resolves ``..``: the name below would reach team-b's RayJob)."""
    evicted = manager_workload("Evicted", "QuotaReserved")
    evicted["metadata"]["ownerReferences"][0]["uid"] = "another-rayjobs-uid"
    kube = manager(regions={"europe-west4": True}, state=keeper_state(), workload=evicted)
    regions["europe-west4"] = FakeKube({})
    said: list[str] = []
    clock = [0.0]
    keeper = make(kube, said, clock)
    ticks(keeper, clock, 0, 10)
    assert not released(kube), said
    victim = f"{RAY}/namespaces/team-b/rayjobs/victim"
    kube.objects[victim] = copy.deepcopy(kube.objects[MANAGER_JOB])
    evicted["metadata"]["ownerReferences"][0].update(name="../../team-b/rayjobs/victim", uid="rj-uid")
    kube.objects[f"{KUEUE}/namespaces/default/workloads/rayjob-job-1-abcde"] = evicted
    ticks(keeper, clock, 20)
    assert kube.patches == [], kube.patches
    assert not [p for p in kube.gets if "victim" in p], kube.gets


def test_the_quarantine_list_lives_in_the_keepers_configmap(regions: dict[str, FakeKube]) -> None:
    """A lost region is written to the keeper's ConfigMap (before it leaves the config), and an
    annotation on the MultiKueueConfig, which a user allowed to edit the config writes, makes the keeper neither
    clean a region nor add it back."""
    running = manager_workload("QuotaReserved", "Admitted", cluster_name="europe-west4")
    forged = {
        "metadata": {
            "resourceVersion": "7",
            "annotations": {quarantine.OLD_QUARANTINED: json.dumps(["asia-northeast1"])},
        },
        "spec": {"clusters": ["us-east5", "europe-west4"]},
    }
    kube = manager(
        regions={"us-east5": False, "europe-west4": True, "asia-northeast1": True},
        state=keeper_state(),
        workload=running,
        config=forged,
    )
    regions["asia-northeast1"] = FakeKube({f"{KUEUE}/namespaces/default/workloads/x": region_copy(name="x")})
    said: list[str] = []
    clock = [0.0]
    ticks(make(kube, said, clock), clock, 0, 6)
    state_writes = [body for path, body in kube.patches if path == STATE]
    config_writes = [body for path, body in kube.patches if path == CONFIG]
    assert state_writes == [
        {"metadata": {"resourceVersion": "3"}, "data": {quarantine.QUARANTINED_KEY: '["us-east5"]'}}
    ]
    assert config_writes == [
        {
            "metadata": {"resourceVersion": "7", "annotations": {quarantine.OLD_QUARANTINED: None}},
            "spec": {"clusters": ["europe-west4"]},
        }
    ]
    assert kube.patches.index((STATE, state_writes[0])) < kube.patches.index((CONFIG, config_writes[0]))
    assert regions["asia-northeast1"].deleted == []  # named only by the forged annotation: not touched


def test_a_returning_region_loses_only_what_its_managers_kueue_made_for_its_workloads(
    regions: dict[str, FakeKube],
) -> None:
    """In the returning region the keeper deletes the copy and RayJob of its own Workload, which
    runs elsewhere now; another manager's copy (Kueue's default origin) and a RayJob that only carries the labels
    stay; a copy of a gone Workload is left to Kueue's GC, and the region comes back once that is gone."""
    moved = manager_workload("QuotaReserved", "Admitted", cluster_name="europe-west4")
    config = {"metadata": {"resourceVersion": "7"}, "spec": {"clusters": ["europe-west4"]}}
    kube = manager(
        regions={"us-east5": True, "europe-west4": True},
        state=keeper_state(["us-east5"]),
        workload=moved,
        config=config,
    )
    ours_copy = f"{KUEUE}/namespaces/default/workloads/rayjob-job-1-abcde"
    theirs_copy = f"{KUEUE}/namespaces/team-b/workloads/rayjob-job-1-abcde"
    orphan = f"{KUEUE}/namespaces/default/workloads/rayjob-gone-fghij"
    forged_job = f"{RAY}/namespaces/default/rayjobs/not-job-1"
    theirs = region_copy(ko.DEFAULT_ORIGIN)
    theirs["metadata"]["namespace"] = "team-b"
    fake = region_rayjob("Running")
    fake["metadata"]["name"] = "not-job-1"
    regions["us-east5"] = FakeKube(
        {
            ours_copy: region_copy(),
            MANAGER_JOB: region_rayjob("Running"),
            theirs_copy: theirs,
            orphan: region_copy(name="rayjob-gone-fghij"),
            forged_job: fake,
        }
    )
    said: list[str] = []
    clock = [0.0]
    keeper = make(kube, said, clock)
    ticks(keeper, clock, 0)
    assert sorted(regions["us-east5"].deleted) == sorted([ours_copy, MANAGER_JOB])
    # Each deletion is of the object listed, by uid: not one of the same name made meanwhile.
    assert regions["us-east5"].delete_options[MANAGER_JOB] == {
        "propagationPolicy": "Background",
        "preconditions": {"uid": "region-rj-uid"},
    }
    assert not [p for p, _ in kube.patches if p == CONFIG], "back before Kueue's GC deleted the orphan copy"
    assert "us-east5: waiting for Kueue's GC to delete the copies of gone Workloads: default/rayjob-gone-fghij" in said
    del regions["us-east5"].objects[orphan]  # Kueue's GC, by the same origin
    ticks(keeper, clock, 1)
    assert not [p for p, _ in kube.patches if p == CONFIG], "back before release_after passed since it held anything"
    ticks(keeper, clock, 3)
    assert sorted(regions["us-east5"].deleted) == sorted([ours_copy, MANAGER_JOB])
    assert (CONFIG, {"metadata": {"resourceVersion": "7"}, "spec": {"clusters": ["europe-west4", "us-east5"]}}) in (
        kube.patches
    )
    assert (
        STATE,
        {"metadata": {"resourceVersion": "3"}, "data": {quarantine.QUARANTINED_KEY: None, "waiting": None}},
    ) in kube.patches
    assert said[-1] == "us-east5 back in the MultiKueueConfig planb-regions: nothing stale left"


def test_without_the_keepers_configmap_the_keeper_acts_on_nothing(regions: dict[str, FakeKube]) -> None:
    evicted = manager_workload("Evicted", "QuotaReserved")
    kube = manager(regions={"us-east5": False, "europe-west4": True}, state=None, workload=evicted)
    said: list[str] = []
    clock = [0.0]
    keeper = make(kube, said, clock)
    with pytest.raises(keeper_mod.KeeperStateError, match="is missing: the keeper acts on nothing"):
        ticks(keeper, clock, 0, 10)
    kube.objects[STATE] = keeper_state(origin="")
    with pytest.raises(keeper_mod.KeeperStateError, match="names no origin"):
        ticks(keeper, clock, 20)
    assert kube.patches == [] and kube.deleted == []
