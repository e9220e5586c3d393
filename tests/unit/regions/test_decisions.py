"""The regions keeper's decisions (planb.regions.keeper.tick): when a region is quarantined, when an evicted
RayJob's quota is released, and which of a returning region's objects are stale."""

from __future__ import annotations

import json

from planb.regions.access import kueue_objects as ko
from planb.regions.keeper import origin as origin_mod
from planb.regions.keeper import quarantine, rejoin, release

CHECK = "planb-regions"


def workload(name: str, *conditions: str, cluster: str = "", owner: str = "job-1", check: str = CHECK) -> dict:
    status: dict = {
        "conditions": [{"type": c, "status": "True"} for c in conditions],
        "admissionChecks": [{"name": check, "state": "Retry"}],
    }
    if cluster:
        status["clusterName"] = cluster
    owners = [{"apiVersion": "ray.io/v1", "kind": "RayJob", "name": owner}] if owner else []
    return {"metadata": {"namespace": "default", "name": name, "ownerReferences": owners}, "status": status}


def test_a_region_is_quarantined_once_lost_for_lost_after_and_not_before() -> None:
    since = {"us-east5": 100.0}
    assert quarantine.to_quarantine(["us-east5", "europe-west4"], since, 104.9, 5) == []
    assert quarantine.to_quarantine(["us-east5", "europe-west4"], since, 105.0, 5) == ["us-east5"]


def test_the_last_region_of_the_config_is_never_quarantined() -> None:
    since = {"us-east5": 0.0, "europe-west4": 0.0}
    assert quarantine.to_quarantine(["us-east5", "europe-west4"], since, 60, 5) == ["us-east5"]
    assert quarantine.to_quarantine(["europe-west4"], since, 60, 5) == []


def test_a_region_not_in_the_config_is_not_quarantined_again() -> None:
    assert quarantine.to_quarantine(["europe-west4"], {"us-east5": 0.0}, 60, 5) == []


def test_the_quarantined_regions_are_read_from_the_keepers_configmap_and_never_from_the_configs_annotation() -> None:
    state = {"data": {quarantine.QUARANTINED_KEY: json.dumps(["us-east5"]), origin_mod.ORIGIN_KEY: "planb-mgr"}}
    assert (quarantine.quarantined(state), origin_mod.origin_of(state)) == (["us-east5"], "planb-mgr")
    assert quarantine.quarantined({"data": {quarantine.QUARANTINED_KEY: "not json"}}) == []
    assert (quarantine.quarantined({}), origin_mod.origin_of({})) == ([], "")
    # Whoever may edit the MultiKueueConfig does not choose what the keeper cleans and adds back.
    forged = {"metadata": {"annotations": {quarantine.OLD_QUARANTINED: json.dumps(["us-east5"])}}}
    assert quarantine.quarantined(forged) == []


def test_only_an_evicted_workload_of_the_multikueue_check_that_still_holds_quota_is_released() -> None:
    assert release.holds_quota_evicted(workload("w", "Evicted", "QuotaReserved"), CHECK)
    assert not release.holds_quota_evicted(workload("w", "QuotaReserved"), CHECK)
    assert not release.holds_quota_evicted(workload("w", "Evicted"), CHECK)
    assert not release.holds_quota_evicted(workload("w", "Evicted", "QuotaReserved", check="dws-prov"), CHECK)


def test_a_suspended_rayjob_still_reading_running_needs_release_and_a_suspended_or_new_one_does_not() -> None:
    mk = {"managedBy": release.MULTIKUEUE_MANAGED_BY}
    assert release.needs_release({"spec": {"suspend": True, **mk}, "status": {"jobDeploymentStatus": "Running"}})
    # Not MultiKueue's (KubeRay reconciles it on the manager): never written, whatever a Workload names.
    assert not release.needs_release({"spec": {"suspend": True}, "status": {"jobDeploymentStatus": "Running"}})
    kuberay = {"managedBy": "ray.io/kuberay-operator"}
    assert not release.needs_release(
        {"spec": {"suspend": True, **kuberay}, "status": {"jobDeploymentStatus": "Running"}}
    )
    assert not release.needs_release({"spec": {"suspend": True}, "status": {"jobDeploymentStatus": "Suspended"}})
    # KubeRay's New is the empty string, and Kueue counts it inactive: its quota is released without planb.
    assert not release.needs_release({"spec": {"suspend": True}, "status": {"jobDeploymentStatus": ""}})
    assert not release.needs_release({"spec": {"suspend": True}})
    assert not release.needs_release({"spec": {"suspend": False}, "status": {"jobDeploymentStatus": "Running"}})


