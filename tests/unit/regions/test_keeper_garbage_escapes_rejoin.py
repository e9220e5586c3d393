"""The regions keeper against what a region may send, and its rejoin: a region answering garbage is unreadable, not
a crash; cluster text in its log lines is escaped; a region rejoins only once the stale RayJobs' RayClusters are gone
and release_after has passed. Fakes from tests/support/unit/keeper_fakes.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planb.kube import Kube, KubeError
from planb.kubeconfig import Connection
from planb.regions.access import kueue_objects as ko
from planb.regions.dispatcher.google_advice import Advice
from planb.regions.dispatcher.job_dispatch import DispatchSettings
from planb.regions.dispatcher.tick import Dispatcher
from planb.regions.keeper import tick as keeper_mod
from tests.support.unit.keeper_fakes import (
    CONFIG,
    KUEUE,
    MANAGER_JOB,
    RAY,
    STATE,
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

CONTROL = "\x1b]52;c;ZXZpbA==\x07\x1b[2J\r"
REGION_CLUSTER = f"{RAY}/namespaces/default/rayclusters/job-1-raycluster-x"


class Garbage:
    """In place of urllib3's PoolManager: a proxy's answer, 200 and not a JSON object, to every request."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def request(self, method: str, url: str, **kwargs: Any) -> Any:
        data = self.data

        class Answer:
            status, reason = 200, "OK"

            def __init__(self) -> None:
                self.data = data

            def release_conn(self) -> None:
                pass

        return Answer()


def garbage_region(data: bytes) -> Kube:
    kube = Kube(Path("Secret kueue-system/a"), Connection(server="https://a.example", token="t"))
    kube.http = Garbage(data)  # type: ignore[assignment]
    return kube


def back(kube: FakeKube) -> list[Obj]:
    return [body for path, body in kube.patches if path == CONFIG]


@pytest.mark.parametrize("answer", [b"<html>sign in</html>", b"[1]"])
def test_a_region_answering_garbage_is_unreadable_and_the_tick_goes_on(regions: dict[str, Any], answer: bytes) -> None:
    """Item 1: region a answers every request with something other than a JSON object. The tick says so and goes on:
    region b is read, the quarantined region c rejoins; the evicted job's quota is not released, because a region
    planb cannot read may still hold its RayJob."""
    evicted = manager_workload("Evicted", "QuotaReserved")
    config = {"metadata": {"resourceVersion": "7"}, "spec": {"clusters": ["a", "b"]}}
    kube = manager(
        regions={"a": True, "b": True, "c": True}, state=keeper_state(["c"]), workload=evicted, config=config
    )
    regions["a"] = garbage_region(answer)
    regions["b"] = FakeKube({})
    regions["c"] = FakeKube({})
    said: list[str] = []
    clock = [0.0]
    ticks(make(kube, said, clock), clock, 0, 10, 20)
    assert not released(kube), kube.patches
    assert MANAGER_JOB in regions["b"].gets
    assert any(s.startswith("a answers Kueue but not planb: 200 OK: ") and MANAGER_JOB in s for s in said), said
    assert not any("sign in" in s for s in said)
    assert back(kube)[0] == {"metadata": {"resourceVersion": "7"}, "spec": {"clusters": ["a", "b", "c"]}}


class Failing(FakeKube):
    def get(self, path: str) -> Obj | None:
        raise KubeError(500, "Internal Server Error", '{"message": "no\\u001b[2J\\r\\nreleased the quota"}')


def test_cluster_text_in_the_keepers_lines_is_escaped(regions: dict[str, FakeKube]) -> None:
    """Item 2: a lost region's MultiKueueCluster Active message and a region's API error message, written by whoever
    may write them, reach the keeper's log lines with no ESC, BEL, CR nor newline."""
    evicted = manager_workload("Evicted", "QuotaReserved")
    kube = manager(regions={"a": False, "b": True}, state=keeper_state(), workload=evicted)
    condition = kube.objects[f"{KUEUE}/multikueueclusters/a"]["status"]["conditions"][0]
    condition.update(reason="ClientConnectionFailed", message=CONTROL)
    regions["b"] = Failing({})
    said: list[str] = []
    clock = [0.0]
    ticks(make(kube, said, clock), clock, 0, 10)
    quarantining = [s for s in said if s.startswith("quarantining a:")]
    assert quarantining and "\\u001b]52;c;ZXZpbA==\\u0007\\u001b[2J\\u000d" in quarantining[0], said
    assert any(s.startswith("b answers Kueue but not planb: 500") for s in said), said
    assert not [s for s in said if set(s) & {"\x1b", "\x07", "\r", "\n"}], said


