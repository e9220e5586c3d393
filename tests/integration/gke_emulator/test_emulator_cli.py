"""`planb local gke-emulator start|status|fail-next|stop` as a background process with pid file and log."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from planb.local.gke_emulator.background import BackgroundEmulator
from planb.local.gke_emulator.errors import EmulatorError
from planb.local.gke_emulator.store import emulator_dir, list_node_pools
from planb.local.process import is_alive, start_time, terminate
from planb.local.stack.stack import LocalStack


def _planb(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "planb.cli", "local", "gke-emulator", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
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
        request = urllib.request.Request(
            base, data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request) as response:
            assert json.loads(response.read())["operationType"] == "CREATE_CLUSTER"
        with urllib.request.urlopen(f"{base}/c") as response:
            assert json.loads(response.read())["status"] == "RUNNING"
        injected = _planb("fail-http", "--status", "503", "--count", "1", "--method", "get", env=env)
        assert injected.returncode == 0 and "the next 1 GET API requests will be answered 503" in injected.stdout
        with pytest.raises(urllib.error.HTTPError) as unavailable:
            urllib.request.urlopen(f"{base}/c")
        assert unavailable.value.code == 503
        assert json.loads(unavailable.value.read())["error"]["status"] == "UNAVAILABLE"
        with urllib.request.urlopen(f"{base}/c") as response:
            assert response.status == 200
        assert [p["name"] for p in list_node_pools(tmp_path, cluster="c")] == ["np"]
    finally:
        stopped = _planb("stop", env=env)
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    assert _planb("status", env=env).returncode == 3
    assert (emulator_dir(tmp_path) / "emulator.log").exists()


def test_second_start_reuses_and_a_failed_start_names_the_log(tmp_path: Path) -> None:
    emulator = BackgroundEmulator(tmp_path)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        # The port is taken: the server exits at start-up, and start says so with the log to read.
        with pytest.raises(EmulatorError, match=r"exited with 1 at start-up; see .*emulator\.log"):
            emulator.start(port=busy.getsockname()[1], op_seconds=0, wait=15)
    assert emulator.running() is None
    assert not emulator.process.pid_file.exists()
    pid, url, started = emulator.start(port=0, op_seconds=0)
    try:
        assert started
        assert emulator.process.pid_file.read_text().split() == [str(pid), start_time(pid)]
        assert emulator.healthy()
        assert emulator.start(port=0) == (pid, url, False)
    finally:
        assert emulator.stop(purge=True) == pid
    assert emulator.running() is None
    assert emulator.stop() is None


def test_the_local_stack_and_the_cli_share_one_emulator_record(tmp_path: Path) -> None:
    # `planb local up` and `planb local gke-emulator start` must find the same process.
    assert LocalStack(tmp_path / "local").gke_emulator.process == BackgroundEmulator(tmp_path).process


def test_concurrent_starts_run_one_emulator(tmp_path: Path) -> None:
    # Two `start`s at once (say `planb local up` and a user's `planb local gke-emulator start`) share one process.
    barrier = threading.Barrier(2)
    results: list[tuple[int, str, bool]] = []

    def start() -> None:
        barrier.wait()
        results.append(BackgroundEmulator(tmp_path).start(port=0, op_seconds=0))

    threads = [threading.Thread(target=start) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    emulator = BackgroundEmulator(tmp_path)
    try:
        assert sorted(started for _, _, started in results) == [False, True], results
        assert len({(pid, url) for pid, url, _ in results}) == 1, results
        assert json.loads(emulator.info_file.read_text())["url"] == results[0][1]
    finally:
        for pid, _, _ in results:
            if is_alive(pid):
                terminate(pid, timeout=5)
        emulator.stop()


@pytest.mark.parametrize("record", ["{pid} 1", "{pid}"], ids=["wrong start time", "bare pid of an old record"])
def test_stop_never_kills_a_process_that_only_shares_the_recorded_pid(tmp_path: Path, record: str) -> None:
    # After a reboot the recorded pid may belong to anything: it must survive `stop`.
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        pid_file = emulator_dir(tmp_path) / "emulator.pid"
        pid_file.parent.mkdir(parents=True)
        pid_file.write_text(record.format(pid=other.pid) + "\n")
        env = {**os.environ, "PLANB_STATE_DIR": str(tmp_path)}
        assert _planb("status", env=env).returncode == 3
        stopped = _planb("stop", env=env)
        assert stopped.returncode == 0 and "not running" in stopped.stdout, stopped.stdout + stopped.stderr
        assert other.poll() is None and is_alive(other.pid)
        assert not pid_file.exists()
    finally:
        other.kill()
        other.wait()
