"""A region's kubeconfig, read from the manager's MultiKueueCluster Secret, runs nothing and reads nothing local.

Whoever can write a Secret in the manager's ``kueue-system`` namespace writes the kubeconfig `planb status` and
`planb regions keep` reach a region with. Each test hands `region_kube` one hostile kubeconfig and proves what
did not happen: no command ran (a marker file stays absent), no local file went out (the server saw no request),
and no Secret outside the one named was asked for. The servers are on 127.0.0.1, run by the test.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb.errors import PlanbError
from planb.local.tls import ServingCert, ensure_serving_cert
from planb.regions.access.connection import KUEUE, RegionAccessError, region_kube
from planb.regions.access.kubeconfig import RegionKubeconfigError, load_region
from tests.support.integration.loopback_json import empty_json_server

REGION = "us-east5"
SECRET = "us-east5-multikueue"
TOKEN = "region-token-abc"


@dataclass
class Servers:
    """An HTTPS server with a CA of its own and a plain HTTP one; both record every request's path and token."""

    https: str
    http: str
    cert: ServingCert
    seen: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ca_data(self) -> str:
        return base64.b64encode(self.cert.ca_crt.read_bytes()).decode()


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[Servers]:
    seen: list[tuple[str, str]] = []
    cert = ensure_serving_cert(tmp_path / "region-pki", common_name="planb-test-region")
    with empty_json_server(cert, seen) as secure, empty_json_server(None, seen) as plain:
        yield Servers(secure, plain, cert, seen)


def kubeconfig(cluster: dict[str, Any], user: dict[str, Any]) -> bytes:
    """The planb.gke multikueue role's shape, with `cluster` and `user` as given."""
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": REGION, "cluster": cluster}],
            "users": [{"name": f"{REGION}-multikueue", "user": user}],
            "contexts": [{"name": REGION, "context": {"cluster": REGION, "user": f"{REGION}-multikueue"}}],
            "current-context": REGION,
        }
    ).encode()


def good(servers: Servers) -> bytes:
    return kubeconfig({"server": servers.https, "certificate-authority-data": servers.ca_data}, {"token": TOKEN})


class Manager:
    """The manager's API as region_kube reads it: one MultiKueueCluster and, under any Secret name, `secret`."""

    def __init__(self, secret: bytes, source: dict[str, Any] | None = None) -> None:
        self.secret = secret
        self.source = source or {"kubeConfig": {"location": SECRET, "locationType": "Secret"}}
        self.asked: list[str] = []

    def get(self, path: str) -> dict[str, Any] | None:
        self.asked.append(path)
        if path == f"{KUEUE}/multikueueclusters/{REGION}":
            return {"metadata": {"name": REGION}, "spec": {"clusterSource": self.source}}
        if path.startswith("/api/v1/namespaces/"):
            return {"data": {"kubeconfig": base64.b64encode(self.secret).decode()}}
        return None


def attempt(manager: Manager) -> PlanbError | None:
    """What `planb status` does with a region: reach it and read one object; the error, or None when it read."""
    try:
        region_kube(manager, REGION).get("/version")  # type: ignore[arg-type]
    except PlanbError as exc:
        return exc
    return None


def assert_refused(exc: PlanbError | None, *words: str) -> None:
    assert isinstance(exc, RegionAccessError), exc  # the keeper and status go on with the other regions
    assert isinstance(exc.__cause__, RegionKubeconfigError)  # the typed refusal, naming the field
    for word in words:
        assert word in str(exc)
    assert "Fix:" in str(exc)


def test_the_roles_kubeconfig_reaches_the_region_with_its_token_checked_against_its_ca(servers: Servers) -> None:
    assert attempt(Manager(good(servers))) is None
    assert servers.seen == [("/version", f"Bearer {TOKEN}")]


def test_an_exec_plugin_is_refused_and_never_runs(servers: Servers, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    plugin = tmp_path / "plugin.sh"
    plugin.write_text(
        f'#!/bin/sh\ntouch "{marker}"\n'
        'echo \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"x"}}\'\n'
    )
    plugin.chmod(0o755)
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin)}}
    secret = kubeconfig({"server": servers.https, "certificate-authority-data": servers.ca_data}, user)
    assert_refused(attempt(Manager(secret)), "'exec'", SECRET)
    assert not marker.exists()
    assert servers.seen == []


def test_a_token_file_is_refused_and_never_read(servers: Servers, tmp_path: Path) -> None:
    private = tmp_path / "operator-token"
    private.write_text("the-operators-own-token\n")
    secret = kubeconfig(
        {"server": servers.https, "certificate-authority-data": servers.ca_data}, {"tokenFile": str(private)}
    )
    assert_refused(attempt(Manager(secret)), "'tokenFile'")
    assert servers.seen == []  # before the fix: ("/version", "Bearer the-operators-own-token")


def test_a_client_key_file_is_refused_and_never_used(servers: Servers) -> None:
    user = {"client-certificate": str(servers.cert.tls_crt), "client-key": str(servers.cert.tls_key)}
    secret = kubeconfig({"server": servers.https, "certificate-authority-data": servers.ca_data}, user)
    assert_refused(attempt(Manager(secret)), "'client-certificate'", "'client-key'")
    assert servers.seen == []


def test_insecure_skip_tls_verify_is_refused_and_the_token_never_sent(servers: Servers) -> None:
    secret = kubeconfig({"server": servers.https, "insecure-skip-tls-verify": True}, {"token": TOKEN})
    assert_refused(attempt(Manager(secret)), "'insecure-skip-tls-verify'")
    assert servers.seen == []


