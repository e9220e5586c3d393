"""site.yml refuses a bad inventory value before any change, against the emulator alone (no local stack).

Every value here is refused by playbooks/preflight.yml, the first play of site.yml, so the run never reaches the GKE
API nor Kubernetes: the emulator on a free port stands in for GKE, and its request log shows that nothing was written.
Each refusal is planb's sentence alone (the input, what is wrong, the fix), not wrapped in Ansible's words.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from planb.local.gke_emulator.emulator import RunningEmulator, is_write
from planb.local.gke_emulator.store import read_request_log
from planb.local.stack.ports import free_port
from planb.paths import REPO
from tests.support.integration.gke.modules import ansible_playbook
from tests.support.integration.gke.refusals import assert_plain_refusal

#: The plays of site.yml (its import_playbook order): a bad value must stop the run in the first one.
PREFLIGHT_PLAY = "PLAY [Validate the Kueue and queue inputs before any change]"
LATER_PLAYS = ("PLAY [GKE cluster and the node pools", "PLAY [Install Kueue and planb's queues]")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["-e", "planb_profile=tpu-v6e-5x5"], "unknown profile 'tpu-v6e-5x5': did you mean 'tpu-v6e-8x8'?"),
        (["-e", "planb_ondemand_slices=0"], "(plan 'on-demand'): slices 0 must be at least 1: planb's policy"),
        (["-e", '{"kueue_integrations": ["batch/job"]}'], "lacks ray.io/rayjob, so Kueue would ignore planb's jobs"),
        (["-e", "planb_ladder_mode=both"], "kueue_queues_ladder_mode=both (planb_ladder_mode) must be sequential or"),
        (
            ["-e", "planb_ladder_mode=concurrent", "-e", "planb_failover_after_minutes=10"],
            "planb_ladder_mode=concurrent is refused with planb_plans=['on-demand', 'dws'] and "
            "planb_failover_after_minutes=10: planb's policy:",
        ),
        (
            ["-e", "planb_ladder_mode=concurrent", "-e", "planb_migration_min_remaining=30"],
            "(planb_migration_min_remaining) is refused: planb's policy: only 0 is accepted, because Kueue v0.19.2 "
            "cannot express it",
        ),
        (
            ["-e", "planb_ladder_mode=concurrent", "-e", "planb_concurrent_last_acceptable_plan=gone"],
            "must be one of the ladder's plans (on-demand, dws) with migration mode TryPreferredFlavors",
        ),
    ],
    ids=[
        "unknown-profile",
        "zero-slices",
        "integrations-without-rayjob",
        "unknown-ladder-mode",
        "concurrent-with-failover",
        "migration-min-remaining",
        "last-acceptable-not-a-plan",
    ],
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
    assert_plain_refusal(out, message)
    writes = [r for r in read_request_log(state_dir) if is_write(r)]
    assert writes == [], f"the GKE emulator received a write: {writes}"
    recap = re.search(r"^localhost\s+: ok=\d+\s+changed=(\d+)\s+unreachable=0\s+failed=(\d+)", done.stdout, re.M)
    assert recap, done.stdout[-3000:]
    assert (recap.group(1), recap.group(2)) == ("0", "1"), recap.group(0)
    # Refused by the preflight play: the GKE and Kueue plays (the API calls, the kubeconfig) never started.
    assert PREFLIGHT_PLAY in done.stdout, done.stdout[-3000:]
    assert not [play for play in LATER_PLAYS if play in done.stdout], done.stdout[-3000:]


def test_gke_inventory_without_project_id_says_so_in_one_sentence(emulator: RunningEmulator, tmp_path: Path) -> None:
    """`site.yml -i inventories/gke --check` with PROJECT_ID unset: the inventory's own sentence, nothing sent."""
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TMPDIR")}
    env = {
        **keep,
        "HOME": str(tmp_path),
        "ZONE": "us-east5-b",
        "GKE_API_ENDPOINT": emulator.url,
        "GCP_AUTH_KIND": "accesstoken",
        "GCP_ACCESS_TOKEN": "t",
        "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ansible-tmp"),
    }
    command = [str(Path(sys.executable).parent / "ansible-playbook"), "site.yml", "-i", "inventories/gke", "--check"]
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    out = done.stdout + done.stderr
    assert done.returncode != 0, out[-4000:]
    assert_plain_refusal(
        out, "inventories/gke needs PROJECT_ID, the Google Cloud project ID to act on", "export PROJECT_ID=<project id>"
    )
    assert emulator.store.request_log() == []


def test_site_yml_with_nothing_at_the_local_endpoint_names_the_gke_inventory(tmp_path: Path) -> None:
    """ansible.cfg's default inventory is the local one: an operator who meant a real project and forgot `-i` is told
    which inventory ran and the command for the real one, at the first task, before any API call is retried."""
    port = str(free_port())  # nothing listens there
    env = {"PLANB_GKE_EMULATOR_PORT": port, "PLANB_STATE_DIR": str(tmp_path)}
    assert "GKE_API_ENDPOINT" not in os.environ  # the inventory's endpoint is then the port's
    done = ansible_playbook("site.yml", env=env, timeout=120)
    out = " ".join((done.stdout + done.stderr).split())  # the callback wraps long messages
    assert done.returncode != 0, out[-4000:]
    assert f"planb: nothing answers at http://127.0.0.1:{port}, the GKE emulator of local mode" in out, out[-4000:]
    assert "inventories/local" in out and "`ansible-playbook site.yml -i inventories/gke`" in out, out[-4000:]
    recap = re.search(r"localhost\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=0\s+failed=(\d+)", done.stdout)
    assert recap and recap.groups() == ("0", "0", "1"), done.stdout[-3000:]


