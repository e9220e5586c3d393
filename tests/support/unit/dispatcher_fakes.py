"""The keeper's dispatcher's fakes: a manager Workload, manager and region API servers answering in memory, a clock,
and a dispatcher wired to them (tests/unit/regions/test_dispatcher.py, test_dispatcher_shapes.py)."""

from __future__ import annotations

import copy
import json
from typing import Any

from planb.regions.dispatcher import ledger_store as cs
from planb.regions.dispatcher.google_advice import Advice
from planb.regions.dispatcher.job_dispatch import DispatchSettings
from planb.regions.dispatcher.ledger import Key, Ledger
from planb.regions.dispatcher.tick import Dispatcher

Obj = dict[str, Any]
KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
REGIONS = ("us-east5", "europe-west4", "asia-northeast1")
LEDGER_CM = "/api/v1/namespaces/kueue-system/configmaps/planb-regions-ledger"
WL = f"{KUEUE}/namespaces/default/workloads/job-1"
T0 = 1_800_000_000.0
SHAPE = "ct6e-standard-4t:4"
TPU = {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "4x4"}


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
        self.objects = copy.deepcopy(objects or {})
        self.applies: list[tuple[str, Obj, dict[str, str], str]] = []

    def get(self, path: str) -> Obj | None:
        return copy.deepcopy(self.objects.get(path))

    def create(self, path: str, body: Obj) -> Obj:
        meta = body["metadata"]
        self.objects[f"{path}/{meta['name']}"] = copy.deepcopy(body)
        return body

    def merge_patch(self, path: str, body: Obj) -> Obj:
        self.objects[path] = copy.deepcopy(self.objects[path]) | body
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

    dispatcher = Dispatcher(manager, DispatchSettings(), advise, said.append, clock, lambda m, r: regions[r])  # type: ignore[arg-type]
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
