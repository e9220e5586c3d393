"""Helpers of the simulator's tests: the GKE API they read node pools from (the real GKE emulator, in-process on a
free loopback port) and the capacity CLI run in a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from planb.local.capacity import simulator as sim
from planb.local.capacity.gke_api import NodePoolReader
from planb.local.gke_emulator.emulator import RunningEmulator
from planb.local.gke_emulator.store import Store
from tests.support.integration.capacity_fakes import KUBECONFIG, Clock, FakeApi, install_clock


def capacity_cli(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`planb local capacity ARGS` in a fresh process with its state under `state`."""
    return subprocess.run(
        [sys.executable, "-m", "planb.cli", "local", "capacity", *args],
        env={**os.environ, "PLANB_STATE_DIR": str(state)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


PROJECT, LOCATION, CLUSTER = "p", "us-east5-b", "tpu-cluster"
PARENT = f"projects/{PROJECT}/locations/{LOCATION}/clusters/{CLUSTER}"

ServePools = Callable[[list[dict[str, Any]]], NodePoolReader]


@pytest.fixture()
def serve_pools(tmp_path: Path) -> Iterator[ServePools]:
    """Start the emulator on tmp_path's state with the cluster PARENT holding these pool bodies; a reader of it."""
    running: list[RunningEmulator] = []

    def serve(pools: list[dict[str, Any]]) -> NodePoolReader:
        store = Store(tmp_path)
        store.clusters[PARENT] = {"name": CLUSTER, "location": LOCATION, "currentMasterVersion": "1.34"}
        for body in pools:
            store.node_pools[f"{PARENT}/nodePools/{body['name']}"] = body
        store.save()
        emulator = RunningEmulator(tmp_path, port=0, op_seconds=0.0, kubeconfig=tmp_path / "no-local-stack")
        running.append(emulator)
        return NodePoolReader(emulator.url, PROJECT)

    yield serve
    for emulator in running:
        emulator.stop()


@pytest.fixture()
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """The simulator's clock, moved by hand."""
    return install_clock(monkeypatch)


@pytest.fixture()
def api() -> FakeApi:
    """The Kubernetes objects the simulator reads and writes, kept in memory."""
    return FakeApi()


#: The DWS pool the simulator's lifecycle tests serve (tests/integration/local/capacity/test_lifecycle*.py).
DWS_POOL = {
    "name": "dws-pool",
    "initialNodeCount": 0,
    "config": {"machineType": "ct6e-standard-4t", "flexStart": True},
    "autoscaling": {"enabled": True, "totalMinNodeCount": 0, "totalMaxNodeCount": 8},
    "queuedProvisioning": {"enabled": True},
    "placementPolicy": {"tpuTopology": "4x4"},
}


@pytest.fixture()
def state(tmp_path: Path) -> Path:
    """The simulator's state directory."""
    return tmp_path


@pytest.fixture()
def simulator(state: Path, api: FakeApi, serve_pools: ServePools) -> sim.CapacitySimulator:
    """A capacity simulator on the in-memory API server, reading DWS_POOL from the GKE emulator."""
    kubeconfig = state / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    simulator = sim.CapacitySimulator(kubeconfig, state, log=lambda _: None, gke=serve_pools([DWS_POOL]))
    simulator.kube = api  # type: ignore[assignment]
    return simulator
