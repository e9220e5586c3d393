"""planb.kubeconfig: the current context's server and credentials, as kubectl reads a kubeconfig; planb.kube
checks the API server's certificate against the CA it names."""

from __future__ import annotations

import base64
import json
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from planb.kube import Kube, KubeError
from planb.kubeconfig import KubeconfigError, _data_file, load
from planb.local.tls import ServingCert, ensure_serving_cert
from tests.support.integration.loopback_json import empty_json_server


def _write(tmp_path: Path, user: dict[str, object], cluster: dict[str, object] | None = None) -> Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "here",
        "contexts": [{"name": "here", "context": {"cluster": "c", "user": "u"}}, {"name": "other", "context": {}}],
        "clusters": [{"name": "c", "cluster": cluster or {"server": "https://127.0.0.1:6443/"}}],
        "users": [{"name": "u", "user": user}],
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


def test_client_certificate_files_are_taken_as_they_are(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {"client-certificate": "pki/admin.crt", "client-key": "/abs/admin.key"},
        {"server": "https://127.0.0.1:6443/", "certificate-authority": "/abs/ca.crt"},
    )
    conn = load(path)
    assert (conn.server, conn.ca_file, conn.key_file) == ("https://127.0.0.1:6443", "/abs/ca.crt", "/abs/admin.key")
    assert conn.cert_file == str(tmp_path / "pki" / "admin.crt")  # relative to the kubeconfig, as kubectl
    assert conn.bearer() == ""


def test_data_fields_become_private_files(tmp_path: Path) -> None:
    pem = b"-----BEGIN CERTIFICATE-----\nxyz\n-----END CERTIFICATE-----\n"
    path = _write(
        tmp_path,
        {"client-certificate-data": base64.b64encode(pem).decode(), "client-key-data": base64.b64encode(b"k").decode()},
        {"server": "https://10.0.0.1", "certificate-authority-data": base64.b64encode(b"ca").decode()},
    )
    conn = load(path)
    assert conn.cert_file is not None and conn.key_file is not None and conn.ca_file is not None
    assert Path(conn.cert_file).read_bytes() == pem
    assert Path(conn.ca_file).read_bytes() == b"ca"
    assert stat.S_IMODE(Path(conn.key_file).stat().st_mode) == 0o600
    assert stat.S_IMODE(Path(conn.key_file).parent.stat().st_mode) == 0o700


def test_token_and_token_file(tmp_path: Path) -> None:
    assert load(_write(tmp_path, {"token": "abc"})).bearer() == "abc"
    token_file = tmp_path / "token"
    token_file.write_text("first\n")
    conn = load(_write(tmp_path, {"tokenFile": str(token_file)}))
    assert conn.bearer() == "first"
    token_file.write_text("rotated\n")
    assert conn.bearer() == "rotated"


def test_exec_plugin_token_is_cached_until_refresh(tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    plugin = tmp_path / "plugin.sh"
    credential = {"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": {}}
    plugin.write_text(
        "#!/bin/sh\n"
        f'echo run >> "{counter}"\n'
        'test -n "$KUBERNETES_EXEC_INFO" || exit 3\n'
        f'printf \'%s\' \'{json.dumps(credential)}\' | sed "s/{{}}/{{\\"token\\": \\"tok-$PLANB_SUFFIX\\"}}/"\n'
    )
    plugin.chmod(0o755)
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": str(plugin),
            "env": [{"name": "PLANB_SUFFIX", "value": "1"}],
        }
    }
    conn = load(_write(tmp_path, user))
    assert conn.bearer() == "tok-1"
    assert conn.bearer() == "tok-1"
    assert counter.read_text().count("run") == 1
    assert conn.bearer(refresh=True) == "tok-1"
    assert counter.read_text().count("run") == 2


