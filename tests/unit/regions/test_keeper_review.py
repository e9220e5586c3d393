"""The regions keeper against what an outside review found: a release patch that could hit a recreated RayJob, a
shared origin, live races taken as stale, copies tied by name or label alone. Fakes from
tests/support/unit/keeper_fakes.py."""

from __future__ import annotations

import pytest

from planb.regions.access import kueue_objects as ko
from planb.regions.keeper import quarantine, rejoin
from planb.regions.keeper import tick as keeper_mod
from planb.regions.keeper.tick import Keeper, KeeperSettings
from tests.support.unit.keeper_fakes import (
    CONFIG,
    KUEUE,
    MANAGER_JOB,
    ORIGIN,
    RAY,
    STATE,
    FakeKube,
    keeper_state,
    make,
    manager,
    manager_workload,
    region_copy,
    region_rayjob,
    ticks,
)


def test_the_release_patch_is_preconditioned_on_the_rayjobs_resource_version(regions: dict[str, FakeKube]) -> None:
    """The patch carries the resourceVersion read, so a RayJob recreated or changed under the
    name is not suspended; never the uid, which the API server drops on a custom resource's /status
    (tests/integration/regions/test_status_preconditions.py)."""
    evicted = manager_workload("Evicted", "QuotaReserved")
    kube = manager(regions={"europe-west4": True}, state=keeper_state(), workload=evicted)
    regions["europe-west4"] = FakeKube({})
    said: list[str] = []
    clock = [0.0]
    ticks(make(kube, said, clock), clock, 0, 10)
    bodies = [body for path, body in kube.patches if path == f"{MANAGER_JOB}/status"]
    assert bodies == [{"metadata": {"resourceVersion": "41"}, "status": {"jobDeploymentStatus": "Suspended"}}]


@pytest.mark.parametrize("where", ["configmap", "flag"])
def test_kueues_default_origin_is_refused(where: str) -> None:
    """``multikueue`` is Kueue's shared default origin: the keeper refuses it and names the fix."""
    state = keeper_state(origin=ko.DEFAULT_ORIGIN if where == "configmap" else "")
    kube = manager(regions={"europe-west4": True}, state=state, workload=manager_workload("QuotaReserved"))
    settings = KeeperSettings(origin=ko.DEFAULT_ORIGIN if where == "flag" else "")
    keeper = Keeper(kube, settings, say=lambda line: None)  # type: ignore[arg-type]
    with pytest.raises(keeper_mod.KeeperStateError, match=r"Kueue's default.*Fix: give the manager's Kueue an origin"):
        keeper.tick()
    assert kube.patches == [] and kube.deleted == []


def test_a_quarantined_region_back_in_the_config_is_not_cleaned(regions: dict[str, FakeKube]) -> None:
    """A region the ConfigMap still lists as quarantined but the MultiKueueConfig lists again races live
    copies: nothing there is deleted, and the ConfigMap's list is reconciled."""
    racing = manager_workload("QuotaReserved")
    racing["status"]["admissionChecks"][0]["state"] = "Pending"
    config = {"metadata": {"resourceVersion": "7"}, "spec": {"clusters": ["a", "b"]}}
    kube = manager(regions={"a": True, "b": True}, state=keeper_state(["a"]), workload=racing, config=config)
    ours = f"{KUEUE}/namespaces/default/workloads/rayjob-job-1-abcde"
    regions["a"] = FakeKube({ours: region_copy(), MANAGER_JOB: region_rayjob("Running")})
    regions["b"] = FakeKube({})
    said: list[str] = []
    clock = [0.0]
    ticks(make(kube, said, clock), clock, 0, 1)
    assert regions["a"].deleted == [] and regions["b"].deleted == []
    assert (STATE, {"metadata": {"resourceVersion": "3"}, "data": {quarantine.QUARANTINED_KEY: None}}) in kube.patches
    assert not [p for p, _ in kube.patches if p == CONFIG]


def test_a_copy_of_a_workload_still_racing_is_stale_only_out_of_the_config() -> None:
    """A clusterName "" means the Workload still races: in a region of the config its copies may be the one
    Kueue admits (kept); in a region out of it Kueue does not see them, so they are stale."""
    racing = manager_workload("QuotaReserved")
    homes = {("default", "rayjob-job-1-abcde"): racing}
    copy, job = region_copy(), region_rayjob("Running")
    assert rejoin.stale_copies("a", [copy], homes, ORIGIN, "planb-regions", listed=["a", "b"]) == ([], [])
    assert rejoin.stale_jobs("a", [job], homes, ORIGIN, "planb-regions", listed=["a", "b"]) == ([], [])
    assert rejoin.stale_copies("a", [copy], homes, ORIGIN, "planb-regions", listed=["b"]) == ([copy], [])
    assert rejoin.stale_jobs("a", [job], homes, ORIGIN, "planb-regions", listed=["b"]) == ([job], [])


def test_a_same_key_rayjob_or_raycluster_without_the_origin_blocks_the_release(
    regions: dict[str, FakeKube],
) -> None:
    """A region's RayJob of the job's name, or a RayCluster KubeRay labelled for it, without this
    manager's origin label still holds the release (blocking is the safe side)."""
    evicted = manager_workload("Evicted", "QuotaReserved")
    kube = manager(regions={"europe-west4": True}, state=keeper_state(), workload=evicted)
    job = region_rayjob("Running", origin="")
    del job["metadata"]["labels"][ko.ORIGIN]
    regions["europe-west4"] = FakeKube({MANAGER_JOB: job})
    said: list[str] = []
    clock = [0.0]
    keeper = make(kube, said, clock)
    ticks(keeper, clock, 0, 10)
    assert not [p for p, _ in kube.patches if p == f"{MANAGER_JOB}/status"], said
    cluster = f"{RAY}/namespaces/default/rayclusters/job-1-raycluster-x"
    labels = {"ray.io/originated-from-cr-name": "job-1", "ray.io/originated-from-crd": "RayJob"}
    regions["europe-west4"] = FakeKube({cluster: {"metadata": {"namespace": "default", "name": "x", "labels": labels}}})
    ticks(keeper, clock, 20, 30)
    assert not [p for p, _ in kube.patches if p == f"{MANAGER_JOB}/status"], said
    assert "europe-west4 still has RayCluster x of its RayJob" in said[-1]
