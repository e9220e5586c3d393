"""An unreadable settings file or a GKE API that does not answer: named with the fix, never a traceback."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from planb.local import apiserver as local_apiserver
from planb.local.capacity.settings import Settings, SettingsError, load, settings_file
from planb.local.capacity.simulator import CapacitySimulator
from tests.support.integration.capacity import capacity_cli

KUBECONFIG = (
    "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
    "clusters: [{name: x, cluster: {server: 'https://127.0.0.1:1'}}]\n"
    "contexts: [{name: x, context: {cluster: x, user: x}}]\nusers: [{name: x, user: {token: t}}]\n"
)


@pytest.mark.parametrize(
    "content",
    ['{"fail_next": 1', "[]", '{"fail_next": "two"}', '{"stockout": "pool-a"}', '{"interval_seconds": 0}'],
)
def test_a_bad_settings_file_is_named_with_the_fix(tmp_path: Path, content: str) -> None:
    path = settings_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(content)
    with pytest.raises(SettingsError) as err:
        load(tmp_path)
    assert f"settings file {path} is unreadable" in str(err.value)
    assert "Fix: delete it" in str(err.value) and f"rm {path}" in str(err.value)


@pytest.mark.parametrize("verb", [("show",), ("set", "--delay", "1")])
def test_capacity_commands_report_a_corrupt_settings_file_without_a_traceback(
    tmp_path: Path, verb: tuple[str, ...]
) -> None:
    path = settings_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text('{"provisioning_delay_seconds": 3')
    done = capacity_cli(tmp_path, *verb)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"planb: error: the capacity simulator's settings file {path} is unreadable" in done.stderr


def test_capacity_run_once_names_a_gke_api_that_does_not_answer(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{probe.getsockname()[1]}"
    kubeconfig = tmp_path / "kubeconfig"
    # The local stack's server, which `run` insists on; the pass stops at the GKE API before any call to it.
    kubeconfig.write_text(KUBECONFIG.replace("https://127.0.0.1:1", local_apiserver.SERVER))
    done = capacity_cli(tmp_path, "run", "--once", "--kubeconfig", str(kubeconfig), "--gke-endpoint", endpoint)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"no node pools: the GKE API at {endpoint} does not answer" in done.stderr
    assert "`planb local up` starts the GKE emulator" in done.stderr


def test_the_running_simulator_says_so_once_and_carries_on(tmp_path: Path) -> None:
    """A file that breaks while the simulator runs pauses it (said once), it does not crash it."""
    path = settings_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("{broken")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    logs: list[str] = []
    simulator = CapacitySimulator(kubeconfig, tmp_path, log=logs.append)
    passes: list[int] = []

    def stop_after_three() -> bool:
        passes.append(1)
        if len(passes) == 3:
            path.write_text("{}")  # fixed while running
        return len(passes) > 4

    steps: list[Settings] = []
    simulator.step = steps.append  # type: ignore[method-assign,assignment]
    # interval_seconds of the defaults (0.5 s) between passes: about 2 s in all.
    simulator.run(stop_after_three)
    paused = [line for line in logs if line.startswith("paused (will retry): ")]
    assert len(paused) == 1, logs
    assert str(path) in paused[0]
    assert steps == [Settings(), Settings()]  # it went on once the file was fixed