def test_a_region_of_a_multikueue_manager_with_an_on_demand_rung_is_refused_before_any_change(tmp_path: Path) -> None:
    """inventories/regions: a region's ladder with an on-demand rung stops site.yml at its first task, in that region,
    with planb's policy and the fix; nothing is asked of any GKE API (none answers here)."""
    ladder = {"planb_plans": [{"name": "on-demand", "kind": "on-demand", "slices": 1}, {"name": "dws", "kind": "dws"}]}
    limit = ["--limit", "manager,us-east5"]
    env = {"PLANB_STATE_DIR": str(tmp_path)}
    done = ansible_playbook(
        "site.yml", "-i", "inventories/regions", *limit, "-e", json.dumps(ladder), env=env, timeout=120
    )
    out = " ".join((done.stdout + done.stderr).split())
    assert done.returncode != 0, out[-4000:]
    assert "planb: region us-east5 has on-demand rung(s) in planb_plans. planb's policy:" in out, out[-4000:]
    assert "Fix: remove those rungs from this region's planb_plans in the inventory" in out, out[-4000:]
    recap = re.search(r"^us-east5\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=0\s+failed=(\d+)", done.stdout, re.M)
    assert recap and recap.groups() == ("0", "0", "1"), done.stdout[-3000:]
    assert "PLAY [GKE cluster and the node pools" not in done.stdout, done.stdout[-3000:]


def test_a_region_of_a_multikueue_manager_with_failover_on_is_refused_before_any_change(tmp_path: Path) -> None:
    """A region's failover controller would move the manager's copies by editing their spec, which
    makes Kueue on the manager delete them (docs/regions.md, option C, point 3): refused in that region at the first
    play, with planb's policy and the fix; nothing is asked of any GKE API."""
    limit = ["--limit", "manager,us-east5"]
    env = {"PLANB_STATE_DIR": str(tmp_path)}
    done = ansible_playbook(
        "site.yml", "-i", "inventories/regions", *limit, "-e", "planb_failover_after_minutes=10", env=env, timeout=120
    )
    out = " ".join((done.stdout + done.stderr).split())
    assert done.returncode != 0, out[-4000:]
    said = "planb: region us-east5 has planb_failover_after_minutes=10. planb's policy: a region of a"
    assert said in out, out[-4000:]
    assert "Fix: set planb_failover_after_minutes to 0 for this region in the inventory" in out, out[-4000:]
    recap = re.search(r"^us-east5\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=0\s+failed=(\d+)", done.stdout, re.M)
    assert recap and recap.groups() == ("1", "0", "1"), done.stdout[-3000:]
    assert "PLAY [GKE cluster and the node pools" not in done.stdout, done.stdout[-3000:]
    assert "ignores Workloads carrying" not in (REPO / "docs" / "regions.md").read_text()  # the page says what runs


def test_a_dws_rung_outside_gkes_flex_start_zones_is_refused_by_name_with_the_page(emulator: RunningEmulator) -> None:
    """The tutorial's ladder (on-demand, then DWS) in europe-west4-a, a zone with TPU v6e but not
    one GKE's flex-start page lists for it: the DWS pool is refused by name with the page and its date, as Google's
    requirement, before any API call, and the emulator receives no write."""
    from planb.catalog import zones

    state_dir = emulator.store.root.parent
    env = {
        "GKE_API_ENDPOINT": emulator.url,
        "PLANB_GKE_EMULATOR_PORT": emulator.url.rsplit(":", 1)[1],
        "PLANB_STATE_DIR": str(state_dir),
        "ZONE": "europe-west4-a",
    }
    done = ansible_playbook("site.yml", "-i", "inventories/local", env=env, timeout=120)
    out = " ".join((done.stdout + done.stderr).split())
    assert done.returncode != 0, out[-4000:]
    assert_plain_refusal(
        out,
        "zone europe-west4-a is not a zone where GKE offers flex-start for TPU v6e (ct6e-standard-4t)",
        f'({zones.FLEX_START_ZONES_URL}, "Requirements", as read {zones.FLEX_START_ZONES_AS_OF})',
        "This is Google's requirement, not planb's policy.",
    )
    assert "dws/dws-pool" in out, out[-4000:]  # the pool refused, by its plan and name
    writes = [r for r in read_request_log(state_dir) if is_write(r)]
    assert writes == [], f"the GKE emulator received a write: {writes}"
    recap = re.search(r"^localhost\s+: ok=\d+\s+changed=(\d+)\s+unreachable=0\s+failed=(\d+)", done.stdout, re.M)
    assert recap and (recap.group(1), recap.group(2)) == ("0", "1"), done.stdout[-3000:]
