"""The kueue_queues role's preflight as the queue tests run it: the chart values it derives from the inventory's
plans, and the pinned chart rendered with them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from planb import paths
from planb.catalog import golden

PLAYBOOK = """\
- name: Compute the queue values as roles/kueue_queues does
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Check the variables and derive the chart values
      ansible.builtin.include_role:
        name: kueue_queues
        tasks_from: preflight.yml
    - name: Hand the values to the test
      ansible.builtin.copy:
        content: "{{ kueue_queues_chart_values | to_json }}"
        dest: "{{ planb_test_out }}"
        mode: "0600"
"""

FOUR = [
    {"name": "reserved", "kind": "reservation", "slices": 1, "nodepool": "reserved-pool", "reservation": "r1"},
    {"name": "on-demand", "kind": "on-demand", "slices": 1, "nodepool": "on-demand-pool"},
    {"name": "dws", "kind": "dws", "slices": 1, "nodepool": "dws-pool"},
    {"name": "spot", "kind": "spot", "slices": 2, "nodepool": "spot-pool"},
]


def role(tmp_path: Path, extra: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    playbook = tmp_path / "queues.yml"
    playbook.write_text(PLAYBOOK)
    extra_vars = {
        "planb_test_out": str(tmp_path / "values.json"),
        "ansible_python_interpreter": sys.executable,
        **extra,
    }
    return subprocess.run(
        [
            str(Path(sys.executable).parent / "ansible-playbook"),
            "-i",
            "localhost,",
            "-c",
            "local",
            "-e",
            json.dumps(extra_vars),
            str(playbook),
        ],
        cwd=paths.REPO,
        env={
            **os.environ,
            "ANSIBLE_CONFIG": str(paths.REPO / "ansible.cfg"),
            "ANSIBLE_ROLES_PATH": str(paths.REPO / "collections/ansible_collections/planb/gke/roles"),
            "ANSIBLE_NOCOLOR": "1",
        },
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def chart_values_of(tmp_path: Path, extra: dict[str, Any]) -> dict[str, Any]:
    done = role(tmp_path, extra)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    result = json.loads((tmp_path / "values.json").read_text())
    assert isinstance(result, dict)
    return result


def render(tmp_path: Path, chart_values: dict[str, Any]) -> list[dict[str, Any]]:
    path = tmp_path / "chart-values.yaml"
    path.write_text(yaml.safe_dump(chart_values))
    done = golden.helm_template("-f", str(path))
    assert done.returncode == 0, done.stderr
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]
