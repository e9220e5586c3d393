"""The kueue_queues role's preflight as the queue tests run it: the chart values it derives from the inventory's
plans (once per session for the same inputs, those the test modules declare with `derive_ahead` in one run:
tests/support/shared/kueue/run_once.py), and the pinned chart rendered with them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import yaml

from planb import paths
from planb.build import golden
from tests.support.shared.kueue.role_playbook import failures_by_host, run_declared, run_for_hosts, run_playbook
from tests.support.shared.kueue.run_once import ahead, once

KIND = "kueue_queues chart values"
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


def _variables(out: Path) -> dict[str, Any]:
    # The preflight reads the version of the helm the role would run: the pinned one, as in local mode.
    return {"planb_test_out": str(out), "kueue_queues_helm_binary": str(paths.tool("helm"))}


def role(tmp_path: Path, extra: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return run_playbook(tmp_path / "queues.yml", PLAYBOOK, {**_variables(tmp_path / "values.json"), **extra})


def refusals(folder: Path, extras: list[dict[str, Any]]) -> list[tuple[str | None, Path]]:
    """For each of `extras`, in one run of one host each: what the output says of the role's failure on it (None when
    it passed), and the file its chart values would have been written to."""
    outs = [folder / f"values-{i}.json" for i in range(len(extras))]
    hosts = {
        f"input-{i}": {**_variables(out), **extra} for i, (extra, out) in enumerate(zip(extras, outs, strict=True))
    }
    failed = failures_by_host(run_for_hosts(folder, PLAYBOOK, hosts))
    return [(failed.get(f"input-{i}"), out) for i, out in enumerate(outs)]


def derive_ahead(*extras: dict[str, Any]) -> None:
    """Declare, at a test module's import, inputs its tests will give `chart_values_of`: derived together."""
    ahead(KIND, *extras)


def chart_values_of(tmp_path: Path, extra: dict[str, Any]) -> dict[str, Any]:
    """The chart values the role derives from `extra`; asserts that it succeeds."""
    run_declared(KIND, tmp_path / "declared", PLAYBOOK, lambda declared, out: {**_variables(out), **declared})
    return once(KIND, extra, lambda: _run_chart_values(tmp_path, extra))


def _run_chart_values(tmp_path: Path, extra: dict[str, Any]) -> dict[str, Any]:
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
