"""Talking to the GKE emulator's HTTP API as a client that sends raw GKE v1 bodies (gcloud, curl) would."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any

from planb.local.gke_emulator.emulator import RunningEmulator

Body = dict[str, Any]


def call(emulator: RunningEmulator, method: str, path: str, body: Body | None = None) -> tuple[int, Body]:
    """(HTTP status, JSON answer) of one request; errors are answers too."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{emulator.url}{path}", data=data, method=method)
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def wait_done(emulator: RunningEmulator, location_path: str, operation: Body, timeout: float = 10) -> Body:
    """Poll an operation (``/v1/<location_path>/operations/<name>``) until DONE; its final body."""
    deadline = time.monotonic() + timeout
    while True:
        status, op = call(emulator, "GET", f"/v1/{location_path}/operations/{operation['name']}")
        assert status == 200, op
        if op["status"] == "DONE" or time.monotonic() > deadline:
            return op
        time.sleep(0.02)


def create(emulator: RunningEmulator, location_path: str, path: str, body: Body) -> Body:
    """POST a create, assert GKE accepted it and the operation finished without error; the operation."""
    status, answer = call(emulator, "POST", f"/v1/{path}", body)
    assert status == 200, answer
    op = wait_done(emulator, location_path, answer)
    assert op["status"] == "DONE" and "error" not in op, op
    return op


def refused(emulator: RunningEmulator, path: str, body: Body) -> str:
    """POST a create that GKE must refuse with 400 INVALID_ARGUMENT; the error message."""
    status, answer = call(emulator, "POST", f"/v1/{path}", body)
    assert status == 400, answer
    assert answer["error"]["status"] == "INVALID_ARGUMENT", answer
    return str(answer["error"]["message"])


def workload_policy(emulator: RunningEmulator, project: str, region: str, name: str, topology: str) -> Body:
    """Insert a HIGH_THROUGHPUT workload policy of `topology` (Compute's resourcePolicies.insert); its body."""
    path = f"/compute/v1/projects/{project}/regions/{region}/resourcePolicies"
    body = {"name": name, "workloadPolicy": {"type": "HIGH_THROUGHPUT", "acceleratorTopology": topology}}
    status, answer = call(emulator, "POST", path, body)
    assert status == 200 and answer["status"] == "DONE", answer
    status, policy = call(emulator, "GET", f"{path}/{name}")
    assert status == 200, policy
    return policy
