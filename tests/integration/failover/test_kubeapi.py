"""The failover controller's standard-library API client on the wire: a real HTTP(S) server on loopback.

What the server receives (method, path, headers, body) is what an API server would; its answers are
shaped as the API server's (a List, a metav1.Status on errors).
"""

from __future__ import annotations

import http.server
import json
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from planb.failover.kubeapi import JSON_PATCH, ApiError, Credentials, CredentialsError, KubeApi


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    #: The client's port: one per connection.
    port: int = 0


@dataclass
class Server:
    url: str
    seen: list[Seen] = field(default_factory=list)
    #: path -> (status, JSON answer); anything else: 200 {"kind": "Echo"}.
    answers: dict[str, tuple[int, Any]] = field(default_factory=dict)


def serve(tls: tuple[Path, Path] | None = None, keep_alive: bool = False) -> Iterator[Server]:
    """A server on loopback; with `keep_alive` it speaks HTTP/1.1 and keeps each connection (as an API server does)."""
    state = Server(url="")

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

        def handle_any(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            state.seen.append(Seen(self.command, self.path, dict(self.headers), body, self.client_address[1]))
            status, answer = state.answers.get(self.path, (200, {"kind": "Echo"}))
            body = json.dumps(answer).encode()
            self.send_response(status)
            if 300 <= status < 400:
                self.send_header("Location", state.url + answer["location"])
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_PATCH = do_POST = handle_any

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    scheme = "http"
    if tls is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(tls[0]), str(tls[1]))
        server.socket = context.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    state.url = f"{scheme}://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture()
def server() -> Iterator[Server]:
    yield from serve()


@pytest.fixture()
def token(tmp_path: Path) -> Path:
    file = tmp_path / "token"
    file.write_text("first-token\n")
    return file


def test_each_call_sends_the_api_servers_method_path_and_content_type(server: Server, token: Path) -> None:
    api = KubeApi(Credentials(server.url, token))
    api.get("kueue.x-k8s.io", "v1beta2", "workloads", "team-a", "rayjob-job-1-8c6f2")
    api.list_objects("ray.io", "v1", "rayjobs", "team-a")
    api.list_objects("kueue.x-k8s.io", "v1beta2", "workloads", "")
    api.get("kueue.x-k8s.io", "v1beta2", "resourceflavors", "", "on-demand")
    ops = [{"op": "test", "path": "/metadata/resourceVersion", "value": "7"}]
    api.json_patch("ray.io", "v1", "rayjobs", "team-a", "job-1", ops)
    api.create_event("team-a", {"kind": "Event"})
    assert [(s.method, s.path, s.headers.get("Content-Type"), s.body) for s in server.seen] == [
        ("GET", "/apis/kueue.x-k8s.io/v1beta2/namespaces/team-a/workloads/rayjob-job-1-8c6f2", None, None),
        ("GET", "/apis/ray.io/v1/namespaces/team-a/rayjobs", None, None),
        ("GET", "/apis/kueue.x-k8s.io/v1beta2/workloads", None, None),
        ("GET", "/apis/kueue.x-k8s.io/v1beta2/resourceflavors/on-demand", None, None),
        ("PATCH", "/apis/ray.io/v1/namespaces/team-a/rayjobs/job-1", JSON_PATCH, ops),
        ("POST", "/api/v1/namespaces/team-a/events", "application/json", {"kind": "Event"}),
    ]


def test_the_token_file_is_read_again_for_every_request(server: Server, token: Path) -> None:
    api = KubeApi(Credentials(server.url, token))
    api.list_objects("ray.io", "v1", "rayjobs", "default")
    token.write_text("rotated-token")  # the kubelet rotates a bound ServiceAccount token in place
    api.list_objects("ray.io", "v1", "rayjobs", "default")
    assert [s.headers["Authorization"] for s in server.seen] == ["Bearer first-token", "Bearer rotated-token"]


def test_an_error_status_is_raised_with_the_api_servers_reason(server: Server, token: Path) -> None:
    path = "/apis/ray.io/v1/namespaces/kube-system/rayjobs/job-1"
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": 'rayjobs.ray.io "job-1" is forbidden: User "system:serviceaccount:default:queues-failover" '
        'cannot patch resource "rayjobs" in API group "ray.io" in the namespace "kube-system"',
        "reason": "Forbidden",
        "code": 403,
    }
    server.answers[path] = (403, status)
    with pytest.raises(ApiError) as refused:
        KubeApi(Credentials(server.url, token)).json_patch("ray.io", "v1", "rayjobs", "kube-system", "job-1", [])
    assert (refused.value.status, refused.value.reason) == (403, "Forbidden")
    assert "cannot patch resource" in refused.value.body


