"""`ansible-playbook site.yml --check --diff` on a project with no cluster yet: the seed's inventory against the
GKE emulator alone (no cluster means no API server to reach, so no stack is needed).

The run shows what it would create (the cluster, both pools, with their diffs) and says Kueue and the queues
would be installed once the cluster exists; it sends GKE no write and leaves no kubeconfig behind.
"""

from __future__ import annotations

from pathlib import Path

from planb.local.gke_emulator.emulator import RunningEmulator
from planb.local.gke_emulator.store import list_node_pools
from tests.support.integration.gke.modules import ansible_playbook


def test_check_diff_on_a_fresh_project_changes_nothing(emulator: RunningEmulator, tmp_path: Path) -> None:
    state = tmp_path / "planb-state"
    env = {"GKE_API_ENDPOINT": emulator.url, "PLANB_STATE_DIR": str(state)}
    done = ansible_playbook("site.yml", "--check", "--diff", env=env)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    # The diffs of what it would create: both plans' pools, plan B's with queued provisioning.
    assert "+    name: on-demand-pool" in out and "+    name: dws-pool" in out, out[-4000:]
    assert "+    queuedProvisioning:\n+        enabled: true" in out, out[-4000:]
    words = " ".join(out.split())  # the messages as the YAML callback folds them
    assert "does not exist yet (no cluster): Kueue v0.19.2 would be installed." in words, out[-4000:]
    assert "does not exist yet (no cluster): the queues of profile tpu-v6e-4x4 would be installed." in words
    assert emulator.writes() == [], "the GKE emulator received a write"
    assert list_node_pools(emulator.store.root.parent) == []
    assert not list(state.rglob("*kubeconfig*")), "a check run wrote a kubeconfig"
