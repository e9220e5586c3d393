"""The regions keeper's decisions (planb.regions.decisions): when a region is quarantined, when an evicted RayJob's
quota is released, and which of a returning region's objects are stale."""

from __future__ import annotations

import json

from planb.regions import decisions as d

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
    assert d.to_quarantine(["us-east5", "europe-west4"], since, 104.9, 5) == []
    assert d.to_quarantine(["us-east5", "europe-west4"], since, 105.0, 5) == ["us-east5"]


def test_the_last_region_of_the_config_is_never_quarantined() -> None:
    since = {"us-east5": 0.0, "europe-west4": 0.0}
    assert d.to_quarantine(["us-east5", "europe-west4"], since, 60, 5) == ["us-east5"]
    assert d.to_quarantine(["europe-west4"], since, 60, 5) == []


def test_a_region_not_in_the_config_is_not_quarantined_again() -> None:
    assert d.to_quarantine(["europe-west4"], {"us-east5": 0.0}, 60, 5) == []


def test_the_quarantined_regions_are_read_from_the_configs_annotation() -> None:
    config = {"metadata": {"annotations": {d.QUARANTINED: json.dumps(["us-east5"])}}}
    assert d.quarantined(config) == ["us-east5"]
    assert d.quarantined({"metadata": {"annotations": {d.QUARANTINED: "not json"}}}) == []
    assert d.quarantined({"metadata": {}}) == []


def test_only_an_evicted_workload_of_the_multikueue_check_that_still_holds_quota_is_released() -> None:
    assert d.holds_quota_evicted(workload("w", "Evicted", "QuotaReserved"), CHECK)
    assert not d.holds_quota_evicted(workload("w", "QuotaReserved"), CHECK)
    assert not d.holds_quota_evicted(workload("w", "Evicted"), CHECK)
    assert not d.holds_quota_evicted(workload("w", "Evicted", "QuotaReserved", check="dws-prov"), CHECK)


def test_a_suspended_rayjob_still_reading_running_needs_release_and_a_suspended_or_new_one_does_not() -> None:
    assert d.needs_release({"spec": {"suspend": True}, "status": {"jobDeploymentStatus": "Running"}})
    assert not d.needs_release({"spec": {"suspend": True}, "status": {"jobDeploymentStatus": "Suspended"}})
    # KubeRay's New is the empty string, and Kueue counts it inactive: its quota is released without planb.
    assert not d.needs_release({"spec": {"suspend": True}, "status": {"jobDeploymentStatus": ""}})
    assert not d.needs_release({"spec": {"suspend": True}})
    assert not d.needs_release({"spec": {"suspend": False}, "status": {"jobDeploymentStatus": "Running"}})


def test_the_workloads_rayjob_owner_is_found_and_another_owner_is_not_one() -> None:
    assert d.owner_rayjob(workload("w")) == "job-1"
    batch = workload("w", owner="")
    batch["metadata"]["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": "j"}]
    assert d.owner_rayjob(batch) == ""


def test_a_returning_regions_copies_are_stale_unless_their_job_still_runs_there_or_another_manager_made_them() -> None:
    def copy(name: str, origin: str | None = "multikueue") -> dict:
        labels = {d.ORIGIN: origin} if origin else {}
        return {"metadata": {"namespace": "default", "name": name, "labels": labels}}

    homes = {
        ("default", "moved"): workload("moved", cluster="europe-west4"),
        ("default", "home"): workload("home", cluster="us-east5"),
        ("default", "racing"): workload("racing"),
    }
    found = d.stale_copies(
        "us-east5",
        [copy("moved"), copy("home"), copy("racing"), copy("gone"), copy("own", None), copy("theirs", "other-manager")],
        homes,
    )
    assert [c["metadata"]["name"] for c in found] == ["moved", "racing", "gone"]


def test_a_returning_regions_rayjobs_are_matched_to_their_copy_by_label_or_annotation() -> None:
    homes = {("default", "wl-a"): workload("wl-a", cluster="us-east5"), ("default", "wl-b"): workload("wl-b")}
    by_label = {"metadata": {"namespace": "default", "name": "a", "labels": {d.ORIGIN: "mk", d.PREBUILT: "wl-a"}}}
    by_note = {
        "metadata": {
            "namespace": "default",
            "name": "b",
            "labels": {d.ORIGIN: "mk"},
            "annotations": {d.PREBUILT: "wl-b"},
        }
    }
    found = d.stale_jobs("us-east5", [by_label, by_note], homes, origin="mk")
    assert [j["metadata"]["name"] for j in found] == ["b"]
    assert d.stale_jobs("us-east5", [by_label, by_note], homes) == []