def test_the_workloads_rayjob_owner_is_found_and_another_owner_is_not_one() -> None:
    assert ko.owner_rayjob(workload("w")) == "job-1"
    # An ownerReference's name is not checked by the API server; one that is not a Kubernetes name is none.
    assert ko.owner_rayjob(workload("w", owner="../../team-b/rayjobs/victim")) == ""
    assert ko.owner_rayjob(workload("w", owner="job-1?dryRun=All")) == ""
    owned = workload("w")
    owned["metadata"]["ownerReferences"][0]["uid"] = "rj-uid"
    assert ko.owns(owned, {"metadata": {"name": "job-1", "uid": "rj-uid"}})
    assert not ko.owns(owned, {"metadata": {"name": "job-1", "uid": "a-new-job-1"}})
    assert not ko.owns(workload("w"), {"metadata": {"name": "job-1", "uid": "rj-uid"}})  # no uid: not Kueue's
    batch = workload("w", owner="")
    batch["metadata"]["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": "j"}]
    assert ko.owner_rayjob(batch) == ""


ORIGIN = "planb-mgr"


def test_a_returning_regions_copies_are_stale_unless_their_job_still_runs_there_or_another_manager_made_them() -> None:
    def copy(name: str, origin: str | None = ORIGIN) -> dict:
        labels = {ko.ORIGIN: origin} if origin else {}
        return {"metadata": {"namespace": "default", "name": name, "labels": labels}}

    homes = {
        ("default", "moved"): workload("moved", cluster="europe-west4"),
        ("default", "home"): workload("home", cluster="us-east5"),
        ("default", "racing"): workload("racing"),
    }
    found = rejoin.stale_copies(
        "us-east5",
        [copy("moved"), copy("home"), copy("racing"), copy("gone"), copy("own", None), copy("theirs", "other-manager")],
        homes,
        ORIGIN,
        CHECK,
        listed=["europe-west4"],
    )
    delete, gc = found
    # Still racing (no clusterName), the region out of the config: no candidate of Kueue's, stale.
    assert [c["metadata"]["name"] for c in delete] == ["moved", "racing"]
    assert [c["metadata"]["name"] for c in gc] == ["gone"]  # Kueue's GC deletes it, by the same origin
    # The region in the config: Kueue races the copy, which may be the one it admits; never stale there.
    delete, _ = rejoin.stale_copies("us-east5", [copy("racing")], homes, ORIGIN, CHECK, listed=["us-east5"])
    assert delete == []


def test_the_keeper_deletes_only_copies_kueue_made_for_a_workload_of_its_own_manager() -> None:
    """The origin label alone (anyone's to write in a region) names nothing for deletion; the copy
    must be of a Workload this manager has under its MultiKueue check, and never under Kueue's shared default."""
    homes = {
        ("default", "other-check"): workload("other-check", check="dws-prov", cluster="europe-west4"),
        ("default", "ours"): workload("ours", cluster="europe-west4"),
    }

    def copy(name: str, origin: str = ORIGIN) -> dict:
        return {"metadata": {"namespace": "default", "name": name, "labels": {ko.ORIGIN: origin}}}

    delete, gc = rejoin.stale_copies("us-east5", [copy("other-check"), copy("ours")], homes, ORIGIN, CHECK, listed=())
    assert ([c["metadata"]["name"] for c in delete], gc) == (["ours"], [])
    # Another manager's copies of a Workload of the same name (Kueue's default origin, shared): not this keeper's.
    assert rejoin.stale_copies("us-east5", [copy("ours", ko.DEFAULT_ORIGIN)], homes, ORIGIN, CHECK, listed=()) == (
        [],
        [],
    )
    # No origin known: nothing at all.
    assert rejoin.stale_copies("us-east5", [copy("ours", "")], homes, "", CHECK, listed=()) == ([], [])


def test_a_returning_regions_rayjobs_are_matched_to_their_copy_by_label_or_annotation() -> None:
    homes = {
        ("default", "wl-a"): workload("wl-a", cluster="us-east5", owner="a"),
        ("default", "wl-b"): workload("wl-b", cluster="europe-west4", owner="b"),
    }
    by_label = {"metadata": {"namespace": "default", "name": "a", "labels": {ko.ORIGIN: "mk", ko.PREBUILT: "wl-a"}}}
    by_note = {
        "metadata": {
            "namespace": "default",
            "name": "b",
            "labels": {ko.ORIGIN: "mk"},
            "annotations": {ko.PREBUILT: "wl-b"},
        }
    }
    delete, _ = rejoin.stale_jobs("us-east5", [by_label, by_note], homes, "mk", CHECK, listed=())
    assert [j["metadata"]["name"] for j in delete] == ["b"]
    assert rejoin.stale_jobs("us-east5", [by_label, by_note], homes, ORIGIN, CHECK, listed=()) == ([], [])


def test_a_rayjob_is_deleted_only_under_the_name_of_the_rayjob_that_owns_its_manager_workload() -> None:
    """Kueue's adapter creates the region's RayJob under the manager RayJob's own name: a RayJob of another name
    that names the Workload as its prebuilt one (anyone's label to write) is not the keeper's."""
    homes = {("default", "wl-b"): workload("wl-b", cluster="europe-west4", owner="b")}

    def job(name: str) -> dict:
        return {"metadata": {"namespace": "default", "name": name, "labels": {ko.ORIGIN: ORIGIN, ko.PREBUILT: "wl-b"}}}

    delete, gc = rejoin.stale_jobs("us-east5", [job("b"), job("someone-elses")], homes, ORIGIN, CHECK, listed=())
    assert ([j["metadata"]["name"] for j in delete], gc) == (["b"], [])


