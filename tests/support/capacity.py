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

from planb.local.capacity.gke_api import NodePoolReader
from planb.local.gke_emulator.emulator import RunningEmulator
from planb.local.gke_emulator.store import Store
from tests.support.capacity_fakes import Clock, FakeApi, install_clock


def capacity_cli(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`planb capacity ARGS` in a fresh process with its state under `state`."""
    return subprocess.run(
        [sys.executable, "-m", "planb.cli", "capacity", *args],
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