def test_a_plain_http_server_is_refused_and_the_token_never_sent(servers: Servers) -> None:
    secret = kubeconfig({"server": servers.http, "certificate-authority-data": servers.ca_data}, {"token": TOKEN})
    assert_refused(attempt(Manager(secret)), "https")
    assert servers.seen == []


def test_a_path_location_is_refused_and_the_local_file_never_read(servers: Servers, tmp_path: Path) -> None:
    local = tmp_path / "operator-kubeconfig"
    local.write_bytes(good(servers))
    manager = Manager(b"", {"kubeConfig": {"location": str(local), "locationType": "Path"}})
    exc = attempt(manager)
    assert isinstance(exc, RegionAccessError) and "locationType Path" in str(exc) and "Fix:" in str(exc), exc
    assert servers.seen == []
    assert not any("/secrets/" in asked for asked in manager.asked)


@pytest.mark.parametrize("name", ["../../default/secrets/other", "us-east5/../x", "Us-East5", "a" * 254, ".."])
def test_a_secret_name_that_is_not_a_dns_name_is_refused_before_any_secret_is_asked_for(
    servers: Servers, name: str
) -> None:
    manager = Manager(good(servers), {"kubeConfig": {"location": name, "locationType": "Secret"}})
    exc = attempt(manager)
    assert isinstance(exc, RegionAccessError) and "DNS-1123" in str(exc) and "Fix:" in str(exc), exc
    assert not any("/secrets/" in asked for asked in manager.asked)
    assert servers.seen == []


def test_a_yaml_error_names_the_line_and_column_but_never_quotes_the_secret() -> None:
    secret = b"users:\n- name: u\n  user:\n    token: s3cr3t-region-token: oops\n"
    exc = attempt(Manager(secret))
    assert isinstance(exc, RegionAccessError) and isinstance(exc.__cause__, RegionKubeconfigError), exc
    assert "line 4, column" in str(exc)
    causes = [exc, exc.__cause__, exc.__cause__.__cause__, exc.__cause__.__context__]
    assert not any("s3cr3t" in f"{e} {e!r}" for e in causes if e is not None)


# Every field outside server, certificate-authority-data and token is refused by name, wherever it stands.
CA = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").decode()
CLUSTER = {"server": "https://203.0.113.7", "certificate-authority-data": CA}


@pytest.mark.parametrize(
    ("cluster", "user", "words"),
    [
        (CLUSTER, {"token": TOKEN, "exec": {"command": "true"}}, ["'exec'", "runs a command"]),
        (CLUSTER, {"tokenFile": "/var/run/token"}, ["'tokenFile'"]),
        (CLUSTER, {"token": TOKEN, "client-key-data": CA}, ["'client-key-data'"]),
        (CLUSTER, {"token": TOKEN, "auth-provider": {"name": "gcp"}}, ["'auth-provider'"]),
        (CLUSTER, {"username": "admin", "password": "x"}, ["'password'", "'username'"]),
        (CLUSTER, {"token": TOKEN, "as": "system:admin"}, ["'as'"]),
        (CLUSTER, {}, ["no token"]),
        (CLUSTER, {"token": ""}, ["no token"]),
        ({**CLUSTER, "certificate-authority": "/etc/ca.crt"}, {"token": TOKEN}, ["'certificate-authority'"]),
        ({**CLUSTER, "proxy-url": "http://10.0.0.1:3128"}, {"token": TOKEN}, ["'proxy-url'"]),
        ({"server": "https://203.0.113.7"}, {"token": TOKEN}, ["no certificate-authority-data"]),
        ({**CLUSTER, "certificate-authority-data": "not base64!"}, {"token": TOKEN}, ["certificate-authority-data"]),
        ({**CLUSTER, "server": "HTTP://203.0.113.7"}, {"token": TOKEN}, ["https"]),
        ({**CLUSTER, "server": "https://admin:pw@203.0.113.7"}, {"token": TOKEN}, ["user name or password"]),
        ({**CLUSTER, "server": "https://bad_host.example"}, {"token": TOKEN}, ["host"]),
        ({**CLUSTER, "server": "https://203.0.113.7/?x=1"}, {"token": TOKEN}, ["query"]),
        ({**CLUSTER, "server": ""}, {"token": TOKEN}, ["no server"]),
    ],
)
def test_every_field_but_server_ca_data_and_token_is_refused_by_name(
    cluster: dict[str, Any], user: dict[str, Any], words: list[str]
) -> None:
    with pytest.raises(RegionKubeconfigError) as caught:
        load_region(kubeconfig(cluster, user), "kueue-system/us-east5-multikueue")
    for word in words:
        assert word in str(caught.value)
    assert "kueue-system/us-east5-multikueue" in str(caught.value) and "Fix:" in str(caught.value)


def test_a_field_outside_the_current_context_is_refused_as_well() -> None:
    """Kueue checks every cluster and user of the file, not only the current context's; so does planb."""
    config = yaml.safe_load(kubeconfig(CLUSTER, {"token": TOKEN}))
    config["users"].append({"name": "spare", "user": {"exec": {"command": "sh"}}})
    with pytest.raises(RegionKubeconfigError, match=r"user 'spare' sets 'exec'"):
        load_region(yaml.safe_dump(config).encode(), SECRET)


def test_the_roles_shape_is_one_connection_with_nothing_on_disk() -> None:
    conn = load_region(kubeconfig(CLUSTER, {"token": TOKEN}), SECRET)
    assert (conn.server, conn.token, conn.ca_file, conn.cert_file, conn.token_file) == (
        "https://203.0.113.7",
        TOKEN,
        None,
        None,
        None,
    )
    assert conn.ca_data == base64.b64decode(CA).decode()
    assert conn.exec_plugin is None and not conn.insecure
    assert TOKEN not in repr(conn)  # a repr (a log line, pytest's or a traceback's locals) never shows the token
