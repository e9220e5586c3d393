"""A region's user can make a RayCluster of about 1.5 MiB (thousands of finalizers, each some hundred
characters) that stays being deleted and carries this manager's origin. The keeper's ConfigMap (at most 1 MiB) and log
hold a bounded text of it, and a write the manager refuses with 422 is said while the tick goes on. Fakes from
tests/support/unit/keeper_fakes.py; the 1 MiB ConfigMap limit is the API server's, applied by the fake."""

from __future__ import annotations

import json

from planb.kube import KubeError, Obj
from planb.regions.access import kueue_objects as ko
from planb.regions.keeper import leftovers
from tests.support.unit.keeper_fakes import (
    ORIGIN,
    RAY,
    STATE,
    FakeKube,
    keeper_state,
    make,
    manager,
    manager_workload,
    ticks,
)

FORGED = f"{RAY}/namespaces/default/rayclusters/forged"


def forged_raycluster(count: int = 4000) -> Obj:
    """Made by a user of the manager's job's namespace, naming that job (else it keeps no region out)."""
    labels = {ko.ORIGIN: ORIGIN, ko.RAY_ORIGIN_CRD: "RayJob", ko.RAY_ORIGIN_NAME: "job-1"}
    finalizers = [f"example.com/{'f' * 300}-{i}" for i in range(count)]
    meta = {
        "namespace": "default",
        "name": "forged",
        "uid": "forged-uid",
        "labels": labels,
        "finalizers": finalizers,
        "deletionTimestamp": "2026-12-05T10:00:00Z",
    }
    return {"metadata": meta, "spec": {"suspend": True}}


class ManagerWithConfigMapLimit(FakeKube):
    """The manager as its API server answers a ConfigMap write: 422 when the ConfigMap would pass 1 MiB."""

    def merge_patch(self, path: str, body: Obj) -> Obj:
        if path == STATE and len(json.dumps(body)) > 1 << 20:
            raise KubeError(422, "Unprocessable Entity", '{"message": "ConfigMap is invalid: data: Too long"}')
        return super().merge_patch(path, body)


class CountingDispatcher:
    """In place of planb.regions.dispatcher.tick.Dispatcher (which plans with advice): counts the ticks that reach it
    (the tick's last step)."""

    def __init__(self) -> None:
        self.ticks = 0

    def tick(self, *args: object) -> None:
        self.ticks += 1


def returning(regions: dict[str, FakeKube]) -> ManagerWithConfigMapLimit:
    moved = manager_workload("QuotaReserved", "Admitted", cluster_name="b")
    config = {"metadata": {"resourceVersion": "7"}, "spec": {"clusters": ["b"]}}
    kube = manager(regions={"a": True, "b": True}, state=keeper_state(["a"]), workload=moved, config=config)
    regions["a"] = FakeKube({FORGED: forged_raycluster()})
    regions["b"] = FakeKube({})
    return ManagerWithConfigMapLimit(kube.objects)


def test_a_raycluster_with_4000_finalizers_leaves_the_configmap_write_under_64_kib(
    regions: dict[str, FakeKube],
) -> None:
    """Fails on the code before the fix: every finalizer went into the ConfigMap (about 1.2 MB), which the manager
    refuses, and the keeper's tick raised before its dispatcher ran."""
    kube = returning(regions)
    said: list[str] = []
    clock = [0.0]
    counting = CountingDispatcher()
    keeper = make(kube, said, clock, counting)
    ticks(keeper, clock, 0)
    writes = [body for path, body in kube.patches if path == STATE]
    assert writes and all(len(json.dumps(body)) < 64 << 10 for body in writes), [len(json.dumps(b)) for b in writes]
    waiting = json.loads(writes[-1]["data"][leftovers.WAITING_KEY])["a"]
    assert waiting.startswith("waiting for RayCluster/default/forged (deleting since 2026-12-05T10:00:00Z, finalizers:")
    assert "and 3997 more" in waiting and len(waiting) <= leftovers.WAITING_CHARS + 40
    assert all(len(line) < 5000 for line in said), [len(line) for line in said]
    assert counting.ticks == 1


def test_a_configmap_write_refused_with_422_is_said_and_the_tick_goes_on(regions: dict[str, FakeKube]) -> None:
    kube = returning(regions)

    def refuse(path: str, body: Obj) -> Obj:
        raise KubeError(422, "Unprocessable Entity", '{"message": "ConfigMap is invalid"}')

    kube.merge_patch = refuse  # type: ignore[method-assign]
    said: list[str] = []
    clock = [0.0]
    counting = CountingDispatcher()
    keeper = make(kube, said, clock, counting)
    ticks(keeper, clock, 0)
    assert counting.ticks == 1
    assert any(
        line.startswith("the manager refused the write of the ConfigMap planb-regions-keeper (422: ") for line in said
    ), said


def test_describe_shows_three_finalizers_each_cut_to_100_characters() -> None:
    text = leftovers.describe("RayCluster", forged_raycluster(5))
    assert text.count("example.com/") == 3 and "and 2 more" in text
    assert len(text) <= leftovers.DESCRIBED_CHARS + 40
    assert leftovers.cap("x" * 10, 4) == "xxxx... and 6 more characters"
