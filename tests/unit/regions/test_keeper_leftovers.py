"""The regions keeper's rejoin: what keeps a quarantined region out is read
from the region at every tick (planb.regions.keeper.leftovers), so a restarted keeper still waits for the RayCluster of
a RayJob it deleted before; a RayCluster is tied to a stale RayJob by its owner's uid and this manager's origin label,
never by name; an object stuck on a finalizer is said, and ``planb status`` shows what the region waits for. Fakes
from tests/support/unit/keeper_fakes.py."""

from __future__ import annotations

import json

import pytest

from planb.regions.access import kueue_objects as ko
from planb.regions.keeper import leftovers, quarantine
from planb.status import gather
from planb.status import regions as status_regions
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
    region_rayjob,
    ticks,
)

CLUSTER = f"{RAY}/namespaces/default/rayclusters/job-1-raycluster-x"
USERS = f"{RAY}/namespaces/default/rayclusters/job-1-raycluster-user"
BACK = {"metadata": {"resourceVersion": "7"}, "spec": {"clusters": ["b", "a"]}}


def raycluster(name: str, owner_uid: str, labels: Obj) -> Obj:
    """A RayCluster as KubeRay makes it for the RayJob job-1 of uid `owner_uid`: that RayJob as its controller, its
    labels copied and KubeRay's own added (ray-project/kuberay@v1.6.2 rayjob_controller.go#L969-L993)."""
    owner = {"apiVersion": "ray.io/v1", "kind": "RayJob", "name": "job-1", "uid": owner_uid, "controller": True}
    labels = {**labels, ko.RAY_ORIGIN_CRD: "RayJob", ko.RAY_ORIGIN_NAME: "job-1"}
    return {"metadata": {"namespace": "default", "name": name, "ownerReferences": [owner], "labels": labels}}


def orphan() -> Obj:
    """The RayCluster of this manager's RayJob job-1 that a keeper deleted before (no longer in the region)."""
    return raycluster("job-1-raycluster-x", "region-rj-uid", region_rayjob("Running")["metadata"]["labels"])


def returning(regions: dict[str, FakeKube], objects: dict[str, Obj]) -> FakeKube:
    """A manager whose job now runs in b; region a, quarantined, answers again with `objects`."""
    moved = manager_workload("QuotaReserved", "Admitted", cluster_name="b")
    config = {"metadata": {"resourceVersion": "7"}, "spec": {"clusters": ["b"]}}
    kube = manager(regions={"a": True, "b": True}, state=keeper_state(["a"]), workload=moved, config=config)
    regions["a"] = FakeKube(objects)
    regions["b"] = FakeKube({})
    return kube


def back(kube: FakeKube) -> list[Obj]:
    return [body for path, body in kube.patches if path == CONFIG]


def test_a_fresh_keeper_keeps_a_region_out_while_the_raycluster_of_a_rayjob_deleted_before_is_there(
    regions: dict[str, FakeKube],
) -> None:
    """Finding 1: a keeper restarted after it deleted the stale RayJob (no memory of it) finds the RayJob's RayCluster
    by this manager's origin label and its owner's uid, gone from the region: it keeps the region out while the
    RayCluster is listed, then release_after (3 s) more."""
    kube = returning(regions, {CLUSTER: orphan()})
    said: list[str] = []
    clock = [0.0]
    keeper = make(kube, said, clock)
    ticks(keeper, clock, 100, 102, 104, 110)
    assert back(kube) == [], "let back while the RayCluster of a deleted RayJob still runs there"
    assert said.count("a: waiting for the RayClusters of its stale RayJobs to be gone: default/job-1-raycluster-x") == 1
    assert regions["a"].deleted == [], "the keeper deletes no RayCluster: the garbage collector does"
    del regions["a"].objects[CLUSTER]
    ticks(keeper, clock, 111, 112)
    assert back(kube) == [], "let back before release_after passed since the RayCluster was last listed"
    ticks(keeper, clock, 113)
    assert back(kube) == [BACK]


