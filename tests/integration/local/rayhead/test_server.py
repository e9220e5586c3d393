"""The Ray head stand-in put together, without a cluster: heads, submitter pods and the Ray job API over HTTP.

The cluster is tests/support/shared/rayhead_cluster.py's fake API server, holding one RayJob's chain.
"""

from __future__ import annotations

import http.client
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest

from planb.kube import Kube
from planb.local.rayhead import settings as settings_mod
from planb.local.rayhead.heads import RayHeads
from planb.local.rayhead.server import RayHeadServer
from planb.local.rayhead.submitter import Submitters
from tests.support.shared.rayhead_cluster import HEAD, HEAD_HOST, NS, OBJECTS, SUBMITTER, FakeKube, feed, proxied


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


def test_a_submitter_pod_submits_follows_and_ends_succeeded(stand_in: tuple[RayHeads, FakeKube, RayHeadServer]) -> None:
    heads, kube, server = stand_in
    feed(heads, HEAD, SUBMITTER)
    deadline = time.monotonic() + 10
    while not kube.patches and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [path for path, _ in kube.patches] == [f"/api/v1/namespaces/{NS}/pods/rj-sub/status"]
    status = kube.patches[0][1]["status"]
    assert status["phase"] == "Succeeded"
    assert status["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0
    code, job = proxied(server, "GET", "/api/jobs/rj-sub-id")
    assert (code, job["status"], job["entrypoint"]) == (200, "SUCCEEDED", "python train.py")
    # The pod's log is the job's output, in the CRI log format, in the file its kwok Logs object names.
    logs = kube.objects[f"/apis/kwok.x-k8s.io/v1alpha1/namespaces/{NS}/logs/rj-sub"]
    owner = {"apiVersion": "v1", "kind": "Pod", "name": "rj-sub", "uid": "sub-1"}
    assert logs["metadata"]["ownerReferences"] == [owner]
    [entry] = logs["spec"]["logs"]
    assert entry["containers"] == ["ray-job-submitter"] and entry["follow"] is True
    lines = Path(entry["logsFile"]).read_text().splitlines()
    assert lines and all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z stdout F .*", line) for line in lines)
    assert "simulated payload of 'python train.py'" in lines[0], lines


def test_the_job_api_answers_for_a_running_head_only(stand_in: tuple[RayHeads, FakeKube, RayHeadServer]) -> None:
    heads, _, server = stand_in
    assert proxied(server, "GET", "/api/jobs/")[0] == 502  # no head pod yet
    feed(heads, HEAD)
    code, answer = proxied(server, "POST", "/api/jobs/", {"submission_id": "s1", "entrypoint": "echo hi"})
    assert (code, answer) == (200, {"job_id": "s1", "submission_id": "s1"})
    assert proxied(server, "POST", "/api/jobs/", {"submission_id": "s1"})[0] == 500  # a used submission_id
    code, jobs = proxied(server, "GET", "/api/jobs/")
    assert code == 200 and [j["submission_id"] for j in jobs] == ["s1"]
    feed(heads)  # the head pod went: its table and jobs go with it
    assert heads.tables == {}
    assert proxied(server, "GET", "/api/jobs/s1")[0] == 502


def test_a_used_submission_id_is_answered_as_ray_answers_it(
    stand_in: tuple[RayHeads, FakeKube, RayHeadServer],
) -> None:
    """Ray's head answers 500 with the job agent's refusal in its text; KubeRay's dashboard client reads a 500
    holding "Please use a different submission_id" as "already submitted" and goes on with that job."""
    heads, _, server = stand_in
    feed(heads, HEAD)
    assert proxied(server, "POST", "/api/jobs/", {"submission_id": "s1", "entrypoint": "echo first"})[0] == 200
    code, answer = proxied(server, "POST", "/api/jobs/", {"submission_id": "s1", "entrypoint": "echo second"})
    assert code == 500
    assert isinstance(answer, str) and "Please use a different submission_id" in answer, answer
    assert "Job with submission_id s1 already exists" in answer, answer
    code, jobs = proxied(server, "GET", "/api/jobs/")
    assert code == 200 and [(j["submission_id"], j["entrypoint"]) for j in jobs] == [("s1", "echo first")]


@pytest.mark.parametrize(("length", "status"), [(str((1 << 20) + 1), 413), ("99999999999", 413), ("x", 400)])
def test_a_body_length_over_the_limit_is_refused_before_it_is_read(
    stand_in: tuple[RayHeads, FakeKube, RayHeadServer], length: str, status: int
) -> None:
    """No body is sent: a stand-in that read the announced bytes first would not answer before the timeout."""
    heads, _, server = stand_in
    feed(heads, HEAD)
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=5)
    try:
        conn.putrequest("POST", f"http://{HEAD_HOST}/api/jobs/", skip_accept_encoding=True)
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", length)
        conn.endheaders()
        response = conn.getresponse()
        answer = response.read().decode()
    finally:
        conn.close()
    assert response.status == status, answer
    assert "planb's policy" in answer and length in answer
    assert all(table.list() == [] for table in heads.tables.values())  # nothing was submitted
