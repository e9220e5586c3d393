"""The Ray head stand-in put together, without a cluster: heads, submitter pods and the Ray job API over HTTP.

A fake API server (a dict of objects by path) holds one RayJob's chain: the RayJob, its RayCluster, the head
service and pod, and the submitter pod's Job. The pod informer is fed by hand, as its watch would.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from planb.kube import Kube, Obj
from planb.rayhead import settings as settings_mod
from planb.rayhead.heads import RayHeads
from planb.rayhead.server import RayHeadServer
from planb.rayhead.submitter import Submitters

NS = "team-a"
HEAD_HOST = f"rc-head-svc.{NS}.svc.cluster.local:8265"


class FakeKube:
    """The reads and the status patch the stand-in makes, answered from a dict."""

    def __init__(self, objects: dict[str, Obj]) -> None:
        self.objects = objects
        self.patches: list[tuple[str, Obj]] = []

    def get(self, path: str) -> Obj | None:
        return self.objects.get(path)

    def merge_patch(self, path: str, body: Obj) -> Obj:
        self.patches.append((path, body))
        return body


def _pod(name: str, uid: str, labels: dict[str, str], containers: list[str], owners: list[Obj]) -> Obj:
    return {
        "metadata": {"name": name, "namespace": NS, "uid": uid, "labels": labels, "ownerReferences": owners},
        "spec": {"containers": [{"name": c, "image": "rayproject/ray"} for c in containers]},
        "status": {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"},
    }


HEAD = _pod("rc-head", "head-1", {"ray.io/cluster": "rc", "ray.io/node-type": "head"}, ["ray-head"], [])
SUBMITTER = _pod("rj-sub", "sub-1", {}, ["ray-job-submitter"], [{"kind": "Job", "name": "rj"}])
OBJECTS: dict[str, Obj] = {
    f"/api/v1/namespaces/{NS}/services/rc-head-svc": {"spec": {"selector": {"ray.io/cluster": "rc"}}},
    f"/apis/ray.io/v1/namespaces/{NS}/rayclusters/rc": {
        "metadata": {"ownerReferences": [{"kind": "RayJob", "name": "rj"}]},
        "spec": {},
    },
    f"/apis/batch/v1/namespaces/{NS}/jobs/rj": {"metadata": {"ownerReferences": [{"kind": "RayJob", "name": "rj"}]}},
    f"/apis/ray.io/v1/namespaces/{NS}/rayjobs/rj": {
        "metadata": {"name": "rj", "namespace": NS},
        "spec": {"entrypoint": "python train.py"},
        "status": {"dashboardURL": HEAD_HOST, "jobId": "rj-sub-id"},
    },
}


@pytest.fixture
def stand_in(tmp_path: Path) -> Iterator[tuple[RayHeads, FakeKube, RayHeadServer]]:
    settings_mod.set_payload(None, settings_mod.Payload(seconds=0.2), tmp_path)
    kube = FakeKube(dict(OBJECTS))
    heads = RayHeads(cast(Kube, kube), tmp_path)
    Submitters(heads)
    server = RayHeadServer(heads, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield heads, kube, server
    server.shutdown()
    server.server_close()
    for table in list(heads.tables.values()):
        table.close("test over")


def _feed(heads: RayHeads, *pods: Obj) -> None:
    heads.pods.items = {f"{NS}/{p['metadata']['name']}": p for p in pods}
    heads.reconcile()


def _proxied(
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


def test_a_submitter_pod_submits_follows_and_ends_succeeded(stand_in: tuple[RayHeads, FakeKube, RayHeadServer]) -> None:
    heads, kube, server = stand_in
    _feed(heads, HEAD, SUBMITTER)
    deadline = time.monotonic() + 10
    while not kube.patches and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [path for path, _ in kube.patches] == [f"/api/v1/namespaces/{NS}/pods/rj-sub/status"]
    status = kube.patches[0][1]["status"]
    assert status["phase"] == "Succeeded"
    assert status["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0
    code, job = _proxied(server, "GET", "/api/jobs/rj-sub-id")
    assert (code, job["status"], job["entrypoint"]) == (200, "SUCCEEDED", "python train.py")


def test_the_job_api_answers_for_a_running_head_only(stand_in: tuple[RayHeads, FakeKube, RayHeadServer]) -> None:
    heads, _, server = stand_in
    assert _proxied(server, "GET", "/api/jobs/")[0] == 502  # no head pod yet
    _feed(heads, HEAD)
    code, answer = _proxied(server, "POST", "/api/jobs/", {"submission_id": "s1", "entrypoint": "echo hi"})
    assert (code, answer) == (200, {"job_id": "s1", "submission_id": "s1"})
    assert _proxied(server, "POST", "/api/jobs/", {"submission_id": "s1"})[0] == 500  # a used submission_id
    code, jobs = _proxied(server, "GET", "/api/jobs/")
    assert code == 200 and [j["submission_id"] for j in jobs] == ["s1"]
    _feed(heads)  # the head pod went: its table and jobs go with it
    assert heads.tables == {}
    assert _proxied(server, "GET", "/api/jobs/s1")[0] == 502


def test_a_used_submission_id_is_answered_as_ray_answers_it(
    stand_in: tuple[RayHeads, FakeKube, RayHeadServer],
) -> None:
    """Ray's head answers 500 with the job agent's refusal in its text; KubeRay's dashboard client reads a 500
    holding "Please use a different submission_id" as "already submitted" and goes on with that job."""
    heads, _, server = stand_in
    _feed(heads, HEAD)
    assert _proxied(server, "POST", "/api/jobs/", {"submission_id": "s1", "entrypoint": "echo first"})[0] == 200
    code, answer = _proxied(server, "POST", "/api/jobs/", {"submission_id": "s1", "entrypoint": "echo second"})
    assert code == 500
    assert isinstance(answer, str) and "Please use a different submission_id" in answer, answer
    assert "Job with submission_id s1 already exists" in answer, answer
    code, jobs = _proxied(server, "GET", "/api/jobs/")
    assert code == 200 and [(j["submission_id"], j["entrypoint"]) for j in jobs] == [("s1", "echo first")]
