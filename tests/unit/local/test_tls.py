"""Local certificates: keys private from the first byte, renewed before they expire, cleaned up by down."""

from __future__ import annotations

import datetime
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from planb.local.stack import kueue as kueue_mod
from planb.local.stack.kueue import HostKueue
from planb.local.stack.stack import LocalStack
from planb.local.tls import (
    ETCD_CLIENT_NAME,
    ETCD_NAME,
    RENEW_BEFORE,
    EtcdPKI,
    ServingCert,
    ensure_etcd_pki,
    ensure_serving_cert,
)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture()
def open_umask() -> Iterator[None]:
    """umask 0: whatever is not created with an explicit mode comes out world-readable."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture()
def etc_kueue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Kueue's fixed metrics certificate directory, moved under tmp_path."""
    target = tmp_path / "etc" / "kueue" / "metrics" / "certs"
    (tmp_path / "etc").mkdir()
    monkeypatch.setattr(kueue_mod, "METRICS_CERT_DIR", target)
    return target


def test_the_key_is_never_readable_by_others(tmp_path: Path, open_umask: None, monkeypatch: pytest.MonkeyPatch) -> None:
    created: list[tuple[str, int]] = []
    real_open = os.open

    def spy(path: str | os.PathLike[str], flags: int, mode: int = 0o777, *args: object, **kwargs: object) -> int:
        fd = real_open(path, flags, mode)
        created.append((os.fspath(path), stat.S_IMODE(os.fstat(fd).st_mode)))
        return fd

    monkeypatch.setattr(os, "open", spy)
    cert = ensure_serving_cert(tmp_path / "certs")
    assert _mode(cert.tls_key) == 0o600
    assert _mode(cert.directory) == 0o700
    # The key's file had mode 0600 when it came into being, not only after a chmod.
    key_files = [mode for path, mode in created if ".key" in Path(path).name]
    assert key_files and all(mode == 0o600 for mode in key_files), created


def test_a_certificate_near_expiry_is_renewed(tmp_path: Path) -> None:
    now = datetime.datetime.now(datetime.UTC)
    old = ensure_serving_cert(tmp_path, now=now - datetime.timedelta(days=365) + RENEW_BEFORE / 2)
    before = old.tls_crt.read_bytes()
    assert old.needs_renewal()
    renewed = ensure_serving_cert(tmp_path)
    assert renewed.tls_crt.read_bytes() != before
    expires = renewed.expires()
    assert expires is not None and expires - now > datetime.timedelta(days=300)
    assert not renewed.needs_renewal()
    # A valid pair is kept as is.
    assert ensure_serving_cert(tmp_path).tls_crt.read_bytes() == renewed.tls_crt.read_bytes()


def test_a_key_that_does_not_match_its_certificate_is_renewed(tmp_path: Path) -> None:
    first = ensure_serving_cert(tmp_path / "a")
    other = ensure_serving_cert(tmp_path / "b")
    first.tls_key.write_bytes(other.tls_key.read_bytes())
    assert first.needs_renewal()


def test_up_renews_an_expiring_webhook_certificate_of_a_running_stack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = LocalStack(tmp_path / "local")
    now = datetime.datetime.now(datetime.UTC)
    ensure_serving_cert(stack.kueue.cert_dir, "kueue-webhook", now=now - datetime.timedelta(days=360))
    stopped: list[bool] = []

    def stop(self: HostKueue) -> bool:
        stopped.append(True)
        return True

    monkeypatch.setattr(HostKueue, "stop", stop)
    # Pretend the rest of the stack runs: up must still look at the certificate first.
    monkeypatch.setattr(LocalStack, "is_up", lambda self: True)
    monkeypatch.setattr(LocalStack, "show_kuberay_layout", lambda self: None)  # it would ask the API server
    assert stack.up() is False
    expires = ServingCert(stack.kueue.cert_dir).expires()
    assert expires is not None and expires - now > datetime.timedelta(days=300)
    assert stopped == [True]  # Kueue restarts on the renewed pair


