"""site.yml refuses a bad inventory value before any change, against the emulator alone (no local stack).

Every value here is refused by playbooks/preflight.yml, the first play of site.yml, so the run never reaches the GKE
API nor Kubernetes: the emulator on a free port stands in for GKE, and its request log shows that nothing was written.
"""

from __future__ import annotations

import re

import pytest

from planb.gke.emulator import RunningEmulator
from planb.gke.store import read_request_log
from tests.gke.conftest import ansible_playbook

#: The plays of site.yml (its import_playbook order): a bad value must stop the run in the first one.
PREFLIGHT_PLAY = "PLAY [Validate the Kueue and queue inputs before any change]"
LATER_PLAYS = ("PLAY [GKE cluster and the node pools", "PLAY [Install Kueue and planb's queues]")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["-e", "planb_profile=tpu-v6e-5x5"], "5x5"),
        (["-e", "planb_ondemand_slices=0"], "planb_ondemand_slices"),
        (["-e", '{"kueue_integrations": ["batch/job"]}'], "ray.io/rayjob"),
    ],
    ids=["unknown-profile", "zero-slices", "integrations-without-rayjob"],
)
def test_bad_inventory_value_fails_before_any_change(emulator: RunningEmulator, extra: list[str], message: str) -> None:
    state_dir = emulator.store.root.parent
    env = {
        "GKE_API_ENDPOINT": emulator.url,
        "PLANB_GKE_EMULATOR_PORT": emulator.url.rsplit(":", 1)[1],
        "PLANB_STATE_DIR": str(state_dir),
    }
    done = ansible_playbook("site.yml", "-i", "inventories/local", *extra, env=env, timeout=120)
    out = done.stdout + done.stderr
    assert done.returncode != 0, out[-4000:]
    assert message in out, out[-4000:]
    writes = [r for r in read_request_log(state_dir) if r["method"] != "GET"]
    assert writes == [], f"the GKE emulator received a write: {writes}"
    recap = re.search(r"^localhost\s+: ok=\d+\s+changed=(\d+)\s+unreachable=0\s+failed=(\d+)", done.stdout, re.M)
    assert recap, done.stdout[-3000:]
    assert (recap.group(1), recap.group(2)) == ("0", "1"), recap.group(0)
    # Refused by the preflight play: the GKE and Kueue plays (the API calls, the kubeconfig) never started.
    assert PREFLIGHT_PLAY in done.stdout, done.stdout[-3000:]
    assert not [play for play in LATER_PLAYS if play in done.stdout], done.stdout[-3000:]