def test_failing_exec_plugin_is_named(tmp_path: Path) -> None:
    plugin = tmp_path / "plugin.sh"
    plugin.write_text("#!/bin/sh\necho 'not logged in' >&2\nexit 1\n")
    plugin.chmod(0o755)
    conn = load(_write(tmp_path, {"exec": {"command": str(plugin)}}))
    with pytest.raises(KubeconfigError, match=r"failed \(exit 1\): not logged in"):
        conn.bearer()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- not a mapping\n", "not a kubeconfig with a current-context"),
        ("apiVersion: v1\ncurrent-context: gone\ncontexts: []\n", "no context named 'gone'"),
    ],
)
def test_unreadable_kubeconfigs_are_refused(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(text)
    with pytest.raises(KubeconfigError, match=message):
        load(path)


def test_auth_provider_is_refused_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(KubeconfigError, match=r"auth-provider.*get-credentials"):
        load(_write(tmp_path, {"auth-provider": {"name": "gcp"}}))


def test_a_ca_together_with_insecure_skip_tls_verify_is_refused(tmp_path: Path) -> None:
    # kubectl refuses the pair; planb checks the certificate against the CA instead of skipping the check.
    for ca in ({"certificate-authority": "/abs/ca.crt"}, {"certificate-authority-data": "Q0E="}):
        cluster = {"server": "https://127.0.0.1:6443", "insecure-skip-tls-verify": True, **ca}
        with pytest.raises(KubeconfigError, match=r"sets insecure-skip-tls-verify.*Fix: remove insecure-skip"):
            load(_write(tmp_path, {}, cluster))


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[str, ServingCert]]:
    """An HTTPS server on 127.0.0.1 with a serving pair of its own CA, answering every GET with {}."""
    cert = ensure_serving_cert(tmp_path / "server-pki", common_name="planb-test-apiserver")
    with empty_json_server(cert) as url:
        yield url, cert


def test_the_api_servers_certificate_is_checked_against_the_kubeconfigs_ca(
    tmp_path: Path, tls_server: tuple[str, ServingCert]
) -> None:
    url, cert = tls_server
    trusted = Kube(_write(tmp_path, {}, {"server": url, "certificate-authority": str(cert.ca_crt)}))
    assert trusted.get("/version") == {}
    other_ca = ensure_serving_cert(tmp_path / "other-pki", common_name="planb-test-other")
    (tmp_path / "other").mkdir()
    stranger = Kube(_write(tmp_path / "other", {}, {"server": url, "certificate-authority": str(other_ca.ca_crt)}))
    with pytest.raises(KubeError, match=r"API server unreachable.*CERTIFICATE_VERIFY_FAILED"):
        stranger.get("/version")


def test_a_yaml_error_names_the_line_and_column_but_never_quotes_the_line(tmp_path: Path) -> None:
    """yaml's own message quotes the line it stopped at, which may be a token: planb says where, not what."""
    path = tmp_path / "kubeconfig"
    path.write_text("current-context: here\nusers:\n- name: u\n  user:\n    token: s3cr3t-operator-token: oops\n")
    with pytest.raises(KubeconfigError) as caught:
        load(path)
    assert "line 5, column" in str(caught.value) and str(path) in str(caught.value)
    chain = [caught.value, caught.value.__cause__, caught.value.__context__]
    assert not any("s3cr3t" in f"{e} {e!r}" for e in chain if e is not None)


def test_data_files_never_share_a_name_even_after_one_is_removed() -> None:
    """Each `*-data` field gets a file of its own: a second load never overwrites the CA or key of a first."""
    first = _data_file("certificate-authority", base64.b64encode(b"first").decode())
    second = _data_file("certificate-authority", base64.b64encode(b"second").decode())
    Path(first).unlink()  # a name derived from the folder's count would now be the second's again
    third = _data_file("certificate-authority", base64.b64encode(b"third").decode())
    assert len({first, second, third}) == 3
    assert Path(second).read_bytes() == b"second" and Path(third).read_bytes() == b"third"
    assert stat.S_IMODE(Path(third).stat().st_mode) == 0o600


def test_concurrent_loads_write_each_data_field_to_a_file_of_its_own() -> None:
    barrier = threading.Barrier(16)
    written: dict[int, str] = {}

    def write(n: int) -> None:
        barrier.wait()
        written[n] = _data_file("client-key", base64.b64encode(f"key {n}".encode()).decode())

    threads = [threading.Thread(target=write, args=(n,)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(written.values())) == 16
    assert all(Path(path).read_text() == f"key {n}" for n, path in written.items())
