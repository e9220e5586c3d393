"""The GKE client's transport against the real emulator: injected HTTP errors, redirects, restarts, tokens.

A Google credential is only ever sent over https, so the tests that hand the client one (a fixed access token, a
refreshed one) run the emulator over HTTPS with a CA of the test's own, which the client trusts through
SSL_CERT_FILE.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

import pytest

from planb.local.gke_emulator.emulator import RunningEmulator
from planb.local.tls import ServingCert, ensure_serving_cert
from tests.support.integration.gke.modules import CLUSTER_ARGS, ModuleRunner, load_module

load_module("gke_cluster")  # puts the checkout's collection on the import path
from ansible_collections.planb.gke.plugins.module_utils import client as client_module  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.client import GkeClient  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError  # noqa: E402


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real backoff (1 s doubling to 30 s) shrunk so the tests run fast; the tries stay bounded."""
    monkeypatch.setattr(GkeClient, "BACKOFF_BASE_S", 0.05)
    monkeypatch.setattr(GkeClient, "BACKOFF_MAX_S", 0.4)


@pytest.fixture
def serving_cert(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ServingCert:
    """A CA and a 127.0.0.1 serving pair; the client (ansible's open_url) trusts the CA through SSL_CERT_FILE."""
    cert = ensure_serving_cert(tmp_path / "tls", common_name="planb-test-gke")
    monkeypatch.setenv("SSL_CERT_FILE", str(cert.ca_crt))
    return cert


@pytest.fixture
def tls_emulator(tmp_path: Path, serving_cert: ServingCert) -> Iterator[RunningEmulator]:
    """The emulator over HTTPS: where a client may send a Google credential."""
    running = RunningEmulator(
        tmp_path / "tls-state", op_seconds=0.05, kubeconfig=tmp_path / "no-local-stack", tls=serving_cert
    )
    yield running
    running.stop()


@pytest.fixture
def tls_modules(tls_emulator: RunningEmulator) -> ModuleRunner:
    return ModuleRunner(tls_emulator)


def _statuses(emulator: RunningEmulator, method: str | None = None) -> list[int]:
    return [r["status"] for r in emulator.store.request_log() if method in (None, r["method"])]


@pytest.mark.parametrize("status", [503, 429, 500])
def test_reads_are_retried_on_server_errors(modules: ModuleRunner, emulator: RunningEmulator, status: int) -> None:
    emulator.engine.add_http_fault({"status": status, "count": 2, "method": "GET"})
    created = modules.run("gke_cluster", CLUSTER_ARGS)
    assert created["changed"] and created["cluster"]["status"] == "RUNNING"
    assert _statuses(emulator, "GET")[:3] == [status, status, 404]
    assert _statuses(emulator, "POST") == [200]


def test_retries_are_bounded(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    emulator.engine.add_http_fault({"status": 503, "count": 100, "method": "GET"})
    failed = modules.fail("gke_cluster", CLUSTER_ARGS)
    assert "503 UNAVAILABLE" in failed["msg"] and f"after {GkeClient.MAX_TRIES} tries" in failed["msg"], failed["msg"]
    assert _statuses(emulator) == [503] * GkeClient.MAX_TRIES


def test_a_write_answered_503_is_not_repeated(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    emulator.engine.add_http_fault({"status": 503, "count": 1, "method": "POST"})
    failed = modules.fail("gke_cluster", CLUSTER_ARGS)
    assert "Not retried: GKE may have applied the write" in failed["msg"], failed["msg"]
    assert _statuses(emulator, "POST") == [503]
    assert modules.run("gke_cluster", CLUSTER_ARGS)["changed"]  # the re-run converges


def test_a_write_is_retried_when_the_connection_was_refused(tmp_path: Path) -> None:
    # Nothing listens: the request never left, so even a POST may be tried again (and is, a bounded number of times).
    emulator = RunningEmulator(tmp_path / "state", op_seconds=0.0, kubeconfig=tmp_path / "none")
    url = emulator.url
    emulator.stop()
    client = GkeClient({"api_endpoint": url, "auth_kind": "none", "timeout": 5, "poll_interval": 0.05})
    with pytest.raises(GkeError, match=f"Cannot reach the GKE API at {url}"):
        client.request("POST", "projects/planb-test/locations/us-east5-b/clusters", {"cluster": {"name": "c"}})
    assert [r["try"] for r in client.retries] == list(range(1, GkeClient.MAX_TRIES))


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, str]]] = []

    def do_GET(self) -> None:
        _Recorder.seen.append(dict(self.headers))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    do_POST = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def elsewhere() -> Iterator[str]:
    """Another server, the target of a redirect: it records every request it gets."""
    _Recorder.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("status", [302, 307])
