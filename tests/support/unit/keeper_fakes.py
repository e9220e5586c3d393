"""Fake manager and region API servers for the regions keeper's unit tests (tests/unit/regions/test_keeper.py and
test_keeper_review.py): what the keeper reads, and what it writes, patches and deletes."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from planb.regions.access import kueue_objects as ko
from planb.regions.keeper import origin as origin_mod
from planb.regions.keeper import quarantine, reads
from planb.regions.keeper.tick import Keeper, KeeperSettings

Obj = dict[str, Any]
KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
RAY = "/apis/ray.io/v1"
ORIGIN = "planb-mgr"
STATE = "/api/v1/namespaces/kueue-system/configmaps/planb-regions-keeper"
CONFIG = f"{KUEUE}/multikueueconfigs/planb-regions"
MANAGER_JOB = f"{RAY}/namespaces/default/rayjobs/job-1"


class FakeKube:
    """Objects by path; a collection is every object under it (a labelSelector `k=v` filters)."""

    def __init__(self, objects: dict[str, Obj]) -> None:
        self.objects = copy.deepcopy(objects)
        self.patches: list[tuple[str, Obj]] = []
        self.deleted: list[str] = []
        self.delete_options: dict[str, Obj | None] = {}
        self.gets: list[str] = []

    def get(self, path: str) -> Obj | None:
        self.gets.append(path)
        return copy.deepcopy(self.objects.get(path))

    def items(self, path: str, query: dict[str, str] | None = None) -> list[Obj]:
        key, _, value = ((query or {}).get("labelSelector") or "").partition("=")
        kind = path.rsplit("/", 1)[-1]
        found = [o for p, o in self.objects.items() if p.split("/")[-2] == kind]
        return [copy.deepcopy(o) for o in found if not key or (o["metadata"].get("labels") or {}).get(key) == value]

    def merge_patch(self, path: str, body: Obj) -> Obj:
        self.patches.append((path, body))
        return body

    def delete(self, path: str, options: Obj | None = None) -> bool:
        self.deleted.append(path)
        self.delete_options[path] = options
        self.objects.pop(path, None)
        return True


def cluster(name: str, active: bool) -> Obj:
    status = "True" if active else "False"
    return {"metadata": {"name": name}, "status": {"conditions": [{"type": "Active", "status": status}]}}


def manager_workload(*conditions: str, cluster_name: str = "") -> Obj:
    status: Obj = {
        "conditions": [{"type": c, "status": "True"} for c in conditions],
        "admissionChecks": [{"name": "planb-regions", "state": "Retry"}],
    }
    if cluster_name:
        status["clusterName"] = cluster_name
    owner = {"apiVersion": "ray.io/v1", "kind": "RayJob", "name": "job-1", "uid": "rj-uid", "controller": True}
    meta = {"namespace": "default", "name": "rayjob-job-1-abcde", "uid": "wl-1", "ownerReferences": [owner]}
    return {"metadata": meta, "status": status}


def manager(*, regions: dict[str, bool], state: Obj | None, workload: Obj, config: Obj | None = None) -> FakeKube:
    objects: dict[str, Obj] = {f"{KUEUE}/multikueueclusters/{n}": cluster(n, a) for n, a in regions.items()}
    objects[f"{KUEUE}/namespaces/default/workloads/{workload['metadata']['name']}"] = workload
    objects[MANAGER_JOB] = {
        "metadata": {"namespace": "default", "name": "job-1", "uid": "rj-uid", "resourceVersion": "41"},
        "spec": {"suspend": True, "managedBy": "kueue.x-k8s.io/multikueue"},
        "status": {"jobDeploymentStatus": "Suspending"},
    }
    objects[CONFIG] = config or {"metadata": {"resourceVersion": "7"}, "spec": {"clusters": list(regions)}}
    if state is not None:
        objects[STATE] = state
    return FakeKube(objects)


def keeper_state(quarantined: list[str] | None = None, origin: str = ORIGIN) -> Obj:
    data = {origin_mod.ORIGIN_KEY: origin}
    if quarantined:
        data[quarantine.QUARANTINED_KEY] = json.dumps(quarantined)
    return {"metadata": {"resourceVersion": "3"}, "data": data}


def region_rayjob(state: str, origin: str = ORIGIN) -> Obj:
    labels = {ko.ORIGIN: origin, ko.PREBUILT: "rayjob-job-1-abcde"}
    return {
        "metadata": {"namespace": "default", "name": "job-1", "uid": "region-rj-uid", "labels": labels},
        "status": {"jobDeploymentStatus": state},
    }


def region_copy(origin: str = ORIGIN, name: str = "rayjob-job-1-abcde") -> Obj:
    return {"metadata": {"namespace": "default", "name": name, "uid": f"{name}-uid", "labels": {ko.ORIGIN: origin}}}


@pytest.fixture
def regions(monkeypatch: pytest.MonkeyPatch) -> dict[str, FakeKube]:
    """Each region's fake API server, as planb.regions.access.connection.region_kube would reach it."""
    found: dict[str, FakeKube] = {}
    monkeypatch.setattr(reads, "region_kube", lambda manager, region: found[region])  # the keeper's one reading step
    return found


def ticks(keeper: Keeper, clock: list[float], *at: float) -> None:
    for now in at:
        clock[0] = now
        keeper.tick()


def make(kube: FakeKube, said: list[str], clock: list[float], dispatcher: object = None) -> Keeper:
    settings = KeeperSettings(lost_after=5, release_after=3)
    return Keeper(kube, settings, say=said.append, clock=lambda: clock[0], dispatcher=dispatcher)  # type: ignore[arg-type]


def released(kube: FakeKube) -> bool:
    return any(path == f"{MANAGER_JOB}/status" for path, _ in kube.patches)
