"""Local certificates: keys private from the first byte, renewed before they expire, cleaned up by down."""

from __future__ import annotations

import datetime
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from planb.local.stack import kueue as kueue_mod
from planb.local.stack.kueue import HostKueue
from planb.local.stack.stack import LocalStack
from planb.tls import RENEW_BEFORE, ServingCert, ensure_serving_cert


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