def test_a_raycluster_of_the_same_name_made_for_another_rayjob_does_not_keep_a_region_out(
    regions: dict[str, FakeKube],
) -> None:
    """Finding 2: beside the stale RayJob's own RayCluster, a user's RayCluster made for another RayJob job-1 (its
    own uid, no origin label): the region is kept out by the first only; once it is gone, the region comes back."""
    users = raycluster("job-1-raycluster-user", "users-rayjob-uid", {})
    kube = returning(regions, {MANAGER_JOB: region_rayjob("Running"), CLUSTER: orphan(), USERS: users})
    said: list[str] = []
    clock = [0.0]
    keeper = make(kube, said, clock)
    ticks(keeper, clock, 0, 1, 5)
    assert regions["a"].deleted == [MANAGER_JOB]
    assert back(kube) == []
    assert "a: waiting for the RayClusters of its stale RayJobs to be gone: default/job-1-raycluster-x" in said
    del regions["a"].objects[CLUSTER]
    ticks(keeper, clock, 6, 7)
    assert back(kube) == []
    ticks(keeper, clock, 8)
    assert back(kube) == [BACK], "kept out by a RayCluster of another RayJob of the same name"
    assert USERS in regions["a"].objects and USERS not in regions["a"].deleted


def test_a_raycluster_with_this_origin_whose_rayjob_is_live_and_not_stale_does_not_keep_a_region_out() -> None:
    rayjob = {"metadata": {"namespace": "default", "name": "job-1", "uid": "live-uid", "labels": {ko.ORIGIN: ORIGIN}}}
    live = raycluster("job-1-raycluster-x", "live-uid", {ko.ORIGIN: ORIGIN})
    mine = leftovers.dispatched([manager_workload("QuotaReserved")], "planb-regions")
    assert mine == {("default", "job-1")}
    assert leftovers.stale_rayclusters([live], [rayjob], [], ORIGIN, mine) == []
    assert leftovers.stale_rayclusters([live], [rayjob], [rayjob], ORIGIN, mine) == [live]
    assert leftovers.stale_rayclusters([live], [], [], ORIGIN, mine) == [live]
    assert leftovers.stale_rayclusters([live], [], [], "another-manager", mine) == []
    # No ownerReference left: KubeRay's originated-from labels name the RayJob, by namespace and name.
    unowned = {"metadata": {**live["metadata"], "ownerReferences": []}}
    assert leftovers.stale_rayclusters([unowned], [rayjob], [], ORIGIN, mine) == []
    assert leftovers.stale_rayclusters([unowned], [], [], ORIGIN, mine) == [unowned]
    # None of a job this manager did not dispatch, whether by its uid or by its labels.
    for rc in (live, unowned):
        assert leftovers.stale_rayclusters([rc], [], [rayjob], ORIGIN, set()) == []
        assert leftovers.stale_rayclusters([rc], [], [], ORIGIN, {("other", "job-1"), ("default", "job-2")}) == []
    assert leftovers.dispatched([manager_workload("QuotaReserved")], "another-check") == set()


def forged(namespace: str, name: str, job: str, owner_uid: str = "") -> Obj:
    """A RayCluster a region's user made (or KubeRay made for their RayJob `job`, of uid `owner_uid`), carrying this
    manager's origin label and KubeRay's labels naming `job`."""
    labels = {ko.ORIGIN: ORIGIN, ko.RAY_ORIGIN_CRD: "RayJob", ko.RAY_ORIGIN_NAME: job}
    meta: Obj = {"namespace": namespace, "name": name, "labels": labels}
    if owner_uid:
        meta["ownerReferences"] = [
            {"apiVersion": "ray.io/v1", "kind": "RayJob", "name": job, "uid": owner_uid, "controller": True}
        ]
    return {"metadata": meta}


