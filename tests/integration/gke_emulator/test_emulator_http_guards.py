"""The emulator answers only loopback-addressed requests, takes writes only as JSON (with a body or without one) and
reads no body longer than it allows, on every path, before it reads the body."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planb.local.gke_emulator import guards
from planb.local.gke_emulator.emulator import RunningEmulator
from planb.local.gke_emulator.store import list_clusters, list_node_pools

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
    content_length: str | None = None,
) -> tuple[int, str]:
    """(status, answer text) of one raw request with exactly the Host, Content-Type and Content-Length given (the
    body's own length unless `content_length` says otherwise; then no body is sent)."""
    port = emulator.server.server_address[1]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host if host is not None else f"127.0.0.1:{port}")
        if content_type is not None:
            conn.putheader("Content-Type", content_type)
        conn.putheader("Content-Length", content_length if content_length is not None else str(len(body or b"")))
        conn.endheaders(body if content_length is None else None)
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
    # A DELETE has no body and needs no Content-Type.
    status, answer = _send(emulator, "DELETE", f"{CLUSTERS}/c")
    assert status == 200, answer


def _cluster_with_pool(emulator: RunningEmulator) -> str:
    """A cluster `c` with a one-node pool `np`; the pool's path."""
    body = {
        "cluster": {
            "name": "c",
            "initialClusterVersion": "1.34",
            "nodePools": [{"name": "np", "initialNodeCount": 1, "config": {"machineType": "e2-standard-4"}}],
        }
    }
    status, answer = _send(emulator, "POST", CLUSTERS, body=json.dumps(body).encode(), content_type="application/json")
    assert status == 200, answer
    return f"{CLUSTERS}/c/nodePools/np"


def _pool_size(emulator: RunningEmulator) -> int:
    (pool,) = list_node_pools(emulator.store.root.parent)
    return int(pool["initialNodeCount"])


@pytest.mark.parametrize("content_type", [None, "text/plain"])
def test_a_bodyless_post_is_refused_and_changes_nothing(emulator: RunningEmulator, content_type: str | None) -> None:
    """A web page can send a bodyless POST to a loopback listener without a preflight: it must not scale a pool to
    0 or arm a fault."""
    pool = _cluster_with_pool(emulator)
    assert _pool_size(emulator) == 1
    status, answer = _send(emulator, "POST", f"{pool}:setSize", content_type=content_type)
    assert status == 415, answer
    assert "planb's policy" in json.loads(answer)["error"]["message"]
    assert _pool_size(emulator) == 1
    status, answer = _send(emulator, "POST", "/planb/v1/faults", content_type=content_type)
    assert status == 415, answer
    assert emulator.store.faults == []
    # The same setSize as JSON is served: the refusal is the missing media type, not the call.
    status, answer = _send(
        emulator, "POST", f"{pool}:setSize", body=b'{"nodeCount": 0}', content_type="application/json"
    )
    assert status == 200, answer


@pytest.mark.parametrize(
    ("length", "status"), [(str(guards.MAX_BODY_BYTES + 1), 413), ("10000000000", 413), ("-1", 400), ("x", 400)]
)
def test_a_body_length_over_the_limit_is_refused_before_it_is_read(
    emulator: RunningEmulator, length: str, status: int
) -> None:
    """No body is sent: an emulator that tried to read the announced bytes first would not answer in time."""
    answer_status, answer = _send(emulator, "POST", CLUSTERS, content_type="application/json", content_length=length)
    assert answer_status == status, answer
    assert list_clusters(emulator.store.root.parent) == []
