"""`ControlPlane.create` returns only a cluster whose API server answers, and a throwaway one takes the kernel's ports.

kwokctl exits 0 when its wait for readiness fails (it logs "Failed to wait for cluster to be ready":
pkg/kwokctl/cmd/create/cluster/cluster.go), so a cluster whose API server could not bind its port was handed to the
caller, whose first kubectl then met "connection refused" (a make test run on 2026-12-04: two clusters created at
once had picked the same ports).
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from planb.local.stack.control_plane import ControlPlane
from planb.local.stack.errors import StartupTimeoutError
from planb.local.stack.kwokctl_config import PORTS_BELOW
from planb.local.stack.ports import free_ports, port_free
from planb.local.stack.snapshot import WITHOUT


@pytest.mark.tools
def test_a_cluster_whose_api_server_cannot_listen_is_deleted_and_the_error_says_why(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        plane = ControlPlane(tmp_path / "local", apiserver_port=port)
        try:
            with pytest.raises(StartupTimeoutError) as raised:
                plane.create(tmp_path / "local" / "kubeconfig", without=WITHOUT, wait_s=5, timeout_s=25)
        finally:
            plane.delete()
    said = str(raised.value)
    assert "the control plane did not start" in said, said
    assert "a port was taken from kube-apiserver" in said, said
    assert "address already in use" in said, said  # the API server's own log line
    assert "attempt 1 of" in said, said  # the API server's fixed port: no second try on it
    # kwokctl was stopped when the API server's log said so, not left to hold until its --timeout.
    assert "kwokctl was stopped when a component's log said its port was taken" in said, said
    assert not plane.exists() and not plane.component_pids(), "the failed cluster was left behind"


def test_free_ports_are_distinct_and_free_above_the_stacks_ports() -> None:
    picked = free_ports(6)
    assert len(set(picked)) == 6, picked
    assert all(port_free(port) for port in picked), picked
    # The kernel's ephemeral range (on Linux's default, 32768-60999, above where the local stack picks its own:
    # downwards from PORTS_BELOW).
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    assert all(low <= port <= high for port in picked), (picked, low, high)
    assert PORTS_BELOW < 32768