def test_a_raycluster_with_this_origin_for_a_job_this_manager_did_not_dispatch_does_not_keep_a_region_out(
    regions: dict[str, FakeKube],
) -> None:
    """RayClusters carrying this manager's origin label and KubeRay's labels naming a RayJob that is not
    in the region, in another namespace than the manager's job-1 or naming another RayJob, and one KubeRay made for
    a RayJob a user made with the origin label in another namespace: none keeps the quarantined region out."""
    user_job = {
        "metadata": {"namespace": "other", "name": "job-1", "uid": "user-rj-uid", "labels": {ko.ORIGIN: ORIGIN}}
    }
    objects = {
        f"{RAY}/namespaces/other/rayclusters/a": forged("other", "a", "job-1"),
        f"{RAY}/namespaces/default/rayclusters/b": forged("default", "b", "job-2", owner_uid="gone-uid"),
        f"{RAY}/namespaces/other/rayjobs/job-1": user_job,
        f"{RAY}/namespaces/other/rayclusters/c": forged("other", "c", "job-1", owner_uid="user-rj-uid"),
    }
    kube = returning(regions, objects)
    said: list[str] = []
    clock = [0.0]
    keeper = make(kube, said, clock)
    ticks(keeper, clock, 0, 1, 4)
    assert back(kube) == [BACK], said
    assert not [line for line in said if "RayClusters" in line], said
    assert regions["a"].deleted == [], "the keeper deletes none of them"


CONTROL = "\x1b[2J\r\nforged"


def test_a_stale_rayjob_stuck_on_a_finalizer_is_said_and_planb_status_shows_what_the_region_waits_for(
    regions: dict[str, FakeKube], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding 3: the stale RayJob is being deleted but waits on its finalizers: the keeper deletes nothing, says
    once what keeps the region out (when its deletion began, the finalizers left; cluster text escaped) and writes it
    to its ConfigMap, from which planb status shows the region as quarantined, waiting for it."""
    stuck = region_rayjob("Suspending")
    stuck["metadata"].update(deletionTimestamp="2026-12-05T16:00:00Z", finalizers=["ray.io/rayjob-finalizer", CONTROL])
    kube = returning(regions, {MANAGER_JOB: stuck})
    said: list[str] = []
    clock = [0.0]
    keeper = make(kube, said, clock)
    ticks(keeper, clock, 0, 1, 5, 10)
    assert regions["a"].deleted == [] and back(kube) == []
    waits = (
        "RayJob/default/job-1 (deleting since 2026-12-05T16:00:00Z, finalizers: ray.io/rayjob-finalizer, "
        "\\u001b[2J\\u000d\\u000aforged)"
    )
    assert said == [f"a: kept out until these are deleted (their finalizers cleared): {waits}"], said
    writes = [body for path, body in kube.patches if path == STATE]
    assert writes == [
        {
            "metadata": {"resourceVersion": "3"},
            "data": {
                quarantine.QUARANTINED_KEY: '["a"]',
                leftovers.WAITING_KEY: json.dumps({"a": f"waiting for {waits}"}),
            },
        }
    ], "written once, when it changed"
    kube.objects[STATE]["data"].update(writes[0]["data"])  # as the API server stores it
    monkeypatch.setattr(gather, "region_kube", lambda manager, region: regions[region])
    workload = kube.objects[f"{KUEUE}/namespaces/default/workloads/rayjob-job-1-abcde"]
    shown = status_regions.dispatch(workload, gather.dispatch_reads(kube, workload))  # type: ignore[arg-type]
    assert [(r.region, r.state) for r in shown.regions] == [
        ("a", f"quarantined: waiting for {waits}"),
        ("b", "no copy"),
    ]
    assert shown.line() == f"runs in b (admitted there first); a quarantined: waiting for {waits}"


def test_what_a_region_waits_for_is_said_in_one_line_and_read_back_only_as_written() -> None:
    objs = [f"RayCluster/default/c{i}" for i in range(5)]
    assert leftovers.waiting_line(objs) == (
        "waiting for RayCluster/default/c0; RayCluster/default/c1; RayCluster/default/c2 and 2 more"
    )
    assert leftovers.waiting_line([]) == ""
    assert leftovers.waiting_of({"data": {"waiting": '{"a": "waiting for x\\u001b", "b": 3}'}}) == {
        "a": "waiting for x\\u001b"
    }
    for garbage in ("[1]", "{", "", None):
        assert leftovers.waiting_of({"data": {"waiting": garbage}}) == {}
    assert leftovers.describe("RayCluster", {"metadata": {"namespace": "n", "name": "x\n"}}) == "RayCluster/n/x\\u000a"
