"""What the `planb status` tests share: an in-memory Kubernetes API, and nodes and pods as GKE and KubeRay label them.

Test modules import these from here, never from one another.
"""

from __future__ import annotations

from typing import Any

from planb.kube import KubeError
from planb.status.report import KUEUE

Obj = dict[str, Any]


class FakeKube:
    """Lists from ``objects`` (path suffix -> items); with ``forbidden``, Kueue's cluster config answers 403."""

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


def pool_node(name: str, pool: str, plan: str | None) -> Obj:
    """A node of GKE node pool ``pool``, labelled with its plan when ``plan`` is given."""
    labels = {"cloud.google.com/gke-nodepool": pool}
    if plan:
        labels["planb.dev/plan"] = plan
    return {"metadata": {"name": name, "labels": labels}}


def ray_pod(name: str, node: str) -> Obj:
    """A running pod of job 1's Ray cluster on ``node``."""
    return {
        "metadata": {"namespace": "default", "name": name, "labels": {"ray.io/cluster": "job-1-raycluster"}},
        "spec": {"nodeName": node},
        "status": {"phase": "Running"},
    }
