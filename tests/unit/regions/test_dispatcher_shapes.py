"""The dispatcher against a region whose copy of the Workload is a JSON object of a shape planb does not expect
(issue 50, outside review A): dispatch.copy_outcome would raise; the region is said unreadable and left waiting,
never failed, and the other regions' copies are observed in the same tick."""

from __future__ import annotations

import copy as copying
import json
from typing import Any

import pytest

from planb.regions import capacity_state as cs
from planb.regions.advice import Advice
from planb.regions.dispatcher import Dispatcher, DispatchSettings
from planb.regions.ledger import FAILED, PENDING, Key, Ledger

Obj = dict[str, Any]
KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
REGIONS = ("us-east5", "europe-west4", "asia-northeast1")
LEDGER_CM = "/api/v1/namespaces/kueue-system/configmaps/planb-regions-ledger"
WL = f"{KUEUE}/namespaces/default/workloads/job-1"
COPY = WL
T0 = 1_800_000_000.0
SHAPE = "ct6e-standard-4t:4"
TPU = {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "4x4"}


# The manager and region fakes of tests/unit/regions/test_dispatcher.py (a test module imports no other).
def workload() -> Obj:
    """A manager Workload with its quota reserved and its MultiKueue check Pending: what Kueue would sync now."""
    quota = {
        "type": "QuotaReserved",
        "status": "True",
        "reason": "QuotaReserved",
        "message": "",
        "lastTransitionTime": "t",
    }
    return {
        "metadata": {"name": "job-1", "namespace": "default", "uid": "u1", "resourceVersion": "1"},
        "spec": {
            "queueName": "user-queue",
            "podSets": [{"name": "workers", "count": 4, "template": {"spec": {"nodeSelector": TPU}}}],
        },
        "status": {
            "conditions": [quota],
            "admission": {"clusterQueue": "user-cq", "podSetAssignments": [{"name": "workers"}]},
            "admissionChecks": [{"name": "planb-regions", "state": "Pending", "lastTransitionTime": "t"}],
        },
    }


class Fake:
    """Objects by path; records every write."""

    def __init__(self, objects: dict[str, Obj] | None = None) -> None:
        self.objects = copying.deepcopy(objects or {})
        self.applies: list[tuple[str, Obj, dict[str, str], str]] = []

    def get(self, path: str) -> Obj | None:
        return copying.deepcopy(self.objects.get(path))

    def create(self, path: str, body: Obj) -> Obj:
        meta = body["metadata"]
        self.objects[f"{path}/{meta['name']}"] = copying.deepcopy(body)
        return body

    def merge_patch(self, path: str, body: Obj) -> Obj:
        self.objects[path] = copying.deepcopy(self.objects[path]) | body
        return body

    def request(self, method: str, path: str, body: Obj, query: dict[str, str], content_type: str) -> Obj:
        self.applies.append((path, body, query, content_type))
        target = self.objects[path.removesuffix("/status")]
        nominated = body["status"].get("nominatedClusterNames")
        target["status"]["nominatedClusterNames"] = nominated
        return body


def region(rungs: list[str]) -> Fake:
    flavors = [{"name": r, "resources": [{"name": "google.com/tpu", "nominalQuota": 16}]} for r in rungs]
    cq = {"spec": {"resourceGroups": [{"coveredResources": ["google.com/tpu"], "flavors": flavors}]}}
    return Fake(
        {
            f"{KUEUE}/namespaces/default/localqueues/user-queue": {"spec": {"clusterQueue": "cq"}},
            f"{KUEUE}/clusterqueues/cq": cq,
        }
    )


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def dispatching(advice: dict[str, float | None]) -> tuple[Dispatcher, Fake, dict[str, Fake], Clock, list[str]]:
    manager = Fake({WL: workload()})
    regions = {r: region(["dws"]) for r in REGIONS}
    said: list[str] = []
    clock = Clock()

    def advise(key: Key) -> Advice:
        score = advice[key.region]
        return Advice(score) if score is not None else Advice.absent("404 NOT_FOUND: no advice here")

    dispatcher = Dispatcher(manager, DispatchSettings(), advise, said.append, clock, lambda m, r: regions[r])  # type: ignore[arg-type,return-value]
    return dispatcher, manager, regions, clock, said


CLUSTERS = {r: {"status": {"conditions": [{"type": "Active", "status": "True"}]}} for r in REGIONS}
CONFIG = {"spec": {"clusters": list(REGIONS)}}


def tick(dispatcher: Dispatcher, manager: Fake) -> None:
    dispatcher.tick([manager.get(WL) or {}], CLUSTERS, CONFIG)


def stored(manager: Fake) -> tuple[Ledger, cs.LastAdvice]:
    data = manager.objects[LEDGER_CM]["data"]
    return Ledger.from_json(json.loads(data["ledger"])), cs.LastAdvice.from_json(json.loads(data["advice"]))


def outcomes(ledger: Ledger, region: str) -> list[str]:
    return [a.outcome for a in ledger.asks.get(Key(region, "dws", SHAPE), [])]


@pytest.mark.parametrize(
    "copy",
    [
        {"metadata": {"uid": "c1"}, "status": "x"},
        {"metadata": {"uid": "c1"}, "status": {"admissionChecks": ["x"]}},
        {"metadata": {"uid": "c1"}, "status": {"schedulingStats": {"evictions": ["x"]}}},
    ],
    ids=["status-x", "check-string", "eviction-string"],
)
def test_a_copy_planb_cannot_read_leaves_its_region_waiting_and_the_others_are_observed(copy: Obj) -> None:
    dispatcher, manager, regions, clock, said = dispatching(
        {"us-east5": None, "europe-west4": None, "asia-northeast1": None}
    )
    tick(dispatcher, manager)
    assert manager.applies[-1][1]["status"]["nominatedClusterNames"] == ["us-east5", "europe-west4", "asia-northeast1"]
    regions["us-east5"].objects[COPY] = copy
    regions["asia-northeast1"].objects[COPY] = {
        "metadata": {"uid": "c2"},
        "status": {"admissionChecks": [{"name": "dws-prov", "state": "Retry", "message": "no capacity"}]},
    }
    clock.now += 5
    tick(dispatcher, manager)
    assert "default/job-1: us-east5 answers objects planb cannot read (AttributeError); taken as unreadable" in said
    ledger, _ = stored(manager)
    assert outcomes(ledger, "us-east5") == [PENDING], "a region planb could not read was failed"
    assert outcomes(ledger, "asia-northeast1")[0] == FAILED, "the next region was not observed"
    assert isinstance(dispatcher, Dispatcher) and Key("us-east5", "dws", SHAPE) in ledger.asks
