"""The cluster play checks the caller's rights before its first write: with one permission withheld in the emulator
(Cloud Resource Manager projects.testIamPermissions leaves it out), the play stops naming it and the role that grants
it, and the emulator saw no request but that one check."""

from __future__ import annotations

from pathlib import Path

from planb.local.gke_emulator.emulator import RunningEmulator
from planb.local.gke_emulator.store import list_clusters
from tests.support.integration.gke.gke_api import call
from tests.support.integration.gke.modules import ansible_playbook

#: inventories/local's project.
PROJECT = "planb-local"


def test_a_missing_permission_stops_the_play_before_any_write_naming_it_and_its_role(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    withheld = {"permission": "container.clusters.create", "granted": False}
    assert call(emulator, "POST", "/planb/v1/permissions", withheld)[0] == 200
    env = {"GKE_API_ENDPOINT": emulator.url, "PLANB_STATE_DIR": str(tmp_path / "state")}
    done = ansible_playbook("playbooks/cluster.yml", "-i", "inventories/local", env=env)
    out = done.stdout + done.stderr
    assert done.returncode != 0, out[-3000:]
    assert f"Missing rights on project {PROJECT}: the caller lacks 1 of the 8 permissions" in out, out[-3000:]
    assert (
        "container.clusters.create (role roles/container.admin or roles/container.clusterAdmin) to create the cluster"
        in out
    )
    # The rights check is the play's first request and its last: nothing was read past it, nothing written.
    log = [(r["method"], r["path"], r["status"]) for r in emulator.store.request_log()]
    assert log == [("POST", f"/cloudresourcemanager/v3/projects/{PROJECT}:testIamPermissions", 200)]
    assert emulator.writes() == [] and list_clusters(emulator.store.root.parent) == []
