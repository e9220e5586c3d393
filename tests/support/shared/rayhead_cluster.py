"""A fake API server for the Ray head stand-in's tests: one RayJob's chain of objects, answered from a dict.

The chain: the RayJob, its RayCluster (its spec.headGroupSpec.template the chart's head, `head_template`, which
KubeRay copies from the RayJob), the head service and pod, and the submitter pod's Job. The stand-in's
pod informer is fed by hand (`feed`), as its watch would; `proxied` sends a request through the stand-in as
KubeRay does (the stand-in as its HTTP proxy).
"""

from __future__ import annotations

import http.client
import json
from typing import Any

from planb.kube import Obj
from planb.local.rayhead.heads import RayHeads
from planb.local.rayhead.server import RayHeadServer

NS = "team-a"
HEAD_HOST = f"rc-head-svc.{NS}.svc.cluster.local:8265"


class FakeKube:
    """The reads and the status patch the stand-in makes, answered from a dict."""

    def __init__(self, objects: dict[str, Obj]) -> None:
        self.objects = objects
        self.patches: list[tuple[str, Obj]] = []

    def get(self, path: str) -> Obj | None:
        return self.objects.get(path)

    def create(self, path: str, body: Obj) -> Obj:
        self.objects[f"{path}/{body['metadata']['name']}"] = body
        return body

    def merge_patch(self, path: str, body: Obj) -> Obj:
        self.patches.append((path, body))
        return body


def pod(name: str, uid: str, labels: dict[str, str], containers: list[str], owners: list[Obj]) -> Obj:
    return {
        "metadata": {"name": name, "namespace": NS, "uid": uid, "labels": labels, "ownerReferences": owners},
        "spec": {"containers": [{"name": c, "image": "rayproject/ray"} for c in containers]},
        "status": {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"},
    }


def controller(kind: str, name: str, uid: str) -> Obj:
    """A controller ownerReference, as KubeRay and the Job controller set it (controllerutil.SetControllerReference)."""
    return {"kind": kind, "name": name, "uid": uid, "controller": True, "blockOwnerDeletion": True}


def head_template(env: list[Obj] | None = None, config_map: str = "rj-app") -> Obj:
    """The head's pod template as the chart writes it: a ConfigMap mounted at /app, literal env. KubeRay puts the
    RayJob's into the RayCluster's spec.headGroupSpec.template and makes the head pod from it."""
    return {
        "spec": {
            "containers": [
                {"name": "ray-head", "env": env or [], "volumeMounts": [{"name": "app", "mountPath": "/app"}]}
            ],
            "volumes": [{"name": "app", "configMap": {"name": config_map}}],
        }
    }


HEAD = pod(
    "rc-head",
    "head-1",
    {"ray.io/cluster": "rc", "ray.io/node-type": "head"},
    ["ray-head"],
    [controller("RayCluster", "rc", "rc-uid")],
)
SUBMITTER = pod("rj-sub", "sub-1", {}, ["ray-job-submitter"], [controller("Job", "rj", "job-uid")])
OBJECTS: dict[str, Obj] = {
    f"/api/v1/namespaces/{NS}/services/rc-head-svc": {"spec": {"selector": {"ray.io/cluster": "rc"}}},
    f"/apis/ray.io/v1/namespaces/{NS}/rayclusters/rc": {
        "metadata": {"name": "rc", "uid": "rc-uid", "ownerReferences": [controller("RayJob", "rj", "rj-uid")]},
        "spec": {"headGroupSpec": {"template": head_template()}},
        # KubeRay's status subresource: the one head pod it found (raycluster_controller.go updateHeadInfo).
        "status": {"head": {"podName": "rc-head", "serviceName": "rc-head-svc"}},
    },
    f"/apis/batch/v1/namespaces/{NS}/jobs/rj": {
        "metadata": {"name": "rj", "uid": "job-uid", "ownerReferences": [controller("RayJob", "rj", "rj-uid")]}
    },
    f"/apis/ray.io/v1/namespaces/{NS}/rayjobs/rj": {
        "metadata": {"name": "rj", "namespace": NS, "uid": "rj-uid"},
        "spec": {"entrypoint": "python train.py", "rayClusterSpec": {"headGroupSpec": {"template": head_template()}}},
        "status": {"dashboardURL": HEAD_HOST, "jobId": "rj-sub-id", "rayClusterName": "rc"},
    },
}


def feed(heads: RayHeads, *pods: Obj) -> None:
    heads.pods.items = {f"{NS}/{p['metadata']['name']}": p for p in pods}
    heads.reconcile()


def proxied(
    server: RayHeadServer, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    """A request sent through the stand-in as an HTTP proxy, as KubeRay sends it."""
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    try:
        data = json.dumps(body) if body is not None else None
        conn.request(method, f"http://{HEAD_HOST}{path}", body=data, headers=headers or {})
        answer = conn.getresponse()
        raw = answer.read().decode()
    finally:
        conn.close()
    try:
        return answer.status, json.loads(raw)
    except ValueError:
        return answer.status, raw
