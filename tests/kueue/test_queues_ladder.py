"""roles/kueue_queues turns the inventory's ordered plans (planb_plans) into the chart's queues.ladder
: one flavor per plan in order, each plan's quota its slices of the profile; bad plans are
refused before anything is installed, naming the entry and the fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb import paths
from planb.catalog import golden, values

pytestmark = pytest.mark.tools

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


def _role(tmp_path: Path, extra: dict[str, Any]) -> subprocess.CompletedProcess[str]:
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


def _values(tmp_path: Path, extra: dict[str, Any]) -> dict[str, Any]:
    done = _role(tmp_path, extra)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    result = json.loads((tmp_path / "values.json").read_text())
    assert isinstance(result, dict)
    return result


def _render(tmp_path: Path, chart_values: dict[str, Any]) -> list[dict[str, Any]]:
    path = tmp_path / "chart-values.yaml"
    path.write_text(yaml.safe_dump(chart_values))
    done = golden.helm_template("-f", str(path))
    assert done.returncode == 0, done.stderr
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def test_four_plans_become_the_chart_s_ladder_in_order(tmp_path: Path) -> None:
    chart = _values(tmp_path, {"kueue_queues_ladder": FOUR})
    one = values.chart_values("tpu-v6e-4x4", on_demand_slices=1)["queues"]["quotas"]["onDemand"]
    two = values.chart_values("tpu-v6e-4x4", on_demand_slices=2)["queues"]["quotas"]["onDemand"]
    assert chart["queues"]["ladder"] == [
        {"name": "reserved", "kind": "reservation", "slices": 1, "nodepool": "reserved-pool", "reservation": "r1",
         "quota": one},
        {"name": "on-demand", "kind": "on-demand", "slices": 1, "nodepool": "on-demand-pool", "quota": one},
        {"name": "dws", "kind": "dws", "slices": 1, "nodepool": "dws-pool", "quota": one},
        {"name": "spot", "kind": "spot", "slices": 2, "nodepool": "spot-pool", "quota": two},
    ]  # fmt: skip
    # planb's policy: room on the CPU flavor for a head and a submitter per slice of the ladder (5 slices here).
    assert chart["queues"]["quotas"]["defaultCpu"] == {"cpu": 15, "memory": "25Gi"}
    (cq,) = [o for o in _render(tmp_path, chart) if o["kind"] == "ClusterQueue"]
    flavors = cq["spec"]["resourceGroups"][0]["flavors"]
    assert [f["name"] for f in flavors] == ["default-cpu", "reserved", "on-demand", "dws", "spot"]
    assert flavors[-1]["resources"][2] == {"name": "google.com/tpu", "nominalQuota": 32}


def test_the_seed_s_two_plans_as_a_ladder_keep_the_chart_s_cpu_quota(tmp_path: Path) -> None:
    chart = _values(tmp_path, {"kueue_queues_ladder": [FOUR[1], FOUR[2]]})
    assert chart["queues"]["quotas"]["defaultCpu"] == {"cpu": 10, "memory": "20Gi"}


def test_no_plans_keep_the_seed_s_values(tmp_path: Path) -> None:
    chart = _values(tmp_path, {"kueue_queues_ladder": []})
    assert "ladder" not in chart["queues"]
    assert chart["plans"] == {"onDemand": {"planb.dev/plan": "on-demand"}, "dws": {"planb.dev/plan": "dws"}}


@pytest.mark.parametrize(
    ("ladder", "message"),
    [
        ({"name": "spot"}, "kueue_queues_ladder={'name': 'spot'} must be a list of plans"),
        ([{**FOUR[1], "kind": "preemptible"}], "kueue_queues_ladder[0]="),
        ([{**FOUR[1], "slices": 0}], "slices (a whole number >= 1)"),
        ([{**FOUR[1], "name": "On Demand"}], "name (a DNS label of at most 63 characters"),
        ([{k: v for k, v in FOUR[0].items() if k != "reservation"}], "a reservation plan also reservation"),
        ([FOUR[1], {**FOUR[3], "name": "on-demand"}], "names a plan twice: ['on-demand', 'on-demand']"),
    ],
)
def test_bad_plans_are_refused(tmp_path: Path, ladder: Any, message: str) -> None:
    done = _role(tmp_path, {"kueue_queues_ladder": ladder})
    assert done.returncode != 0
    assert message in done.stdout, done.stdout[-3000:]
    assert not (tmp_path / "values.json").exists()
