"""planb.kube sends a request again when the API server answers 429 with a Retry-After, as client-go does: a server
still loading a resource answers so ("storage is (re)initializing"), and the first call of a test or of `planb
status` on a stack just started met it. A loopback HTTP server stands in for the API server's answers."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from planb.kube import RETRIES_TOO_MANY, Kube, KubeError
from planb.kube_limits import Limits
from planb.kubeconfig import Connection


class Answers(http.server.BaseHTTPRequestHandler):
    """Each request takes the next (status, headers) of `script`; 200 with the object once they are used up."""

    script: ClassVar[list[tuple[int, dict[str, str]]]] = []
    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        Answers.seen.append(self.path)
        status, headers = Answers.script.pop(0) if Answers.script else (200, {})
        body = json.dumps(
            {"kind": "Status", "message": "storage is (re)initializing"} if status != 200 else {"kind": "Namespace"}
        ).encode()
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", **headers}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture()
def kube() -> Iterator[Kube]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answers)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Answers.seen.clear()
    try:
        yield Kube(Path("test"), Connection(server=f"http://127.0.0.1:{server.server_address[1]}"))
    finally:
        server.shutdown()


def test_a_429_with_retry_after_is_sent_again_until_it_is_answered(kube: Kube) -> None:
    Answers.script = [(429, {"Retry-After": "0"}), (429, {"Retry-After": "0.1"})]
    assert kube.get("/api/v1/namespaces/default") == {"kind": "Namespace"}
    assert Answers.seen == ["/api/v1/namespaces/default"] * 3


def test_a_429_without_retry_after_or_past_the_retries_is_the_callers_error(kube: Kube) -> None:
    Answers.script = [(429, {})]
    with pytest.raises(KubeError) as refused:
        kube.get("/api/v1/namespaces/default")
    assert refused.value.status == 429 and "storage is (re)initializing" in str(refused.value)
    assert len(Answers.seen) == 1
    Answers.seen.clear()
    Answers.script = [(429, {"Retry-After": "0"})] * (RETRIES_TOO_MANY + 1)
    with pytest.raises(KubeError) as refused:
        kube.get("/api/v1/namespaces/default")
    assert refused.value.status == 429
    assert len(Answers.seen) == RETRIES_TOO_MANY + 1


def test_another_error_is_not_sent_again(kube: Kube) -> None:
    Answers.script = [(503, {"Retry-After": "0"})]
    with pytest.raises(KubeError) as refused:
        kube.get("/api/v1/namespaces/default")
    assert refused.value.status == 503
    assert len(Answers.seen) == 1


def test_a_limited_client_does_not_send_again(kube: Kube) -> None:
    """A limited client's deadline bounds the whole request to another party's server (a region's): its 429 is the
    caller's, who polls again."""
    limited = Kube(kube.kubeconfig, kube.conn, limits=Limits(deadline_s=10, max_bytes=1 << 20))
    Answers.script = [(429, {"Retry-After": "0"})]
    with pytest.raises(KubeError) as refused:
        limited.get("/api/v1/namespaces/default")
    assert refused.value.status == 429
    assert len(Answers.seen) == 1
