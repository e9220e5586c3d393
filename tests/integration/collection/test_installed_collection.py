"""The planb.gke collection as an ops controller gets it: built, installed, used from outside the checkout.

`ansible-galaxy collection build` makes the tarball, `ansible-galaxy collection install` puts it into
an empty collections path, and a playbook in a folder of its own (no planb ansible.cfg, no checkout
on any path) converges a cluster and a DWS pool on the real GKE emulator, with the connection set
once by `module_defaults` on the `planb.gke.gke` action group — the README's production setup.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from planb.build import collection_tarball
from planb.local.gke_emulator.emulator import RunningEmulator

BIN = Path(sys.executable).parent
PROJECT = "ops-project"


def _run(*argv: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture
def controller(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """A working folder outside the checkout and an environment that knows nothing of it."""
    home = tmp_path / "controller"
    home.mkdir()
    (home / "ansible.cfg").write_text("[defaults]\ninterpreter_python = auto_silent\n")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ANSIBLE_", "GKE_", "GCP_", "PLANB_")) and key != "PYTHONPATH"
    }
    env.update(ANSIBLE_CONFIG=str(home / "ansible.cfg"), ANSIBLE_NOCOLOR="1", HOME=str(home))
    yield home, env


def _install(home: Path, env: dict[str, str]) -> Path:
    tarball = collection_tarball.build(home)
    with tarfile.open(tarball) as tar:
        names = tar.getnames()
    assert "plugins/module_utils/_generated/profiles.py" in names and "meta/runtime.yml" in names
    assert not [n for n in names if "__pycache__" in n or n.startswith("tests/output")]
    # What site.yml needs travels with the modules: the roles, the playbooks and the queues chart.
    for role in ("gke_cluster", "gke_node_pool", "gke_ladder", "kueue", "kueue_queues"):
        assert f"roles/{role}/tasks/main.yml" in names and f"roles/{role}/meta/argument_specs.yml" in names, role
    assert {"playbooks/site.yml", "playbooks/vars/plans.yml", "files/charts/planb/Chart.yaml"} <= set(names)
    target = home / "collections"
    installed = _run(
        str(BIN / "ansible-galaxy"), "collection", "install", str(tarball), "-p", str(target), cwd=home, env=env
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return target


PLAYBOOK = """
- name: An ops playbook of its own, with planb.gke installed from the tarball
  hosts: localhost
  connection: local
  gather_facts: false
  module_defaults:
    group/planb.gke.gke:
      api_endpoint: "{{ endpoint }}"
      auth_kind: none
      project: PROJECT
      timeout: 60
      poll_interval: 0.1
  vars:
    ansible_python_interpreter: "{{ ansible_playbook_python }}"
    pool: "{{ 'tpu-v6e-16' | planb.gke.node_pool(flex_start=true) }}"
  tasks:
    - name: The seed's cluster
      planb.gke.gke_cluster:
        name: tpu-cluster
        location: us-east5-b
        version: "1.34"
    - name: Plan B, sized by the collection's own catalog facts
      planb.gke.gke_node_pool:
        name: dws-pool
        cluster: tpu-cluster
        location: us-east5-b
        machine_type: "{{ pool.machine_type }}"
        tpu_topology: "{{ pool.tpu_topology }}"
        autoscaling: {min_node_count: 0, max_node_count: "{{ pool.max_nodes }}", location_policy: ANY}
        reservation_affinity: NO_RESERVATION
        queued_provisioning: true
        flex_start: true
        auto_repair: false
    - name: Read it back
      planb.gke.gke_node_pool_info:
        name: dws-pool
        cluster: tpu-cluster
        location: us-east5-b
      register: found
    - name: Keep what GKE reports
      ansible.builtin.copy:
        content: "{{ found.node_pools | to_json }}"
        dest: "{{ playbook_dir }}/pools.json"
        mode: "0600"
""".replace("PROJECT", PROJECT)


def test_installed_tarball_converges_from_outside_the_checkout(
    controller: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    home, env = controller
    env["ANSIBLE_COLLECTIONS_PATH"] = str(_install(home, env))
    doc = _run(str(BIN / "ansible-doc"), "planb.gke.gke_node_pool", cwd=home, env=env)
    assert doc.returncode == 0 and str(home / "collections") in doc.stdout, doc.stdout + doc.stderr

    emulator = RunningEmulator(tmp_path / "emulator", port=0, op_seconds=0.05, kubeconfig=tmp_path / "none")
    try:
        (home / "site.yml").write_text(PLAYBOOK)
        argv = (str(BIN / "ansible-playbook"), "-i", "localhost,", "-e", f"endpoint={emulator.url}", "site.yml")
        first = _run(*argv, cwd=home, env=env)
        assert first.returncode == 0, first.stdout + first.stderr
        assert "changed=3" in first.stdout, first.stdout  # cluster, pool, the copy of what GKE reports
        writes_after_first = len(emulator.writes())
        second = _run(*argv, cwd=home, env=env)
        assert second.returncode == 0, second.stdout + second.stderr
        assert "changed=0" in second.stdout, second.stdout
        assert len(emulator.writes()) == writes_after_first
        paths = {entry["path"] for entry in emulator.store.request_log()}
    finally:
        emulator.stop()
    assert all(f"projects/{PROJECT}/" in path for path in paths if path.startswith("/v1/"))
    pools = json.loads((home / "pools.json").read_text())
    assert [(p["name"], p["config"]["machineType"], p["placementPolicy"]["tpuTopology"]) for p in pools] == [
        ("dws-pool", "ct6e-standard-4t", "4x4")
    ]
    assert pools[0]["autoscaling"]["maxNodeCount"] == 4 and pools[0]["config"]["flexStart"] is True
    assert yaml.safe_load(PLAYBOOK)[0]["module_defaults"]["group/planb.gke.gke"]["auth_kind"] == "none"
