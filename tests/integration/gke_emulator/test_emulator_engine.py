"""The emulator's engine and state file: what GKE would answer, and how the emulator reports its own troubles."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from planb.local.gke_emulator.emulator import RunningEmulator
from planb.local.gke_emulator.store import StateFileError, emulator_dir, list_clusters, list_node_pools
from tests.support.integration.gke.gke_api import call

BASE = "/v1/projects/p/locations/us-east5-b/clusters"


def test_an_operation_on_one_cluster_does_not_make_a_prefix_named_cluster_busy(
    instant_emulator: RunningEmulator,
) -> None:
    # `tpu` is a prefix of `tpu-cluster`: an operation on tpu-cluster must not block tpu.
    assert call(instant_emulator, "POST", BASE, {"cluster": {"name": "tpu"}})[0] == 200
    instant_emulator.engine.op_seconds = 30.0
    assert call(instant_emulator, "POST", BASE, {"cluster": {"name": "tpu-cluster"}})[0] == 200
    status, answer = call(instant_emulator, "DELETE", f"{BASE}/tpu")
    assert status == 200, answer
    assert answer["operationType"] == "DELETE_CLUSTER"
    # tpu-cluster itself is busy while its create runs.
    status, answer = call(instant_emulator, "DELETE", f"{BASE}/tpu-cluster")
    assert status == 400 and answer["error"]["status"] == "FAILED_PRECONDITION"


def _planb(*args: str, state: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PLANB_STATE_DIR": str(state)}
    command = [sys.executable, "-m", "planb.cli", "local", "gke-emulator", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("content", ['{"clusters": {"projects/p/loc', "[]", '{"clusters": []}'])
def test_a_corrupt_state_file_is_reported_with_its_path_and_the_fix(tmp_path: Path, content: str) -> None:
    state = emulator_dir(tmp_path) / "state.json"
    state.parent.mkdir(parents=True)
    state.write_text(content)
    with pytest.raises(StateFileError, match=re.escape(str(state))):
        list_node_pools(tmp_path)
    for args in (["start", "--port", "0"], ["serve", "--port", "0"]):
        done = _planb(*args, state=tmp_path)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "Traceback" not in done.stderr
        assert str(state) in done.stderr and "planb local gke-emulator stop --purge" in done.stderr, done.stderr
    # The fix the message names works on the corrupt file.
    purged = _planb("stop", "--purge", state=tmp_path)
    assert purged.returncode == 0, purged.stderr
    assert list_node_pools(tmp_path) == [] and list_clusters(tmp_path) == []


def test_each_pool_is_backed_by_a_managed_instance_group_sized_like_the_pool(instant_emulator: RunningEmulator) -> None:
    body = {"cluster": {"name": "c", "nodePools": [{"name": "np", "initialNodeCount": 2}]}}
    assert call(instant_emulator, "POST", BASE, body)[0] == 200
    pool = call(instant_emulator, "GET", f"{BASE}/c/nodePools/np")[1]
    (url,) = pool["instanceGroupUrls"]
    assert re.fullmatch(
        r"https://www\.googleapis\.com/compute/v1/projects/p/zones/us-east5-b/instanceGroupManagers/gke-c-np-\w+-grp",
        url,
    )
    group_path = "/compute/v1/" + url.split("/compute/v1/", 1)[1]
    assert call(instant_emulator, "GET", group_path)[1]["targetSize"] == 2
    assert call(instant_emulator, "GET", f"{BASE}/c")[1]["currentNodeCount"] == 2
    assert call(instant_emulator, "POST", f"{BASE}/c/nodePools/np:setSize", {"nodeCount": 0})[0] == 200
    assert call(instant_emulator, "GET", group_path)[1]["targetSize"] == 0
    assert call(instant_emulator, "DELETE", f"{BASE}/c/nodePools/np")[0] == 200
    instant_emulator.engine.advance()
    assert call(instant_emulator, "GET", group_path)[0] == 404


def test_location_dash_lists_the_project_s_clusters_in_every_location(instant_emulator: RunningEmulator) -> None:
    for parent, name in [
        ("projects/p/locations/us-east5-b", "zonal"),
        ("projects/p/locations/us-east5", "regional"),
        ("projects/other/locations/us-east5-b", "elsewhere"),
    ]:
        assert call(instant_emulator, "POST", f"/v1/{parent}/clusters", {"cluster": {"name": name}})[0] == 200
    status, answer = call(instant_emulator, "GET", "/v1/projects/p/locations/-/clusters")
    assert status == 200, answer
    assert sorted(c["name"] for c in answer["clusters"]) == ["regional", "zonal"]
    assert [c["name"] for c in call(instant_emulator, "GET", f"{BASE}")[1]["clusters"]] == ["zonal"]