def test_metrics_cert_is_private_and_down_removes_what_up_put_there(
    tmp_path: Path, etc_kueue: Path, open_umask: None
) -> None:
    state = tmp_path / "local"
    kueue = HostKueue(state, state / "kubeconfig")
    kueue._install_metrics_cert()
    assert _mode(etc_kueue) == 0o700
    assert _mode(etc_kueue / "tls.key") == 0o600
    assert (etc_kueue / "tls.crt").read_bytes() == kueue.cert.tls_crt.read_bytes()

    LocalStack(state).down()
    assert not (tmp_path / "etc" / "kueue").exists()
    assert (tmp_path / "etc").is_dir()  # it was there before
    assert not state.exists()


def test_down_leaves_a_directory_it_did_not_create_and_another_stacks_files(tmp_path: Path, etc_kueue: Path) -> None:
    etc_kueue.mkdir(parents=True)  # made by an admin: 'sudo install -d -o $USER ...'
    state = tmp_path / "local"
    kueue = HostKueue(state, state / "kubeconfig")
    kueue._install_metrics_cert()
    assert kueue.remove_metrics_cert() == [etc_kueue / "tls.crt", etc_kueue / "tls.key"]
    assert etc_kueue.is_dir()

    kueue._install_metrics_cert()
    (etc_kueue / "tls.crt").write_text("another checkout's certificate\n")
    kueue.remove_metrics_cert()
    assert (etc_kueue / "tls.crt").read_text() == "another checkout's certificate\n"


def _cert(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_etcds_keys_are_private_and_its_ca_signs_only_etcds_and_the_api_servers_certificates(
    tmp_path: Path, open_umask: None
) -> None:
    pki = ensure_etcd_pki(tmp_path / "etcd-pki")
    assert _mode(pki.directory) == 0o700
    assert _mode(pki.server_key) == _mode(pki.client_key) == 0o600
    # The CA's key is dropped once it has signed: nothing else in the directory.
    assert sorted(p.name for p in pki.directory.iterdir()) == sorted(
        p.name for p in (pki.ca_crt, pki.server_crt, pki.server_key, pki.client_crt, pki.client_key)
    )
    ca, server, client = _cert(pki.ca_crt), _cert(pki.server_crt), _cert(pki.client_crt)
    server.verify_directly_issued_by(ca)
    client.verify_directly_issued_by(ca)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.path_length == 0
    # etcd's certificate serves clients and peers on 127.0.0.1 and is a peer's client certificate too.
    names = server.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    assert set(server.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == {
        ExtendedKeyUsageOID.SERVER_AUTH,
        ExtendedKeyUsageOID.CLIENT_AUTH,
    }
    assert server.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == ETCD_NAME
    # The API server's is a client certificate only.
    assert list(client.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == [
        ExtendedKeyUsageOID.CLIENT_AUTH
    ]
    assert client.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == ETCD_CLIENT_NAME
    assert not pki.needs_renewal()
    assert ensure_etcd_pki(pki.directory).ca_crt.read_bytes() == pki.ca_crt.read_bytes()  # a valid set is kept


def test_etcds_certificates_are_renewed_whole_near_expiry(tmp_path: Path) -> None:
    now = datetime.datetime.now(datetime.UTC)
    old = ensure_etcd_pki(tmp_path, now=now - datetime.timedelta(days=365) + RENEW_BEFORE / 2)
    before = {path: path.read_bytes() for path in (old.ca_crt, old.server_crt, old.client_crt)}
    assert old.needs_renewal()
    renewed = ensure_etcd_pki(tmp_path)
    assert all(path.read_bytes() != data for path, data in before.items())
    expires = renewed.expires()
    assert expires is not None and expires - now > datetime.timedelta(days=300)
    assert not renewed.needs_renewal()


@pytest.mark.parametrize("spoil", ["ca", "key", "missing"])
def test_a_broken_etcd_set_is_renewed(tmp_path: Path, spoil: str) -> None:
    pki = ensure_etcd_pki(tmp_path / "a")
    other = ensure_etcd_pki(tmp_path / "b")
    if spoil == "ca":  # a renewal that stopped before its CA was written
        pki.ca_crt.write_bytes(other.ca_crt.read_bytes())
    elif spoil == "key":
        pki.client_key.write_bytes(other.client_key.read_bytes())
    else:
        pki.server_key.unlink()
    assert EtcdPKI(pki.directory).needs_renewal()
    ensure_etcd_pki(pki.directory)
    assert not pki.needs_renewal()
