"""Who listens where, and `up` refusing a port another process holds (no stack needed)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from planb.local.stack import ports
from planb.local.stack.errors import LocalStackError
from planb.local.stack.stack import LocalStack

_LISTEN = """
import socket, sys, time
s = socket.socket(socket.AF_INET6 if ':' in sys.argv[1] else socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 0))
s.listen()
print(s.getsockname()[1], flush=True)
time.sleep(120)
"""


def _listener(host: str, argv0: str | None = None) -> tuple[subprocess.Popen[str], int]:
    """A child process listening on host:<free port>; argv0 replaces its command name."""
    argv = [sys.executable, "-c", _LISTEN, host]
    if argv0 is not None:
        argv = ["bash", "-c", 'exec -a "$0" "$@"', argv0, *argv]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    port = int(proc.stdout.readline())
    return proc, port


@pytest.fixture()
def stop_later() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        proc.kill()
        proc.wait()


def test_address_decoding_matches_proc_net() -> None:
    assert ports._decode_address("0100007F") == "127.0.0.1"
    assert ports._decode_address("00000000") == "0.0.0.0"
    assert ports._decode_address("00000000000000000000000001000000") == "::1"


def test_a_listener_on_every_interface_is_found_and_not_loopback(stop_later: list[subprocess.Popen[str]]) -> None:
    wide, wide_port = _listener("0.0.0.0")
    local, local_port = _listener("127.0.0.1")
    stop_later += [wide, local]
    found = ports.sockets_of([wide.pid, local.pid])
    assert [(str(s), s.loopback) for s in found[wide.pid]] == [(f"tcp 0.0.0.0:{wide_port}", False)]
    assert [(str(s), s.loopback) for s in found[local.pid]] == [(f"tcp 127.0.0.1:{local_port}", True)]


def test_children_of_a_stack_process_count_as_its_own(stop_later: list[subprocess.Popen[str]]) -> None:
    parent = subprocess.Popen(
        ["bash", "-c", f'{sys.executable} -c "$0" 0.0.0.0; true', _LISTEN], stdout=subprocess.PIPE, text=True
    )
    stop_later.append(parent)
    assert parent.stdout is not None
    port = int(parent.stdout.readline())
    try:
        found = [s for socks in ports.sockets_of([parent.pid]).values() for s in socks]
        assert [s.port for s in found] == [port]
    finally:
        for pid in ports.descendants([parent.pid]) - {parent.pid}:
            os.kill(pid, 9)


def test_check_ports_names_the_holder_and_how_to_stop_it(stop_later: list[subprocess.Popen[str]]) -> None:
    proc, port = _listener("127.0.0.1")
    stop_later.append(proc)
    with pytest.raises(ports.PortInUseError) as err:
        ports.check_ports({port: "kube-apiserver"})
    message = str(err.value)
    assert f"port {port} (kube-apiserver) is in use by pid {proc.pid}" in message
    assert f"kill {proc.pid}" in message
    # The stack's own processes may hold their ports.
    ports.check_ports({port: "kube-apiserver"}, ours=[proc.pid])


def test_another_checkouts_stack_is_named_with_the_command_that_stops_it(
    stop_later: list[subprocess.Popen[str]], tmp_path: Path
) -> None:
    other = tmp_path / "other-clone"
    proc, port = _listener("0.0.0.0", argv0=f"{other}/.state/local/kwok/clusters/planb/bin/kube-apiserver")
    stop_later.append(proc)
    with pytest.raises(ports.PortInUseError) as err:
        ports.check_ports({port: "kube-apiserver"})
    assert f"a planb stack (state {other}/.state); run 'planb local down' in {other}" in str(err.value)


def test_a_free_port_passes(stop_later: list[subprocess.Popen[str]]) -> None:
    proc, port = _listener("127.0.0.1")
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 5
    while not ports.port_free(port) and time.monotonic() < deadline:
        time.sleep(0.1)
    ports.check_ports({port: "kube-apiserver"})


def test_up_refuses_a_taken_api_port_before_starting_anything(
    stop_later: list[subprocess.Popen[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two checkouts: the second `up` must not start against the first one's API server."""
    proc, port = _listener("127.0.0.1")
    stop_later.append(proc)
    # No tools: an `up` that skipped the port check would stop at the missing binaries instead.
    monkeypatch.setenv("PLANB_TOOLS_DIR", str(tmp_path / "no-tools"))
    monkeypatch.setenv("PLANB_GKE_EMULATOR_PORT", str(ports.free_port()))
    stack = LocalStack(tmp_path / "state" / "local", apiserver_port=port)
    with pytest.raises(LocalStackError) as err:
        stack.up()
    assert f"port {port} (kube-apiserver) is in use by pid {proc.pid}" in str(err.value)
    assert "(nothing was started)" in str(err.value)
    assert not stack.state.exists()
