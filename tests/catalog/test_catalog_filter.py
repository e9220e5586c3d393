"""The Ansible filter plugin: the inventory names a profile, the roles get node pool settings."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from ansible.errors import AnsibleFilterError

from planb import paths
from planb.catalog import chart_values, node_pool

PLUGIN = paths.REPO / "plugins" / "filter" / "planb_catalog.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("planb_catalog_filter", PLUGIN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_filters_are_registered() -> None:
    filters = _load().FilterModule().filters()
    assert sorted(filters) == ["planb_node_pool", "planb_profile"]
    assert filters["planb_node_pool"]("tpu-v6e-16", slices=2) == node_pool("tpu-v6e-4x4", 2)
    assert filters["planb_profile"]("tpu-v6e-4x4", 1, 2) == chart_values("tpu-v6e-4x4", 1, 2)


def test_catalog_errors_become_filter_errors() -> None:
    filters = _load().FilterModule().filters()
    with pytest.raises(AnsibleFilterError) as caught:
        filters["planb_node_pool"]("tpu-v6e-4x4", max_nodes=6)
    assert caught.value.message == (
        "planb_node_pool: max_nodes 6 is not a multiple of the 4 nodes of one tpu-v6e-4x4 slice "
        "(GKE scales a multi-host TPU slice atomically): use 4 or 8"
    )


def test_real_ansible_resolves_the_filter(tmp_path: Path) -> None:
    """ansible.cfg's filter_plugins path finds the plugin in a real ansible run."""
    out = tmp_path / "pool.json"
    env = dict(os.environ, ANSIBLE_CONFIG=str(paths.REPO / "ansible.cfg"), ANSIBLE_LOCALHOST_WARNING="false")
    expr = "{{ 'tpu-v6e-4x4' | planb_node_pool(slices=1) | to_json }}"
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "ansible"),
            "localhost",
            "-i",
            "localhost,",
            "-c",
            "local",
            "-e",
            f"ansible_python_interpreter={sys.executable}",
            "-m",
            "ansible.builtin.copy",
            "-a",
            f"content={expr} dest={out}",
        ],
        cwd=paths.REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    pool = json.loads(out.read_text())
    assert (pool["machine_type"], pool["tpu_topology"], pool["max_nodes"]) == ("ct6e-standard-4t", "4x4", 4)
