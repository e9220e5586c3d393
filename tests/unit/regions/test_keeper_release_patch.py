"""The keeper's release patch: preconditioned on the RayJob's resourceVersion, never on a uid
(which a custom resource's /status drops: tests/integration/regions/test_status_preconditions.py), never sent
without one, and a conflict is said and retried, not a failed tick. Fakes from tests/support/unit/keeper_fakes.py."""

from __future__ import annotations

import json

from planb.kube import KubeError
from planb.regions.dispatcher import writes
from planb.regions.keeper import release
from tests.support.unit.keeper_fakes import (
    CONFIG,
    KUEUE,
    MANAGER_JOB,
    FakeKube,
    keeper_state,
    make,
    manager,
    manager_workload,
    region_copy,
    released,
    ticks,
)

Obj = dict
COPY = f"{KUEUE}/namespaces/default/workloads/rayjob-job-1-abcde"


def test_the_release_patch_carries_the_resource_version_and_no_uid() -> None:
    job = {"metadata": {"name": "job-1", "uid": "rj-uid", "resourceVersion": "41"}}
    body = release.release_patch(job)
    assert body == {"metadata": {"resourceVersion": "41"}, "status": {"jobDeploymentStatus": "Suspended"}}
    assert "uid" not in json.dumps(body)


def test_without_a_resource_version_there_is_no_release_patch() -> None:
    """Never an unconditional patch, and never ``"uid": null`` (a merge patch's null deletes, it does not match)."""
    assert release.release_patch({"metadata": {"name": "job-1", "uid": None}}) is None
    assert release.release_patch({"metadata": {"name": "job-1", "resourceVersion": None}}) is None
    assert release.release_patch({}) is None


def test_a_rayjob_without_a_resource_version_is_not_released(regions: dict[str, FakeKube]) -> None:
    evicted = manager_workload("Evicted", "QuotaReserved")
    kube = manager(regions={"europe-west4": True}, state=keeper_state(), workload=evicted)
    del kube.objects[MANAGER_JOB]["metadata"]["resourceVersion"]
    regions["europe-west4"] = FakeKube({})
    said: list[str] = []
    clock = [0.0]
    ticks(make(kube, said, clock), clock, 0, 10)
    assert not released(kube)
    assert said[-1] == "not releasing the quota of default/job-1: its RayJob has no resourceVersion"


class Conflicting(FakeKube):
    """A manager whose RayJob changed between the keeper's read and its patch: the API server's 409."""

    def merge_patch(self, path: str, body: Obj) -> Obj:
        if path == f"{MANAGER_JOB}/status":
            raise KubeError(409, "Conflict", json.dumps({"message": "the object has been modified"}))
        return super().merge_patch(path, body)


def test_a_conflicting_release_is_said_and_tried_again_at_the_next_tick(regions: dict[str, FakeKube]) -> None:
    evicted = manager_workload("Evicted", "QuotaReserved")
    base = manager(regions={"europe-west4": True}, state=keeper_state(), workload=evicted)
    kube = Conflicting(base.objects)
    regions["europe-west4"] = FakeKube({})
    said: list[str] = []
    clock = [0.0]
    keeper = make(kube, said, clock)
    ticks(keeper, clock, 0, 10)  # no exception: the rest of the tick (quarantine, rejoin) still runs
    assert not released(kube)
    assert said[-1] == "the RayJob job-1 changed meanwhile; trying again"


def test_a_stale_copy_without_a_uid_is_never_deleted_unconditionally(regions: dict[str, FakeKube]) -> None:
    """The rejoin's deletes carry the uid listed as their precondition; an object listed without one (never so from
    an API server) is left, never deleted with ``"uid": null`` (no precondition at all)."""
    moved = manager_workload("QuotaReserved", "Admitted", cluster_name="b")
    config = {"metadata": {"resourceVersion": "7"}, "spec": {"clusters": ["b"]}}
    kube = manager(regions={"a": True, "b": True}, state=keeper_state(["a"]), workload=moved, config=config)
    left = region_copy()
    del left["metadata"]["uid"]
    regions["a"] = FakeKube({COPY: left})
    regions["b"] = FakeKube({})
    said: list[str] = []
    clock = [0.0]
    ticks(make(kube, said, clock), clock, 0, 1)
    assert regions["a"].deleted == []
    assert not [p for p, _ in kube.patches if p == CONFIG], "let back with a stale copy left"


def test_the_dispatchers_apply_never_sends_a_null_uid_or_resource_version() -> None:
    """planb.regions.dispatcher.writes.admission_apply copies the Workload's identity as read; a key read as null is
    left out, never sent as ``null``."""
    workload = {"metadata": {"name": "wl", "namespace": "default", "uid": None, "resourceVersion": "9"}}
    meta = writes.admission_apply(workload, ["a"])["metadata"]
    assert meta == {"name": "wl", "namespace": "default", "resourceVersion": "9"}