def test_the_default_say_and_the_dispatchers_say_escape_too(capsys: pytest.CaptureFixture[str]) -> None:
    keeper_mod.say(f"x {CONTROL}\nforged")
    err = capsys.readouterr().err
    assert err.endswith("x \\u001b]52;c;ZXZpbA==\\u0007\\u001b[2J\\u000d\\u000aforged\n"), err
    said: list[str] = []
    Dispatcher(FakeKube({}), DispatchSettings(), lambda key: Advice.absent("none"), said.append).say(CONTROL)  # type: ignore[arg-type]
    assert said == ["\\u001b]52;c;ZXZpbA==\\u0007\\u001b[2J\\u000d"]


def raycluster(job: str, uid: str = "", labels: Obj | None = None) -> Obj:
    """A RayCluster KubeRay made for a RayJob `job` of uid `uid` (its controller; `job`-uid by default) with the
    RayJob's `labels` (none by default) and KubeRay's own (kuberay v1.6.2 rayjob_controller.go#L969-L973)."""
    owner = {"apiVersion": "ray.io/v1", "kind": "RayJob", "name": job, "uid": uid or f"{job}-uid", "controller": True}
    labels = {**(labels or {}), ko.RAY_ORIGIN_CRD: "RayJob", ko.RAY_ORIGIN_NAME: job}
    meta = {"namespace": "default", "name": f"{job}-raycluster-x", "ownerReferences": [owner], "labels": labels}
    return {"metadata": meta}


def returning(regions: dict[str, FakeKube], objects: dict[str, Obj]) -> FakeKube:
    """A manager whose job now runs in b; region a, quarantined, answers again with `objects`."""
    moved = manager_workload("QuotaReserved", "Admitted", cluster_name="b")
    config = {"metadata": {"resourceVersion": "7"}, "spec": {"clusters": ["b"]}}
    kube = manager(regions={"a": True, "b": True}, state=keeper_state(["a"]), workload=moved, config=config)
    regions["a"] = FakeKube(objects)
    regions["b"] = FakeKube({})
    return kube


def test_a_region_rejoins_only_once_the_stale_rayjobs_raycluster_is_gone_and_release_after_passed(
    regions: dict[str, FakeKube],
) -> None:
    """Item 3: the stale RayJob is deleted (background propagation), its RayCluster is still listed: the region is
    not let back while it is; once it is gone, only release_after (3 s here) later, for its pods' grace period. A
    RayCluster of another RayJob does not hold it back."""
    other = f"{RAY}/namespaces/default/rayclusters/job-2-raycluster-x"
    kube = returning(
        regions,
        {
            MANAGER_JOB: region_rayjob("Running"),
            REGION_CLUSTER: raycluster("job-1", "region-rj-uid", region_rayjob("Running")["metadata"]["labels"]),
            other: raycluster("job-2"),
        },
    )
    said: list[str] = []
    clock = [0.0]
    keeper = make(kube, said, clock)
    ticks(keeper, clock, 0)
    assert regions["a"].deleted == [MANAGER_JOB]
    ticks(keeper, clock, 1, 5, 10)
    assert back(kube) == [], "let back while the stale RayJob's RayCluster is listed"
    assert "a: waiting for the RayClusters of its stale RayJobs to be gone: default/job-1-raycluster-x" in said
    del regions["a"].objects[REGION_CLUSTER]  # the garbage collector; its pods may still run their grace period
    ticks(keeper, clock, 11, 12)
    assert back(kube) == [], "let back before release_after passed since the RayCluster was last listed"
    ticks(keeper, clock, 13)
    assert back(kube) == [{"metadata": {"resourceVersion": "7"}, "spec": {"clusters": ["b", "a"]}}]
    assert (
        STATE,
        {"metadata": {"resourceVersion": "3"}, "data": {"quarantined": None, "waiting": None}},
    ) in kube.patches
    assert regions["a"].deleted == [MANAGER_JOB]


def test_a_region_clean_at_its_first_answer_waits_release_after_too(regions: dict[str, FakeKube]) -> None:
    """A keeper restarted after the stale RayCluster was gone cannot tell how long ago: the wait counts from the
    first tick the region answered, as the release counts from the first tick a keeper saw the eviction."""
    kube = returning(regions, {})
    said: list[str] = []
    clock = [0.0]
    keeper = make(kube, said, clock)
    ticks(keeper, clock, 100, 102)
    assert back(kube) == []
    ticks(keeper, clock, 103)
    assert back(kube) == [{"metadata": {"resourceVersion": "7"}, "spec": {"clusters": ["b", "a"]}}]