def _rayjob(state: str, origin: str = ORIGIN) -> dict:
    return {"metadata": {"name": "job-1", "labels": {ko.ORIGIN: origin}}, "status": {"jobDeploymentStatus": state}}


def _raycluster(rayjob: str = "job-1", origin: str = ORIGIN, owned: bool = True, labelled: bool = True) -> dict:
    """A RayCluster as KubeRay makes it for a RayJob: the RayJob's labels (its origin) and KubeRay's own, the RayJob
    as its controller (v1.6.2 rayjob_controller.go#L969-L995)."""
    labels = {ko.ORIGIN: origin}
    if labelled:
        labels |= {ko.RAY_ORIGIN_NAME: rayjob, ko.RAY_ORIGIN_CRD: "RayJob"}
    owners = [{"kind": "RayJob", "name": rayjob, "uid": "gone", "controller": True}] if owned else []
    return {"metadata": {"name": f"{rayjob}-raycluster-x", "labels": labels, "ownerReferences": owners}}


def test_a_suspending_rayjob_in_an_active_region_blocks_the_release_of_its_quota() -> None:
    """KubeRay holds Suspending until the RayCluster is gone; released before that, the job could
    run in two regions at once. Released only when the region is not Active or its RayJob is gone."""
    clusters = {"us-east5": True, "europe-west4": True}  # Kueue reaches both (their MultiKueueClusters Active)
    none = {"us-east5": [], "europe-west4": []}
    held = release.release_blocker(
        clusters, {"us-east5": _rayjob("Suspending"), "europe-west4": None}, ORIGIN, region_clusters=none
    )
    assert held == "us-east5 still has its RayJob, reading 'Suspending'"
    assert (
        release.release_blocker(clusters, {"us-east5": None, "europe-west4": None}, ORIGIN, region_clusters=none) == ""
    )
    lost = {"us-east5": False, "europe-west4": True}
    # Lost (not Active for lost_after): Kueue hears nothing more from us-east5.
    assert release.release_blocker(lost, {"europe-west4": None}, ORIGIN, lost={"us-east5"}, region_clusters=none) == ""
    # Not Active, not lost yet (a failed reconnect): it may still run the job.
    assert (
        release.release_blocker(lost, {"europe-west4": None}, ORIGIN, region_clusters=none)
        == "us-east5 is not Active in Kueue, but not lost yet: it may still run the job"
    )
    # A region planb could not read, while Kueue reaches it: planb cannot tell, so it waits.
    assert (
        release.release_blocker(clusters, {"europe-west4": None}, ORIGIN, region_clusters=none)
        == "us-east5 answers Kueue but was not read by planb"
    )
    # A RayJob of the same key without this manager's origin still blocks: it may be this job's.
    other = {"us-east5": _rayjob("Running", "other-manager"), "europe-west4": None}
    assert release.release_blocker(clusters, other, ORIGIN, region_clusters=none) == (
        "us-east5 still has its RayJob (without this manager's origin), reading 'Running'"
    )


def test_a_rayjobs_raycluster_left_in_an_active_region_blocks_the_release_of_its_quota() -> None:
    """Kueue deletes a region's RayJob with background propagation (kueue v0.19.2
    ray_multikueue_adapter.go#L294-L299), so its RayCluster, and the pods in their grace period, outlive it: the
    release waits for the RayCluster too, whether its controller reference or KubeRay's labels name the RayJob."""
    clusters = {"us-east5": True, "europe-west4": True}  # Kueue reaches both (their MultiKueueClusters Active)
    jobs = {"us-east5": None, "europe-west4": None}
    for left in (_raycluster(), _raycluster(owned=False), _raycluster(labelled=False)):
        assert release.rayclusters_of("job-1", [left]) == [left]
        found = {"us-east5": [left], "europe-west4": []}
        assert release.release_blocker(clusters, jobs, ORIGIN, region_clusters=found) == (
            "us-east5 still has RayCluster job-1-raycluster-x of its RayJob: its pods may still run"
        )
    going = _raycluster()
    going["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert release.release_blocker(
        clusters, jobs, ORIGIN, region_clusters={"us-east5": [going], "europe-west4": []}
    ) == ("us-east5 still has RayCluster job-1-raycluster-x of its RayJob, being deleted: its pods may still run")
    # Another RayJob's RayCluster, or one of neither: not this job's.
    others = [_raycluster("job-2"), _raycluster(owned=False, labelled=False)]
    assert release.rayclusters_of("job-1", others) == []
    # KubeRay's originated-from labels for the job, or its controller reference alone, block without this manager's
    # origin (blocking is the safe side).
    theirs, owned_only = _raycluster(origin="other-manager"), _raycluster(origin="other-manager", labelled=False)
    assert release.rayclusters_of("job-1", [theirs, owned_only]) == [theirs, owned_only]
    # A region read for its RayJob but not for its RayClusters is not known to be free.
    assert release.release_blocker(clusters, jobs, ORIGIN, region_clusters={"europe-west4": []}) == (
        "us-east5 answers Kueue but was not read by planb"
    )