def test_redirects_are_not_followed_so_the_token_stays_put(
    tls_modules: ModuleRunner, tls_emulator: RunningEmulator, elsewhere: str, status: int
) -> None:
    tls_emulator.engine.add_http_fault({"status": status, "count": 1, "location": f"{elsewhere}/v1/steal"})
    args = {**CLUSTER_ARGS, "auth_kind": "accesstoken", "access_token": "secret-token"}
    failed = tls_modules.fail("gke_cluster", args)
    assert f"answered a redirect ({status}) to {elsewhere}/v1/steal" in failed["msg"], failed["msg"]
    assert _Recorder.seen == []


def test_plain_http_is_refused_unless_loopback(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    args = {**CLUSTER_ARGS, "auth_kind": "accesstoken", "access_token": "t", "api_endpoint": "http://192.0.2.10:8765"}
    failed = modules.fail("gke_cluster", args)
    assert "plain http:// to a non-loopback address" in failed["msg"] and "planb's policy" in failed["msg"]
    with pytest.raises(GkeError, match="only a loopback address may use http"):
        GkeClient({"api_endpoint": "http://gke.example:80", "auth_kind": "none", "timeout": 1, "poll_interval": 1})


@pytest.mark.parametrize(
    ("auth_kind", "extra"),
    [("accesstoken", {"access_token": "secret-token"}), ("application", {}), ("machineaccount", {})],
)
def test_a_google_credential_is_never_sent_over_http_even_to_loopback(
    modules: ModuleRunner, emulator: RunningEmulator, adc: None, auth_kind: str, extra: dict[str, Any]
) -> None:
    failed = modules.fail("gke_cluster", {**CLUSTER_ARGS, "auth_kind": auth_kind, **extra})
    assert f"is plain http:// and auth_kind is {auth_kind}: refused by planb's policy" in failed["msg"], failed["msg"]
    assert "use auth_kind: none against the local GKE emulator" in failed["msg"], failed["msg"]
    assert emulator.store.request_log() == []  # refused before any request
    # The client refuses it too, for every endpoint it is given (Service Usage, Compute), before any request.
    params = {"api_endpoint": emulator.url, "auth_kind": auth_kind, "timeout": 1, "poll_interval": 1, **extra}
    with pytest.raises(GkeError, match="a Google access token is never sent over http"):
        GkeClient(params)
    assert emulator.store.request_log() == []


def test_a_google_credential_is_sent_over_https_to_loopback(
    tls_modules: ModuleRunner, tls_emulator: RunningEmulator
) -> None:
    assert tls_emulator.url.startswith("https://127.0.0.1:")
    created = tls_modules.run("gke_cluster", {**CLUSTER_ARGS, "auth_kind": "accesstoken", "access_token": "t"})
    assert created["changed"] and created["cluster"]["status"] == "RUNNING"


class _Tokens:
    """Stands in for google-auth: hands out numbered tokens that expire ``lifetime`` seconds after issue."""

    def __init__(self, lifetime: float) -> None:
        self.lifetime = lifetime
        self.issued: list[str] = []

    def __call__(self, params: dict[str, Any]) -> tuple[str, float, None]:
        self.issued.append(f"token-{len(self.issued) + 1}")
        return self.issued[-1], time.time() + self.lifetime, None


@pytest.fixture
def adc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Application Default Credentials present, so auth_kind=application passes its preflight."""
    key = tmp_path / "adc.json"
    key.write_text("{}")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key))


def test_a_401_refreshes_the_token_once(
    tls_modules: ModuleRunner, tls_emulator: RunningEmulator, monkeypatch: pytest.MonkeyPatch, adc: None
) -> None:
    tokens = _Tokens(lifetime=3600)
    monkeypatch.setattr(client_module, "google_token", tokens)
    tls_emulator.engine.add_http_fault({"status": 401, "count": 1})
    assert tls_modules.run("gke_cluster", {**CLUSTER_ARGS, "auth_kind": "application"})["changed"]
    assert tokens.issued == ["token-1", "token-2"]
    tls_emulator.engine.add_http_fault({"status": 401, "count": 2})
    failed = tls_modules.fail("gke_cluster_info", {"name": CLUSTER_ARGS["name"], "auth_kind": "application"})
    assert "401 UNAUTHENTICATED" in failed["msg"] and "even after a refresh" in failed["msg"], failed["msg"]


def test_a_fixed_access_token_says_it_cannot_be_renewed(
    tls_modules: ModuleRunner, tls_emulator: RunningEmulator
) -> None:
    tls_emulator.engine.add_http_fault({"status": 401, "count": 1})
    failed = tls_modules.fail("gke_cluster", {**CLUSTER_ARGS, "auth_kind": "accesstoken", "access_token": "old"})
    assert "a fixed access_token cannot be renewed" in failed["msg"], failed["msg"]


def test_the_token_is_renewed_before_it_expires_during_a_long_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, adc: None, serving_cert: ServingCert
) -> None:
    # Tokens that fall within the refresh margin 0.3 s after issue; the create takes 1.5 s.
    tokens = _Tokens(lifetime=GkeClient.TOKEN_MARGIN_S + 0.3)
    monkeypatch.setattr(client_module, "google_token", tokens)
    emulator = RunningEmulator(tmp_path / "state", op_seconds=1.5, kubeconfig=tmp_path / "none", tls=serving_cert)
    try:
        result = ModuleRunner(emulator).run("gke_cluster", {**CLUSTER_ARGS, "auth_kind": "application"})
    finally:
        emulator.stop()
    assert result["changed"] and result["cluster"]["status"] == "RUNNING"
    assert len(tokens.issued) >= 3, tokens.issued


@pytest.fixture
def user_adc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An authorized_user ADC file, as `gcloud auth application-default login` writes it, read by the real
    google.auth.default(); only the token exchange with Google's token endpoint is stood in for."""
    from google.oauth2 import credentials as user_credentials

    def refresh(self: Any, request: Any) -> None:
        self.token, self.expiry = "user-token", datetime.now(UTC).replace(tzinfo=None) + timedelta(hours=1)

    monkeypatch.setattr(user_credentials.Credentials, "refresh", refresh)
    monkeypatch.delenv("GOOGLE_CLOUD_QUOTA_PROJECT", raising=False)
    path = tmp_path / "application_default_credentials.json"
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    return path


def _write_user_adc(path: Path, **extra: str) -> None:
    body = {"type": "authorized_user", "client_id": "planb-test", "client_secret": "s", "refresh_token": "r", **extra}
    path.write_text(json.dumps(body))


def test_the_adc_quota_project_goes_with_every_request(
    tls_modules: ModuleRunner, tls_emulator: RunningEmulator, user_adc: Path
) -> None:
    # `gcloud auth application-default set-quota-project planb-billing` writes quota_project_id into the ADC file;
    # Google's client libraries then send x-goog-user-project (https://cloud.google.com/apis/docs/system-parameters).
    _write_user_adc(user_adc, quota_project_id="planb-billing")
    application = {"auth_kind": "application"}
    assert tls_modules.run("gke_cluster", {**CLUSTER_ARGS, **application})["changed"]
    quota = {"location": "us-east5-b", "machine_type": "ct6e-standard-4t", "needed": 16, **application}
    assert tls_modules.run("gcp_quota_check", quota)["checked"]
    log = tls_emulator.store.request_log()
    assert {r["path"].split("/")[1] for r in log} == {"v1", "cloudquotas"}
    assert [r.get("userProject") for r in log] == ["planb-billing"] * len(log)
    # The quota_project option (GOOGLE_CLOUD_QUOTA_PROJECT) names another one.
    tls_modules.run("gke_cluster_info", {"name": CLUSTER_ARGS["name"], "quota_project": "planb-other", **application})
    assert tls_emulator.store.request_log()[len(log) :][0]["userProject"] == "planb-other"
    bad = tls_modules.fail("gke_cluster_info", {"name": "c", "quota_project": "Not A Project", **application})
    assert "is not a Google Cloud project ID or number" in bad["msg"], bad["msg"]


def test_no_quota_project_sends_no_header(
    tls_modules: ModuleRunner, tls_emulator: RunningEmulator, user_adc: Path
) -> None:
    _write_user_adc(user_adc)
    assert tls_modules.run("gke_cluster", {**CLUSTER_ARGS, "auth_kind": "application"})["changed"]
    log = tls_emulator.store.request_log()
    assert log and [r for r in log if "userProject" in r] == []


def test_an_emulator_restart_during_an_operation_wait_is_ridden_out(tmp_path: Path) -> None:
    # The module waits for a 2 s create; meanwhile (after the POST) the API goes away for ~0.7 s and comes back on
    # the same port with the same state (like a GKE front end restarting): the polls retry and the wait completes.
    state = tmp_path / "state"
    first = RunningEmulator(state, op_seconds=2.0, kubeconfig=tmp_path / "none")
    port = first.server.server_address[1]
    restarted: list[RunningEmulator] = []

    def restart() -> None:
        # Once the create was accepted (it is in the request log), so the restart falls into the operation wait,
        # never onto the POST itself (which the module rightly does not send twice).
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(r["method"] == "POST" for r in first.store.request_log()):
            time.sleep(0.05)
        time.sleep(0.2)
        first.stop()
        time.sleep(0.7)
        restarted.append(RunningEmulator(state, port=port, op_seconds=2.0, kubeconfig=tmp_path / "none"))

    thread = threading.Thread(target=restart)
    thread.start()
    try:
        result = ModuleRunner(first).run("gke_cluster", CLUSTER_ARGS)
    finally:
        thread.join()
        for emulator in restarted:
            emulator.stop()
    assert result["changed"] and result["cluster"]["status"] == "RUNNING"
    assert result["operations"][0]["status"] == "DONE"
    assert restarted and [r["method"] for r in restarted[0].store.request_log()].count("GET") >= 2
