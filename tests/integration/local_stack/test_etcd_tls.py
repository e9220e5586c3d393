"""etcd takes only the stack's client certificate: plain http and https without it fail, the API server works.

Loopback is shared with every local account, so a port on 127.0.0.1 is not private; etcd runs with client-certificate
TLS (planb.local.stack.control_plane, etcd_tls_args). A throwaway control plane on free ports, etcd and the API server
only, as the snapshot test's.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import ssl
import stat
import threading
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from planb.kube import Kube
from planb.local.stack import ports
from planb.local.stack.control_plane import ControlPlane
from planb.local.stack.snapshot import WITHOUT
from planb.local.tls import EtcdPKI, ensure_etcd_pki

#: The cgroup v1 freezer's hierarchy (the renewal's race widened: _frozen_for).
_FREEZER = Path("/sys/fs/cgroup/freezer")
#: What a failed connection to etcd looks like from a client (refused handshake, reset, HTTP error, a 400 page).
_FAILED = (OSError, http.client.HTTPException, ssl.SSLError)


def _get(url: str, context: ssl.SSLContext | None = None) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=5, context=context) as response:
        return response.status, response.read()


def _refused(url: str, context: ssl.SSLContext | None = None) -> str:
    """Why etcd did not answer `url` with its data (fails the test if it did)."""
    try:
        status, body = _get(url, context)
    except urllib.error.HTTPError as exc:
        return f"HTTP {exc.code}"
    except _FAILED as exc:
        return f"{type(exc).__name__}: {exc}"
    pytest.fail(f"etcd answered {url} without the stack's certificate: {status} {body[:200]!r}")


def _context(ca: Path, client: tuple[Path, Path] | None = None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(ca))
    if client is not None:
        context.load_cert_chain(str(client[0]), str(client[1]))
    return context


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.tools
@pytest.mark.slow
def test_etcd_refuses_a_client_without_the_stacks_certificate_while_the_api_server_works(tmp_path: Path) -> None:
    plane = ControlPlane.throwaway(tmp_path / "local")
    kubeconfig = tmp_path / "local" / "kubeconfig"
    try:
        plane.create(kubeconfig, without=WITHOUT)
        pki = plane.etcd_pki
        # Keys 0600 in a 0700 directory; the CA's key is nowhere.
        assert _mode(pki.directory) == 0o700
        assert _mode(pki.server_key) == _mode(pki.client_key) == 0o600
        assert sorted(p.name for p in pki.directory.iterdir()) == [
            "apiserver-etcd-client.crt",
            "apiserver-etcd-client.key",
            "ca.crt",
            "server.crt",
            "server.key",
        ]
        assert plane.saved.etcd_secured()
        port = plane.saved.options()["etcdPort"]
        peer_port = plane.saved.options()["etcdPeerPort"]
        assert plane.ports()[port] == "etcd"

        # etcd listens on its two ports on loopback and nowhere else: no plain-http listener beside them.
        etcd_pid = plane.component_pids()["etcd"]
        etcd_ports = {(s.address, s.port) for s in ports.sockets_of([etcd_pid])[etcd_pid]}
        assert etcd_ports == {("127.0.0.1", port), ("127.0.0.1", peer_port)}, etcd_ports

        base = f"127.0.0.1:{port}"
        refusals = {
            # plain http: the version, a key range through the gRPC gateway
            "http /version": _refused(f"http://{base}/version"),
            "http /v3/kv/range": _refused_post(f"http://{base}/v3/kv/range"),
            # https, etcd's CA trusted, but no client certificate
            "https, no client certificate": _refused(f"https://{base}/version", _context(pki.ca_crt)),
            # https with a client certificate of another CA (a local user's own)
            "https, another CA's client certificate": _refused(
                f"https://{base}/version",
                _context(pki.ca_crt, _client_of(ensure_etcd_pki(tmp_path / "other-pki"))),
            ),
            # the peer port: the same
            "http, peer port": _refused(f"http://127.0.0.1:{peer_port}/members"),
            "https, peer port, no client certificate": _refused(
                f"https://127.0.0.1:{peer_port}/members", _context(pki.ca_crt)
            ),
        }
        assert all(refusals.values()), refusals
        # Each was a refusal by a listener, not a closed port.
        assert not any("ConnectionRefused" in why for why in refusals.values()), refusals

        # With the stack's client certificate etcd answers: the refusals above were etcd's, not a dead port.
        status, body = _get(f"https://{base}/version", _context(pki.ca_crt, _client_of(pki)))
        assert status == 200 and "etcdserver" in json.loads(body), body

        # The API server reaches etcd through its client certificate.
        namespaces = Kube(kubeconfig).names("/api/v1/namespaces")
        assert {"default", "kube-system"} <= set(namespaces), namespaces

        # A restart with etcd's certificates due for renewal (here: a CA that signed neither) stops the control
        # plane, renews all three and starts it again with the new CA on both sides. The components are frozen for
        # two seconds meanwhile, so kwokctl's SIGKILL takes effect only then: on a busy host a killed component
        # lingers as long, holding its port from the one started next.
        old_ca = pki.ca_crt.read_bytes()
        pki.ca_crt.write_bytes(ensure_etcd_pki(tmp_path / "third-pki").ca_crt.read_bytes())
        assert pki.needs_renewal()
        with _frozen_for(2.0, plane.component_pids().values()):
            plane.start(kubeconfig)
        assert not pki.needs_renewal() and pki.ca_crt.read_bytes() != old_ca
        assert plane.saved.etcd_secured()
        assert {"default", "kube-system"} <= set(Kube(kubeconfig).names("/api/v1/namespaces"))
        assert _refused(f"https://{base}/version", _context(pki.ca_crt))
    finally:
        plane.delete()
    assert not plane.component_pids()
    assert not plane.etcd_pki.directory.exists()  # the certificates go with the cluster


@contextlib.contextmanager
def _frozen_for(seconds: float, pids: Iterable[int]) -> Iterator[None]:
    """The processes frozen (the cgroup v1 freezer) and thawed by a timer `seconds` later: a signal, SIGKILL too,
    takes effect only at the thaw. Where the freezer cannot be used (not root, no cgroup v1 freezer) nothing is frozen
    and the rest of the test still runs: the restart is then checked without the race made certain."""
    group = _FREEZER / f"planb-test-{os.getpid()}"
    try:
        group.mkdir()
    except OSError:
        yield
        return
    state = group / "freezer.state"
    timer = threading.Timer(seconds, state.write_text, ("THAWED",))
    try:
        for pid in pids:
            (group / "tasks").write_text(str(pid))
        state.write_text("FROZEN")
        timer.start()
        yield
    finally:
        timer.cancel()
        state.write_text("THAWED")
        for pid in (group / "tasks").read_text().split():
            with contextlib.suppress(OSError):  # back to the root group; it may have ended meanwhile
                (_FREEZER / "tasks").write_text(pid)
        group.rmdir()


def _client_of(pki: EtcdPKI) -> tuple[Path, Path]:
    return pki.client_crt, pki.client_key


def _refused_post(url: str) -> str:
    request = urllib.request.Request(url, data=b'{"key": "AA==", "range_end": "AA=="}', method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            body = response.read()
    except urllib.error.HTTPError as exc:
        return f"HTTP {exc.code}"
    except _FAILED as exc:
        return f"{type(exc).__name__}: {exc}"
    pytest.fail(f"etcd answered {url} over plain http: {body[:200]!r}")
