"""The emulator answers only loopback-addressed requests and reads writes only as JSON, on every path."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planb.local.gke_emulator.emulator import RunningEmulator
from planb.local.gke_emulator.store import list_clusters

PROJECT, LOCATION = "planb-test", "us-east5-b"
CLUSTERS = f"/v1/projects/{PROJECT}/locations/{LOCATION}/clusters"
KUBECONFIG_ROUTE = f"/planb/v1/projects/{PROJECT}/locations/{LOCATION}/clusters/c/kubeconfig"
#: What the local stack's kubeconfig would carry: the admin's client key.
SECRET = "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tc2VjcmV0"


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[RunningEmulator]:
    """The emulator with a local stack's kubeconfig to hand out, so the kubeconfig route has something to leak."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: planb\n"
        "clusters: [{name: planb, cluster: {server: 'https://127.0.0.1:26443'}}]\n"
        "contexts: [{name: planb, context: {cluster: planb, user: planb}}]\n"
        f"users: [{{name: planb, user: {{client-key-data: {SECRET}}}}}]\n"
    )
    running = RunningEmulator(tmp_path / "state", port=0, op_seconds=0.0, kubeconfig=kubeconfig)
    yield running
    running.stop()


def _send(
    emulator: RunningEmulator,
    method: str,
    path: str,
    host: str | None = None,
    body: bytes | None = None,
    content_type: str | None = None,
) -> tuple[int, str]:
    """(status, answer text) of one raw request with exactly the Host and Content-Type given."""
    port = emulator.server.server_address[1]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host if host is not None else f"127.0.0.1:{port}")
        if content_type is not None:
            conn.putheader("Content-Type", content_type)
        conn.putheader("Content-Length", str(len(body or b"")))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def _create(emulator: RunningEmulator, **kwargs: Any) -> tuple[int, str]:
    body = json.dumps({"cluster": {"name": "c", "initialClusterVersion": "1.34"}}).encode()
    return _send(emulator, "POST", CLUSTERS, body=body, **kwargs)


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "127.0.0.1.nip.io", "10.0.0.1", ""])
def test_a_foreign_host_header_is_refused_on_the_api(emulator: RunningEmulator, host: str) -> None:
    status, answer = _send(emulator, "GET", CLUSTERS, host=host)
    assert status == 403, answer
    error = json.loads(answer)["error"]
    assert error["status"] == "PERMISSION_DENIED"
    assert "planb's policy" in error["message"] and "DNS rebinding" in error["message"], error


def test_a_foreign_host_header_gets_no_kubeconfig(emulator: RunningEmulator) -> None:
    assert _create(emulator, content_type="application/json")[0] == 200
    status, answer = _send(emulator, "GET", KUBECONFIG_ROUTE)
    assert status == 200 and SECRET in answer, answer  # served to a loopback name
    status, answer = _send(emulator, "GET", KUBECONFIG_ROUTE, host="attacker.example")
    assert status == 403 and SECRET not in answer, answer


def test_a_foreign_host_header_cannot_inject_faults(emulator: RunningEmulator) -> None:
    body = json.dumps({"status": 503, "count": 5}).encode()
    status, _ = _send(
        emulator, "POST", "/planb/v1/http-faults", host="x.example", body=body, content_type="application/json"
    )
    assert status == 403
    assert emulator.store.http_faults == []


def test_loopback_names_are_served(emulator: RunningEmulator) -> None:
    port = emulator.server.server_address[1]
    for host in (f"127.0.0.1:{port}", "127.0.0.1", f"localhost:{port}", "LOCALHOST", f"[::1]:{port}", "[::1]"):
        status, answer = _send(emulator, "GET", CLUSTERS, host=host)
        assert status == 200, (host, answer)


@pytest.mark.parametrize(
    "content_type", [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]
)
def test_a_write_that_is_not_json_is_refused_and_changes_nothing(
    emulator: RunningEmulator, content_type: str | None
) -> None:
    status, answer = _create(emulator, content_type=content_type)
    assert status == 415, answer
    message = json.loads(answer)["error"]["message"]
    assert "planb's policy" in message and "Content-Type: application/json" in message, message
    assert list_clusters(emulator.store.root.parent) == []


def test_a_json_write_is_served_with_or_without_parameters(emulator: RunningEmulator) -> None:
    assert _create(emulator, content_type="application/json; charset=UTF-8")[0] == 200
    assert [c["name"] for c in list_clusters(emulator.store.root.parent)] == ["c"]
    # A write without a body (DELETE, or a POST with none) needs no Content-Type.
    status, answer = _send(emulator, "DELETE", f"{CLUSTERS}/c")
    assert status == 200, answer
