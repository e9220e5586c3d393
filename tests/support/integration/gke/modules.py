"""Fixtures for the GKE modules and roles: the real planb GKE emulator on a free loopback port."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest import mock

import pytest
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from planb.local.gke_emulator.emulator import RunningEmulator
from planb.paths import REPO
from tests.support.shared.leftovers import assert_nothing_left

PROJECT, LOCATION, CLUSTER = "planb-test", "us-east5-b", "tpu-cluster"


class AnsibleExitJson(Exception):
    """exit_json was called; args holds the result."""

    def __init__(self, kwargs: dict[str, Any]) -> None:
        super().__init__(kwargs)
        self.result = kwargs


class AnsibleFailJson(Exception):
    """fail_json was called; result holds msg and the rest."""

    def __init__(self, kwargs: dict[str, Any]) -> None:
        super().__init__(kwargs.get("msg"))
        self.result = kwargs


def _exit_json(self: basic.AnsibleModule, **kwargs: Any) -> None:
    kwargs.setdefault("changed", False)
    raise AnsibleExitJson(kwargs)


def _fail_json(self: basic.AnsibleModule, **kwargs: Any) -> None:
    raise AnsibleFailJson(kwargs)


def load_module(name: str) -> ModuleType:
    """The collection's module planb.gke.<name>."""
    return importlib.import_module(f"ansible_collections.planb.gke.plugins.modules.{name}")


class ModuleRunner:
    """Runs a module's main() in-process with exit_json/fail_json patched (kubernetes.core style)."""

    def __init__(self, emulator: RunningEmulator) -> None:
        self.emulator = emulator

    def base_args(self) -> dict[str, Any]:
        return {
            "project": PROJECT,
            "location": LOCATION,
            "auth_kind": "none",
            "api_endpoint": self.emulator.url,
            "poll_interval": 0.05,
            "timeout": 30,
        }

    def run(self, name: str, args: dict[str, Any], check_mode: bool = False, diff: bool = False) -> dict[str, Any]:
        """The module's result; raises AnsibleFailJson when it fails."""
        module = load_module(name)
        full = {**self.base_args(), **args, "_ansible_check_mode": check_mode, "_ansible_diff": diff}
        with (
            patch_module_args(full),
            mock.patch.multiple(basic.AnsibleModule, exit_json=_exit_json, fail_json=_fail_json),
        ):
            try:
                module.main()
            except AnsibleExitJson as done:
                return done.result
        raise AssertionError("the module returned without exit_json or fail_json")

    def fail(self, name: str, args: dict[str, Any], check_mode: bool = False) -> dict[str, Any]:
        """Run a module that must fail; its fail_json arguments."""
        with pytest.raises(AnsibleFailJson) as failed:
            self.run(name, args, check_mode=check_mode)
        return failed.value.result


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[RunningEmulator]:
    """The real emulator, in-process on a free loopback port, with its own state directory."""
    running = RunningEmulator(tmp_path / "state", port=0, op_seconds=0.05, kubeconfig=tmp_path / "no-local-stack")
    yield running
    running.stop()


@pytest.fixture
def instant_emulator(tmp_path: Path) -> Iterator[RunningEmulator]:
    """The real emulator whose operations are DONE as soon as they are answered (op_seconds 0), for tests that send
    raw GKE bodies one after another (a pool right after its cluster) without polling operations."""
    running = RunningEmulator(tmp_path / "state", port=0, op_seconds=0.0, kubeconfig=tmp_path / "no-local-stack")
    yield running
    running.stop()


@pytest.fixture
def modules(emulator: RunningEmulator) -> ModuleRunner:
    return ModuleRunner(emulator)


CLUSTER_ARGS: dict[str, Any] = {"name": CLUSTER, "version": "1.34"}
ONDEMAND_ARGS: dict[str, Any] = {
    "name": "on-demand-pool",
    "cluster": CLUSTER,
    "machine_type": "ct6e-standard-4t",
    "tpu_topology": "4x4",
    "autoscaling": {"min_node_count": 0, "max_node_count": 4},
    "reservation_affinity": "NO_RESERVATION",
}
DWS_ARGS: dict[str, Any] = {
    **ONDEMAND_ARGS,
    "name": "dws-pool",
    "autoscaling": {"min_node_count": 0, "max_node_count": 4, "location_policy": "ANY"},
    "queued_provisioning": True,
    "flex_start": True,
    "auto_repair": False,
}


def ansible_playbook(
    *args: str, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run ansible-playbook from the repo root with the venv's ansible and the repo's ansible.cfg, in a temporary
    folder of the run's own: a file the run leaves there fails the test (tests/support/shared/leftovers.py)."""
    command = [str(Path(sys.executable).parent / "ansible-playbook"), *args]
    with tempfile.TemporaryDirectory(prefix="planb-play-tmp-") as temporary:
        full_env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1",
                    "TMPDIR": temporary, **(env or {})}  # fmt: skip
        done = subprocess.run(command, cwd=REPO, env=full_env, capture_output=True, text=True, timeout=timeout)
        assert_nothing_left(Path(temporary), f"ansible-playbook {' '.join(args)}")
    return done
