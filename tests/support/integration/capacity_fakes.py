"""What the capacity simulator's tests run it against: an in-memory API server and a clock the test moves."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from planb.kube_objects import conditions
from planb.local.capacity import autoscaler, besteffort, booking, dws, nodes, provisioning, spot_reconciler
from planb.local.capacity import simulator as sim

Obj = dict[str, Any]

PR_LIST = f"{dws.PR_PATH}/provisioningrequests"
NS = "default"
KUBECONFIG = (
    "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
    "clusters: [{name: x, cluster: {server: 'https://127.0.0.1:1'}}]\n"
    "contexts: [{name: x, context: {cluster: x, user: x}}]\nusers: [{name: x, user: {token: t}}]\n"
)
DWS_SELECTOR = {
    "cloud.google.com/gke-nodepool": "dws-pool",
    "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
    "cloud.google.com/gke-tpu-topology": "4x4",
}


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0
        self.ticks = 0

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.now

    def time_ns(self) -> int:
        self.ticks += 1  # node names must differ within one fake instant
        return int(self.now * 1e9) + self.ticks

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class FakeApi:
    """Nodes, pods, pod templates and ProvisioningRequests kept in dicts; versions count up like etcd's."""

    def __init__(self) -> None:
        self.version = 100
        self.nodes: dict[str, Obj] = {}
        self.pods: list[Obj] = []
        self.templates: dict[str, Obj] = {}
        self.requests: dict[str, Obj] = {}
        self.patches = 0
        #: Every status write: (request name, its conditions as written).
        self.writes: list[tuple[str, list[Obj]]] = []
        #: Events recorded (the autoscaler's NotTriggerScaleUp).
        self.events: list[Obj] = []

    def _bump(self, obj: Obj) -> Obj:
        self.version += 1
        obj.setdefault("metadata", {})["resourceVersion"] = str(self.version)
        return obj

    def items(self, path: str, query: dict[str, str] | None = None) -> list[Obj]:
        if path == "/api/v1/nodes":
            return [copy.deepcopy(n) for n in self.nodes.values()]
        if path == "/api/v1/pods":
            return copy.deepcopy(self.pods)
        if path == PR_LIST:
            return [copy.deepcopy(r) for r in self.requests.values()]
        return []

    def get(self, path: str, query: dict[str, str] | None = None) -> Obj | None:
        if "/podtemplates/" in path:
            found = self.templates.get(path.rsplit("/", 1)[1])
            return copy.deepcopy(found) if found else None
        return {"items": self.items(path, query)}

    def create(self, path: str, body: Obj) -> Obj:
        if path.endswith("/events"):
            self.events.append(copy.deepcopy(body))
            return body
        assert path == "/api/v1/nodes"
        self.nodes[body["metadata"]["name"]] = self._bump(copy.deepcopy(body))
        return body

    def delete(self, path: str) -> bool:
        return self.nodes.pop(path.rsplit("/", 1)[1], None) is not None

    def merge_patch(self, path: str, body: Obj) -> Obj:
        name = path.split("/provisioningrequests/", 1)[1].removesuffix("/status")
        pr = self.requests[f"{NS}/{name}"]
        pr.setdefault("status", {})["conditions"] = copy.deepcopy(body["status"]["conditions"])
        if "provisioningClassDetails" in body["status"]:
            pr["status"]["provisioningClassDetails"] = copy.deepcopy(body["status"]["provisioningClassDetails"])
        self.patches += 1
        self.writes.append((name, copy.deepcopy(body["status"]["conditions"])))
        return copy.deepcopy(self._bump(pr))

    # ---- helpers for the tests
    def add_request(
        self,
        name: str,
        *,
        podsets: int = 1,
        max_run: str | None = None,
        count: int = 4,
        selector: dict[str, str] | None = None,
        created: str | None = None,
    ) -> None:
        """A request as Kueue makes it: one PodSet per worker group (count = replicas x hosts) and its template."""
        refs = []
        for i in range(podsets):
            template = f"ppt-{name}-{i}"
            self.templates[template] = {"template": {"spec": {"nodeSelector": dict(selector or DWS_SELECTOR)}}}
            refs.append({"podTemplateRef": {"name": template}, "count": count})
        params = {"maxRunDurationSeconds": max_run} if max_run is not None else {}
        meta: Obj = {"namespace": NS, "name": name, "generation": 1}
        if created is not None:
            meta["creationTimestamp"] = created
        self.requests[f"{NS}/{name}"] = self._bump(
            {
                "metadata": meta,
                "spec": {"provisioningClassName": dws.QUEUED_CLASS, "podSets": refs, "parameters": params},
            }
        )

    def conds(self, name: str) -> dict[str, tuple[str, str, str]]:
        return {
            k: (c["status"], c["reason"], c["message"]) for k, c in conditions(self.requests[f"{NS}/{name}"]).items()
        }

    def run_pod_on(self, node: str) -> None:
        self.pods.append(
            {"metadata": {"name": f"pod-{node}"}, "spec": {"nodeName": node}, "status": {"phase": "Running"}}
        )


def install_clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """A fake clock for every module of the simulator that reads the time."""
    fake = Clock()
    for module in (sim, provisioning, booking, autoscaler, besteffort, nodes, spot_reconciler):
        monkeypatch.setattr(module, "time", fake)
    return fake
