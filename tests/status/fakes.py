"""What `planb status`'s tests read the cluster through: an in-memory API that lists canned objects by path,
and the nodes and pods a job's Ray cluster runs on."""

from __future__ import annotations

from typing import Any

from planb.kube import KubeError
from planb.status.report import KUEUE

Obj = dict[str, Any]


class FakeKube:
    def __init__(self, objects: dict[str, list[Obj]], forbidden: bool = False) -> None:
        self.objects = objects
        self.forbidden = forbidden

    def items(self, path: str, query: dict[str, str] | None = None) -> list[Obj]:
        if self.forbidden and path in (f"{KUEUE}/admissionchecks", f"{KUEUE}/provisioningrequestconfigs"):
            raise KubeError(403, "Forbidden", "{}")
        for suffix, found in self.objects.items():
            if path.endswith(suffix):
                return found
        return []


def node(name: str, pool: str, plan: str | None) -> Obj:
    labels = {"cloud.google.com/gke-nodepool": pool}
    if plan:
        labels["planb.dev/plan"] = plan
    return {"metadata": {"name": name, "labels": labels}}


def pod(name: str, node: str) -> Obj:
    return {
        "metadata": {"namespace": "default", "name": name, "labels": {"ray.io/cluster": "job-1-raycluster"}},
        "spec": {"nodeName": node},
        "status": {"phase": "Running"},
    }