def test_an_unreachable_server_is_status_0(token: Path) -> None:
    with socket_closed() as url, pytest.raises(ApiError) as failed:
        KubeApi(Credentials(url, token), timeout=5).list_objects("ray.io", "v1", "rayjobs", "default")
    assert failed.value.status == 0


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_is_refused_and_the_token_goes_nowhere_else(server: Server, token: Path, status: int) -> None:
    path = "/apis/ray.io/v1/namespaces/default/rayjobs"
    server.answers[path] = (status, {"location": "/stolen"})
    with pytest.raises(ApiError) as refused:
        KubeApi(Credentials(server.url, token)).list_objects("ray.io", "v1", "rayjobs", "default")
    assert refused.value.status == status and "redirect" in refused.value.reason and "refused" in refused.value.reason
    assert [seen.path for seen in server.seen] == [path]  # /stolen never asked, with or without the token


@pytest.mark.parametrize(
    "url", ["http://10.0.0.1:6443", "http://kubernetes.default.svc", "http://127.0.0.1.nip.io:80", "ftp://127.0.0.1"]
)
def test_plain_http_to_anything_but_loopback_is_refused_before_a_request(token: Path, url: str) -> None:
    with pytest.raises(CredentialsError) as refused:
        KubeApi(Credentials(url, token))
    assert "planb's policy" in str(refused.value) and url in str(refused.value) and "https://" in str(refused.value)


@pytest.mark.parametrize("url", ["http://127.0.0.1:1", "http://[::1]:1", "http://localhost:1", "https://10.0.0.1:6443"])
def test_https_anywhere_and_http_to_loopback_are_accepted(token: Path, url: str) -> None:
    assert KubeApi(Credentials(url, token)).credentials.server == url


def test_the_controller_exits_naming_a_refused_server(token: Path) -> None:
    argv = ["--server", "http://10.0.0.1:6443", "--token-file", str(token), "--after-seconds", "8"]
    argv += ["--cluster-queues", "planb"]
    done = subprocess.run(
        [sys.executable, "-m", "planb.failover", *argv], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode != 0 and "http://10.0.0.1:6443" in done.stderr and "Traceback" not in done.stderr, (
        done.stderr
    )


class socket_closed:
    """A loopback URL where nothing listens."""

    def __enter__(self) -> str:
        import socket

        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        sock.close()
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *_: object) -> None:
        return None


@pytest.fixture()
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


def test_https_trusts_the_given_ca_file_and_nothing_else(certificate: tuple[Path, Path], token: Path) -> None:
    for state in serve(certificate):
        trusted = KubeApi(Credentials(state.url, token, ca_file=certificate[0]))
        assert trusted.list_objects("ray.io", "v1", "rayjobs", "default") == {"kind": "Echo"}
        with pytest.raises(ApiError) as untrusted:
            KubeApi(Credentials(state.url, token)).list_objects("ray.io", "v1", "rayjobs", "default")
        assert untrusted.value.status == 0
        assert "CERTIFICATE_VERIFY_FAILED" in untrusted.value.body
        assert len(state.seen) == 1


def test_in_cluster_credentials_are_the_pods_service_account(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("t")
    env = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    assert Credentials.in_cluster(env, tmp_path) == Credentials(
        "https://10.96.0.1:443", tmp_path / "token", tmp_path / "ca.crt"
    )
    env6 = {"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443"}
    assert Credentials.in_cluster(env6, tmp_path).server == "https://[fd00::1]:443"
    with pytest.raises(CredentialsError, match="--server, --token-file and --ca-file"):
        Credentials.in_cluster({}, tmp_path)


PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")


def test_requests_share_one_kept_connection_opened_again_once_the_server_drops_it(
    token: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in PROXIES:
        monkeypatch.delenv(name, raising=False)
    served = serve(keep_alive=True)
    server = next(served)
    try:
        api = KubeApi(Credentials(server.url, token))
        assert api.direct
        for _ in range(3):
            api.list_objects("kueue.x-k8s.io", "v1beta2", "workloads", "team-a")
        assert len({seen.port for seen in server.seen}) == 1  # one connection, one TLS handshake on an API server
        assert api.connection is not None and api.connection.sock is not None
        api.connection.sock.shutdown(socket.SHUT_RDWR)  # as an API server's restart leaves it
        api.json_patch("ray.io", "v1", "rayjobs", "team-a", "job-1", [])
        assert [seen.method for seen in server.seen] == ["GET", "GET", "GET", "PATCH"]  # the patch sent once
        assert len({seen.port for seen in server.seen}) == 2
    finally:
        served.close()


def test_through_a_proxy_the_environment_names_the_requests_go_by_urllib(
    server: Server, token: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in PROXIES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", server.url)  # `server` stands in for the proxy
    api = KubeApi(Credentials("http://127.0.0.1:1", token))
    assert not api.direct
    api.list_objects("ray.io", "v1", "rayjobs", "default")
    assert [seen.path for seen in server.seen] == ["http://127.0.0.1:1/apis/ray.io/v1/namespaces/default/rayjobs"]
