"""The running stack listens on loopback only: every socket of every process it started."""

from __future__ import annotations

from pathlib import Path

from planb.local.process import start_time
from planb.local.stack import ports
from planb.local.stack.kwokctl_config import APISERVER_PORT
from planb.local.stack.stack import LocalStack


def test_every_process_of_the_stack_listens_on_loopback_only(local_stack: Path) -> None:
    stack = LocalStack()
    pids = stack.pids()
    # etcd, apiserver, controller-manager, scheduler, kwok; Kueue, KubeRay, simulator, emulator
    # (and the failover controller while it is switched on)
    assert len(pids) >= 9, pids
    found = ports.sockets_of(pids)
    listening = {f"{ports.command_of(pid).split()[0].rsplit('/', 1)[-1]}[{pid}]": socks for pid, socks in found.items()}
    # The check sees the real listeners (the API server's port among them), not an empty list.
    assert any(s.port == APISERVER_PORT for socks in found.values() for s in socks), listening
    assert len(found) >= 7, listening  # all but the simulator (no server) and one spare
    exposed = {name: [str(s) for s in socks if not s.loopback] for name, socks in listening.items()}
    assert {name: socks for name, socks in exposed.items() if socks} == {}
    assert all(start_time(pid) for pid in pids)  # none of them ended while we looked
