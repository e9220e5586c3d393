"""Stockout failover is on by default, and Kueue's eviction and requeue match it (docs/failover.md, "The default
wait"): what playbooks/vars/kueue.yml makes of each shipped inventory's defaults, evaluated by Ansible itself (an
ad-hoc debug of the play's variables; no play runs, nothing is asked of any API)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from planb.paths import REPO

VARS = REPO / "collections/ansible_collections/planb/gke/playbooks/vars/kueue.yml"
#: Kueue's waitForPodsReady with failover on: the wait as the timeout, no blocked admission, the requeue counted from
#: the eviction after 5 s (kueue v0.19.2 apis/config/v1beta2/configuration_types.go), no backoffLimitCount.
MOVE_REQUEUE = {"timestamp": "Eviction", "backoffBaseSeconds": 5}


def play_vars(inventory: str | Path, *extra: str) -> dict[str, dict[str, Any]]:
    """Per host: the failover minutes the roles get and Kueue's waitForPodsReady (None: Kueue's own defaults)."""
    msg = "msg={{ {'after': kueue_queues_failover_after_minutes | float, 'wait': kueue_manager_config.waitForPodsReady | default(None)} }}"  # noqa: E501
    done = subprocess.run(
        [str(Path(sys.executable).parent / "ansible"), "all", "-i", str(inventory), "-e", f"@{VARS}", *extra,
         "-m", "ansible.builtin.debug", "-a", msg],
        cwd=REPO, capture_output=True, text=True, timeout=120,
        env={**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1",
             "ANSIBLE_CALLBACK_RESULT_FORMAT": "json"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    found = re.findall(r"^(\S+) \| SUCCESS => (\{.*?^\})", done.stdout, re.M | re.S)
    assert found, done.stdout[-3000:]
    return {host: json.loads(body)["msg"] for host, body in found}


def on(seconds: int) -> dict[str, Any]:
    return {"timeout": f"{seconds}s", "blockAdmission": False, "requeuingStrategy": MOVE_REQUEUE}


def test_a_real_project_moves_a_stocked_out_job_after_ten_minutes() -> None:
    assert play_vars(REPO / "inventories/gke") == {"localhost": {"after": 10.0, "wait": on(600)}}


def test_an_inventory_without_the_variable_gets_the_same_default(tmp_path: Path) -> None:
    inventory = tmp_path / "hosts.yml"
    inventory.write_text("all:\n  hosts:\n    localhost: {ansible_connection: local}\n")
    assert play_vars(inventory) == {"localhost": {"after": 10.0, "wait": on(600)}}


def test_the_local_stack_moves_it_after_the_same_wait_in_its_own_time() -> None:
    assert play_vars(REPO / "inventories/local") == {"localhost": {"after": 0.25, "wait": on(15)}}


@pytest.mark.parametrize("inventory", ["inventories/gke", "inventories/local"])
def test_the_concurrent_ladder_mode_turns_it_off_and_leaves_kueue_its_own_defaults(inventory: str) -> None:
    got = play_vars(REPO / inventory, "-e", "planb_ladder_mode=concurrent")
    assert got == {"localhost": {"after": 0.0, "wait": None}}


@pytest.mark.parametrize("inventory", ["inventories/regions", "inventories/gke-regions"])
def test_every_region_and_manager_of_multikueue_keeps_it_off(inventory: str) -> None:
    got = play_vars(REPO / inventory)
    assert "manager" in got and len(got) >= 3, got
    assert set(map(json.dumps, got.values())) == {json.dumps({"after": 0.0, "wait": None})}, got
