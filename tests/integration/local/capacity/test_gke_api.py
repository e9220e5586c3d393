"""The simulator reads its node pools over the GKE API, from the real GKE emulator on a free loopback port."""

from __future__ import annotations

import json
import socket
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from planb.local.capacity import settings as settings_mod
from planb.local.capacity.gke_api import GkeUnavailableError, NodePoolReader
from planb.local.capacity.settings import Settings
from planb.local.capacity.simulator import CapacitySimulator
from planb.local.gke_emulator.store import Store
from tests.support.integration.capacity import PARENT, PROJECT, ServePools
from tests.support.integration.capacity_fakes import KUBECONFIG, FakeApi

FIXED = {"name": "default-pool", "initialNodeCount": 2, "config": {"machineType": "n2-standard-16"}}


def _post(url: str, body: dict[str, Any]) -> None:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10):
        pass


def _simulator(tmp_path: Path, gke: NodePoolReader, logs: list[str]) -> tuple[CapacitySimulator, FakeApi]:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    simulator = CapacitySimulator(kubeconfig, tmp_path, log=logs.append, gke=gke)
    api = FakeApi()
    simulator.kube = api  # type: ignore[assignment]
    return simulator, api


def test_the_pools_of_every_location_of_the_project_with_their_cluster(tmp_path: Path, serve_pools: ServePools) -> None:
    store = Store(tmp_path)
    for parent in (f"projects/{PROJECT}/locations/us-east5/clusters/regional", "projects/other/locations/x/clusters/o"):
        store.clusters[parent] = {"name": parent.rsplit("/", 1)[1], "location": parent.split("/")[3]}
        store.node_pools[f"{parent}/nodePools/np"] = {"name": "np", "config": {"machineType": "n2-standard-16"}}
    store.save()
    reader = serve_pools([FIXED])
    pools = {(p["cluster"], p["name"]) for p in reader.node_pools()}
    assert pools == {(PARENT, "default-pool"), (f"projects/{PROJECT}/locations/us-east5/clusters/regional", "np")}
    assert NodePoolReader(reader.endpoint, PROJECT, "us-east5").node_pools()[0]["name"] == "np"


def test_each_pool_carries_its_control_plane_s_version(serve_pools: ServePools) -> None:
    # A Spot pool's notice depends on it (planb.local.capacity.spot.notice_seconds); serve_pools' cluster runs 1.34.
    reader = serve_pools([FIXED])
    assert [p["clusterMasterVersion"] for p in reader.node_pools()] == ["1.34"]


def test_an_error_answer_names_the_endpoint_and_gke_s_message(serve_pools: ServePools) -> None:
    reader = serve_pools([FIXED])
    body = {"project": PROJECT, "service": "container.googleapis.com", "state": "DISABLED"}
    _post(f"{reader.endpoint}/planb/v1/services", body)
    with pytest.raises(GkeUnavailableError, match=r"answered GET v1/projects/p/locations/-/clusters with 403 .*"):
        reader.node_pools()


def test_without_an_answer_a_pass_changes_no_node_and_says_so_once(tmp_path: Path, serve_pools: ServePools) -> None:
    logs: list[str] = []
    reader = serve_pools([FIXED])
    simulator, api = _simulator(tmp_path, reader, logs)
    simulator.step(Settings())
    assert len(api.nodes) == 2
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        simulator.gke = NodePoolReader(f"http://127.0.0.1:{probe.getsockname()[1]}", PROJECT)
    settings_mod.save(Settings(interval_seconds=0.01), tmp_path)
    passes = iter(range(3))
    simulator._loop(lambda: next(passes, None) is None, Settings())
    assert len(api.nodes) == 2  # no pools read is not "every pool is gone"
    paused = [line for line in logs if line.startswith("paused (will retry): no node pools: ")]
    assert len(paused) == 1, logs
    simulator.gke = reader
    simulator.step(Settings())
    assert len(api.nodes) == 2


def test_passes_share_one_connection_which_is_opened_again_once_the_server_drops_it(
    serve_pools: ServePools, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader = serve_pools([FIXED])
    opened: list[object] = []
    connect = reader._connect

    def counted() -> Any:
        opened.append(connect())
        return opened[-1]

    monkeypatch.setattr(reader, "_connect", counted)
    for _ in range(3):
        assert [p["name"] for p in reader.node_pools()] == ["default-pool"]
    assert len(opened) == 1  # six requests on one kept-alive connection
    assert reader._connection is not None and reader._connection.sock is not None
    reader._connection.sock.shutdown(socket.SHUT_RDWR)  # as a restarted emulator leaves it
    assert [p["name"] for p in reader.node_pools()] == ["default-pool"]
    assert len(opened) == 2
