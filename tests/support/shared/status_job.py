"""One concurrent-ladder job with two migrations, as the API shows it, for the tests of `planb status -o` and
`--timeline`: job-m started on Spot, moved to DWS once its ProvisioningRequest was provisioned, then to the
reservation; train.py resumed after each move.

The objects are shaped as Kueue v0.19.2, GKE's ProvisioningRequests and the kubelet's log API give them (the same
forms as tests/unit/status/test_goodput.py; planb.status.variants and planb.status.admissions cite where).
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from planb.kube import KubeError
from planb.kube_objects import parse_time
from planb.status import gather
from planb.status.report import KUEUE, JobStatus, collect
from tests.support.shared.status_fakes import FakeKube
from tests.support.shared.workload_objects import admitted, condition, event, reserved, variant

Obj = dict[str, Any]
NOW = "2026-11-29T10:15:00Z"
PARENT = "rayjob-job-m-parent"
ORDER = ["reserved", "dws", "spot"]
PLANS = {"reserved": "reservation", "dws": "dws", "spot": "spot"}
SUBMITTER = "job-m-9f2kq"

# The third run's submitter log (`kubectl logs --timestamps`): train.py repeats the first resume ("earlier:"), then
# its own after the move to the reservation, then trains on.
LOG = """\
2026-11-29T10:09:10.000000000Z Job submission server address: http://job-m-head-svc:8265
2026-11-29T10:09:14.000000000Z earlier: resumed from checkpoint step 120; 1 step(s) lost
2026-11-29T10:09:14.000000000Z earlier: training time up to step 120: 100.0 s kept; the 1 lost step(s) took 0.8 s
2026-11-29T10:09:14.100000000Z resumed from checkpoint step 500; 12 step(s) lost
2026-11-29T10:09:14.100000000Z training time up to step 500: 480.0 s kept; the 12 lost step(s) took 9.5 s
2026-11-29T10:14:00.000000000Z training time up to step 700: 640.0 s kept
"""


def _variant(flavor: str, conds: list[Obj], active: bool) -> Obj:
    return variant(f"rayjob-job-m-{flavor}", flavor, PARENT, conds, active)


def _event(reason: str, flavor: str, at: str, message: str) -> Obj:
    return event(reason, f"rayjob-job-m-{flavor}", at, message)


def _admitted(flavor: str, at: str, checks: int) -> Obj:
    return admitted(f"rayjob-job-m-{flavor}", at, checks)


def _reserved(flavor: str, at: str, waited: int) -> Obj:
    return reserved(f"rayjob-job-m-{flavor}", at, waited)


RAYJOB = {
    "metadata": {
        "namespace": "default",
        "name": "job-m",
        "creationTimestamp": "2026-11-29T10:00:00Z",
        "labels": {"kueue.x-k8s.io/queue-name": "user-queue"},
    },
    "spec": {"suspend": False},
    "status": {"rayClusterName": "job-m-raycluster", "jobDeploymentStatus": "Running", "jobStatus": "RUNNING"},
}
PARENT_WL = {
    "metadata": {
        "namespace": "default",
        "name": PARENT,
        "creationTimestamp": "2026-11-29T10:00:00Z",
        "labels": {gather.PARENT_LABEL: "true"},
        "ownerReferences": [{"kind": "RayJob", "name": "job-m"}],
    },
    "spec": {"active": True},
    "status": {
        "conditions": [
            condition("QuotaReserved", "True", "2026-11-29T10:09:05Z"),
            condition("Admitted", "True", "2026-11-29T10:09:06Z"),
        ],
        "admission": {
            "clusterQueue": "cluster-queue",
            "podSetAssignments": [{"name": "workers", "count": 1, "flavors": {"google.com/tpu": "reserved"}}],
        },
    },
}
WORKLOADS = [
    PARENT_WL,
    _variant("spot", [condition("Admitted", "False", "2026-11-29T10:02:08Z", "Evicted")], active=False),
    _variant("dws", [condition("Admitted", "False", "2026-11-29T10:09:04Z", "Evicted")], active=False),
    _variant(
        "reserved",
        [
            condition("QuotaReserved", "True", "2026-11-29T10:09:05Z"),
            condition("Admitted", "True", "2026-11-29T10:09:06Z"),
        ],
        active=True,
    ),
]
EVENTS = [
    _reserved("spot", "2026-11-29T10:00:03.100000Z", 2),
    _admitted("spot", "2026-11-29T10:00:03.200000Z", 0),
    _event("EvictedDueToFlavorMigration", "spot", "2026-11-29T10:02:08.000000Z", "Evicted"),
    _reserved("dws", "2026-11-29T10:02:13.500000Z", 132),
    _admitted("dws", "2026-11-29T10:02:15.300000Z", 2),
    _event("EvictedDueToFlavorMigration", "dws", "2026-11-29T10:09:04.000000Z", "Evicted"),
    _reserved("reserved", "2026-11-29T10:09:05.000000Z", 544),
    _admitted("reserved", "2026-11-29T10:09:06.000000Z", 1),
]
REQUEST = {
    "metadata": {
        "namespace": "default",
        "name": "rayjob-job-m-dws-dws-prov-1",
        "creationTimestamp": "2026-11-29T10:02:13Z",
        "ownerReferences": [{"kind": "Workload", "name": "rayjob-job-m-dws"}],
    },
    "spec": {"podSets": [{"count": 4}]},
    "status": {
        "conditions": [
            condition("Accepted", "True", "2026-11-29T10:02:13Z"),
            condition("Provisioned", "True", "2026-11-29T10:02:15Z"),
        ]
    },
}
POD = {
    "metadata": {
        "namespace": "default",
        "name": SUBMITTER,
        "creationTimestamp": "2026-11-29T10:09:08Z",
        "labels": {"job-name": "job-m"},
    },
    "spec": {"nodeName": "gke-reserved-node-1"},
    "status": {"phase": "Running"},
}
NODE = {"metadata": {"name": "gke-reserved-node-1", "labels": {"cloud.google.com/gke-nodepool": "reserved-pool"}}}
FLAVORS = [{"metadata": {"name": f}, "spec": {"nodeLabels": {"planb.dev/plan": p}}} for f, p in PLANS.items()]


class JobKube(FakeKube):
    """FakeKube with the ClusterQueue's flavor order and the submitter's log (what collect reads beyond lists)."""

    def get(self, path: str, query: dict[str, str] | None = None) -> Obj | None:
        if path == f"{KUEUE}/clusterqueues/cluster-queue":
            return {"spec": {"resourceGroups": [{"flavors": [{"name": f} for f in ORDER]}]}}
        return None

    def text(self, path: str, query: dict[str, str] | None = None) -> str:
        if path == f"/api/v1/namespaces/default/pods/{SUBMITTER}/log":
            return LOG
        raise KubeError(404, "Not Found", "{}")


def objects() -> dict[str, list[Obj]]:
    return {
        "/rayjobs": [RAYJOB],
        "/workloads": WORKLOADS,
        "/events": EVENTS,
        "/provisioningrequests": [REQUEST],
        "/pods": [POD],
        "/nodes": [NODE],
        "/resourceflavors": FLAVORS,
    }


def job_m(monkeypatch: pytest.MonkeyPatch) -> JobStatus:
    """job-m as `planb status job-m` collects it, at NOW."""
    monkeypatch.setattr(time, "time", lambda: parse_time(NOW))
    [job] = collect(JobKube(objects()), "default", "job-m", goodput=True)  # type: ignore[arg-type]
    return job
