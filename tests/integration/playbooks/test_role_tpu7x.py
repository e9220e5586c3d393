"""The gke_node_pool role with a multi-host TPU7x profile: it passes a workload policy instead of a TPU topology.

The catalog marks multi-host TPU7x profiles ``placement_policy_required``
(https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood); the role then sends
``placement_policy`` (placementPolicy.policyName) and no tpu_topology, and refuses to start without one.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

from planb.local.gke_emulator.emulator import RunningEmulator
from planb.paths import REPO
from tests.support.integration.gke.gke_api import workload_policy
from tests.support.integration.gke.modules import CLUSTER_ARGS, ModuleRunner, ansible_playbook

ZONE = "us-central1-c"  # a TPU7x zone (https://cloud.google.com/tpu/docs/regions-zones)


def _playbook(tmp_path: Path, emulator: RunningEmulator, policy: str) -> Path:
    play = [
        {
            "name": "A multi-host TPU7x pool",
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {
                    "name": "The pool",
                    "ansible.builtin.include_role": {"name": "gke_node_pool"},
                    "vars": {
                        "gke_node_pool_name": "ironwood-pool",
                        "gke_node_pool_cluster": CLUSTER_ARGS["name"],
                        "gke_node_pool_project": "planb-test",
                        "gke_node_pool_location": ZONE,
                        "gke_node_pool_profile": "tpu7x-2x2x2",
                        "gke_node_pool_placement_policy": policy,
                        "gke_node_pool_workload_metadata_mode": "",
                        "gke_node_pool_api_endpoint": emulator.url,
                        "gke_node_pool_auth_kind": "none",
                        "gke_node_pool_poll_interval": 0.05,
                    },
                }
            ],
        }
    ]
    path = tmp_path / "tpu7x.yml"
    path.write_text(yaml.safe_dump(play, sort_keys=False))
    return path


def _run(playbook: Path, tmp_path: Path) -> tuple[int, str]:
    env = {
        "ANSIBLE_ROLES_PATH": str(REPO / "collections/ansible_collections/planb/gke/roles"),
        "ANSIBLE_COLLECTIONS_PATH": str(REPO / "collections"),
        "PLANB_STATE_DIR": str(tmp_path / "state"),
    }
    done = ansible_playbook(
        str(playbook), "-i", "localhost,", "-c", "local", "-e", f"ansible_python_interpreter={sys.executable}", env=env
    )
    return done.returncode, done.stdout + done.stderr


def test_role_refuses_a_multi_host_tpu7x_pool_without_a_workload_policy(
    modules: ModuleRunner, emulator: RunningEmulator, tmp_path: Path
) -> None:
    rc, out = _run(_playbook(tmp_path, emulator, policy=""), tmp_path)
    assert rc != 0, out[-3000:]
    assert "workload policy" in out and "--accelerator-topology=2x2x2" in out and "tpu-ironwood" in out, out[-3000:]
    assert emulator.writes() == []


def test_role_passes_the_workload_policy_instead_of_the_topology(
    modules: ModuleRunner, emulator: RunningEmulator, tmp_path: Path
) -> None:
    modules.run("gke_cluster", {**CLUSTER_ARGS, "location": ZONE})
    workload_policy(emulator, "planb-test", "us-central1", "wp-2x2x2", "2x2x2")
    playbook = _playbook(tmp_path, emulator, policy="wp-2x2x2")
    rc, out = _run(playbook, tmp_path)
    assert rc == 0, out[-3000:]
    (pool,) = [p for p in emulator.store.node_pools.values() if p["name"] == "ironwood-pool"]
    assert pool["placementPolicy"] == {"policyName": "wp-2x2x2"}
    assert pool["autoscaling"]["maxNodeCount"] == 2
    writes = len(emulator.writes())
    rc, out = _run(playbook, tmp_path)
    assert rc == 0, out[-3000:]
    recap = re.search(r"localhost\s+: ok=\d+\s+changed=(\d+)", out)
    assert recap and recap.group(1) == "0", out[-3000:]
    assert len(emulator.writes()) == writes
