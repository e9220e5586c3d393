"""The regions keeper and its dispatcher against a region whose objects are JSON objects of a shape planb does not
expect, and a region unread between two stale ticks: each such region is taken as unreadable, the tick goes on for
the others, and nothing is released or let back on its account. Fakes from tests/support/unit/keeper_fakes.py."""

from __future__ import annotations

from typing import Any

import pytest

from planb.kube import KubeError
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
    region_copy,
    region_rayjob,
    released,
    ticks,
)

RAYCLUSTER = f"{RAY}/namespaces/default/rayclusters/job-1-raycluster-x"
UNREADABLE = "{} answers objects planb cannot read ({}); taken as unreadable"


def owned(**meta: Any) -> Obj:
    owner = {"apiVersion": "ray.io/v1", "kind": "RayJob", "name": "job-1", "uid": "u", "controller": True}
    return {"metadata": {"namespace": "default", "name": "job-1-raycluster-x", "ownerReferences": [owner], **meta}}


def orphan_without_namespace() -> Obj:
    obj = region_copy(name="gone-workload")
    del obj["metadata"]["namespace"]
    return obj


def back(kube: FakeKube) -> list[list[str]]:
    return [body["spec"]["clusters"] for path, body in kube.patches if path == CONFIG]


def run(regions: dict[str, FakeKube], where: str, objects: dict[str, Obj]) -> tuple[FakeKube, list[str]]:
    """Region `where` (a, in the config, or c, quarantined and Active again) answers `objects`; the others of a, b,
    and the quarantined c, e answer clean. Three ticks: past release_after (3 s) and lost_after (5 s)."""
    evicted = manager_workload("Evicted", "QuotaReserved")
    config = {"metadata": {"resourceVersion": "7"}, "spec": {"clusters": ["a", "b"]}}
    up = {n: True for n in "abce"}
    kube = manager(regions=up, state=keeper_state(["c", "e"]), workload=evicted, config=config)
    regions.update({n: FakeKube(objects if n == where else {}) for n in "abce"})
    said: list[str] = []
    clock = [0.0]
    ticks(make(kube, said, clock), clock, 0, 10, 20)
    assert MANAGER_JOB in regions["b"].gets, "region b was not read"
    return kube, said


@pytest.mark.parametrize(
    ("objects", "error"),
    [
        ({MANAGER_JOB: {"metadata": {"namespace": "default", "name": "job-1", "labels": None}}}, ""),
        ({MANAGER_JOB: {**region_rayjob("Running"), "status": "x"}}, "AttributeError"),
        ({RAYCLUSTER: {"metadata": "x"}}, "AttributeError"),
        ({RAYCLUSTER: owned(ownerReferences=["x"])}, "AttributeError"),
    ],
    ids=["labels-null", "status-x", "metadata-x", "owner-reference-string"],
)
def test_a_region_answering_objects_of_another_shape_holds_the_release_and_the_tick_goes_on(
    regions: dict[str, FakeKube], objects: dict[str, Obj], error: str
) -> None:
    kube, said = run(regions, "a", objects)
    assert not released(kube), kube.patches
    assert back(kube)[0] == ["a", "b", "c", "e"], "the quarantined regions were not let back"
    if error:
        assert UNREADABLE.format("a", error) in said, said


@pytest.mark.parametrize(
    ("objects", "error"),
    [
        ({"/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads/gone": orphan_without_namespace()}, "KeyError"),
        ({MANAGER_JOB: region_rayjob("Running"), RAYCLUSTER: {"metadata": "x", "spec": {}}}, "AttributeError"),
    ],
    ids=["workload-without-namespace", "stale-rayjob-and-metadata-x"],
)
def test_a_quarantined_region_answering_objects_of_another_shape_stays_out(
    regions: dict[str, FakeKube], objects: dict[str, Obj], error: str
) -> None:
    kube, said = run(regions, "c", objects)
    assert back(kube) and all("c" not in clusters for clusters in back(kube)), kube.patches
    assert back(kube)[0] == ["a", "b", "e"], "the other quarantined region was not let back"
    assert UNREADABLE.format("c", error) in said, said


class Flaky(FakeKube):
    """A region's API server that does not answer while `down`."""

    down = False

    def get(self, path: str) -> Obj | None:
        if self.down:
            raise KubeError(503, "Service Unavailable", "")
        return super().get(path)

    def items(self, path: str, query: dict[str, str] | None = None) -> list[Obj]:
        if self.down:
            raise KubeError(503, "Service Unavailable", "")
        return super().items(path, query)


def test_a_region_unread_after_holding_a_stale_raycluster_waits_release_after_from_its_last_unread_tick(
    regions: dict[str, FakeKube],
) -> None:
    """Review B: the RayCluster is listed at t=0, the region unread from 50 to 150, clean at 151: it may have gone
    only at 150, its pods in their grace period, so the region is not back before 150 + release_after."""
    moved = manager_workload("QuotaReserved", "Admitted", cluster_name="b")
    config = {"metadata": {"resourceVersion": "7"}, "spec": {"clusters": ["b"]}}
    kube = manager(regions={"a": True, "b": True}, state=keeper_state(["a"]), workload=moved, config=config)
    region = Flaky({MANAGER_JOB: region_rayjob("Running"), RAYCLUSTER: owned()})
    regions.update({"a": region, "b": FakeKube({})})
    said: list[str] = []
    clock = [0.0]
    keeper = Keeper(kube, KeeperSettings(release_after=30), say=said.append, clock=lambda: clock[0])  # type: ignore[arg-type]
    ticks(keeper, clock, 0)
    assert region.deleted == [MANAGER_JOB] and RAYCLUSTER in region.objects
    region.down = True
    ticks(keeper, clock, 50, 100, 150)
    assert any(s.startswith("a answers Kueue again but not planb yet: 503") for s in said), said
    region.down = False
    del region.objects[RAYCLUSTER]
    ticks(keeper, clock, 151, 179)
    assert back(kube) == [], "let back before release_after passed since the last tick the region was unread"
    ticks(keeper, clock, 180)
    assert back(kube) == [["b", "a"]]
