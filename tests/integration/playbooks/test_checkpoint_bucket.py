"""The cluster play checks the checkpoint bucket before its first write: a bucket in another region than the cluster's
(planb_checkpoint_bucket, made in the emulator's Cloud Storage beforehand) stops the play naming the bucket, its
location and the cluster's region, while the emulator saw only the rights check and the bucket's read."""

from __future__ import annotations

from pathlib import Path

from planb.local.gke_emulator.emulator import RunningEmulator
from planb.local.gke_emulator.store import list_clusters
from tests.support.integration.gke.gke_api import call
from tests.support.integration.gke.modules import ansible_playbook

#: inventories/local's project; its zone us-east5-b puts the cluster in us-east5.
PROJECT = "planb-local"
BUCKET = "planb-local-checkpoints"


def test_a_bucket_in_another_region_stops_the_play_before_any_write_naming_it_its_location_and_the_region(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    uniform = {"uniformBucketLevelAccess": {"enabled": True}}
    body = {"name": BUCKET, "location": "europe-west4", "iamConfiguration": uniform}
    assert call(emulator, "POST", f"/storage/v1/b?project={PROJECT}", body)[0] == 200
    made = len(emulator.store.request_log())
    env = {"GKE_API_ENDPOINT": emulator.url, "PLANB_STATE_DIR": str(tmp_path / "state")}
    done = ansible_playbook(
        "playbooks/cluster.yml", "-i", "inventories/local", "-e", f"planb_checkpoint_bucket=gs://{BUCKET}", env=env
    )
    out = done.stdout + done.stderr
    assert done.returncode != 0, out[-3000:]
    assert (
        f"planb's policy: the checkpoint bucket gs://{BUCKET} is in EUROPE-WEST4 (region), not in the cluster's "
        "region us-east5, because checkpoints would cross a region boundary: egress cost and latency" in out
    ), out[-3000:]
    # The rights check and the bucket's read, nothing else: no API enabled, no cluster.
    log = [(r["method"], r["path"], r["status"]) for r in emulator.store.request_log()[made:]]
    assert log == [
        ("POST", f"/cloudresourcemanager/v3/projects/{PROJECT}:testIamPermissions", 200),
        ("GET", f"/storage/v1/b/{BUCKET}", 200),
    ], log
    assert [w["path"] for w in emulator.writes()] == ["/storage/v1/b"]
    assert list_clusters(emulator.store.root.parent) == []
