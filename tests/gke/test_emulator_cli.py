"""`planb gke-emulator start|status|fail-next|stop` as a background process with pid file and log."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

from planb.gke.store import emulator_dir, list_node_pools


def _planb(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "planb.cli", "gke-emulator", *args], env=env, capture_output=True, text=True, timeout=60
    )


def test_background_lifecycle(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PLANB_STATE_DIR": str(tmp_path), "PLANB_GKE_EMULATOR_PORT": str(port)}
    try:
        started = _planb("start", "--op-seconds", "0", env=env)
        assert started.returncode == 0, started.stderr
        assert f"http://127.0.0.1:{port}" in started.stdout
        assert (emulator_dir(tmp_path) / "emulator.pid").exists()
        assert _planb("status", env=env).returncode == 0
        assert _planb("fail-next", "--operation-type", "CREATE_NODE_POOL", env=env).returncode == 0
        base = f"http://127.0.0.1:{port}/v1/projects/p/locations/us-east5-b/clusters"
        body = {"cluster": {"name": "c", "nodePools": [{"name": "np", "initialNodeCount": 1}]}}
        request = urllib.request.Request(base, data=json.dumps(body).encode(), method="POST")
        with urllib.request.urlopen(request) as response:
            assert json.loads(response.read())["operationType"] == "CREATE_CLUSTER"
        with urllib.request.urlopen(f"{base}/c") as response:
            assert json.loads(response.read())["status"] == "RUNNING"
        assert [p["name"] for p in list_node_pools(tmp_path, cluster="c")] == ["np"]
    finally:
        stopped = _planb("stop", env=env)
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    assert _planb("status", env=env).returncode == 3
    assert (emulator_dir(tmp_path) / "emulator.log").exists()
