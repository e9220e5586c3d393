"""The kueue role's configuration as its own tasks compute it, and the pinned Kueue chart rendered with it.

`role_config` runs the role's `tasks/config.yml` against the pinned chart (.tools/manifests/kueue/chart) in helm or
host mode; `helm_installed_config` renders that chart with the values the role hands to Helm. Each runs once per
session for the same inputs (tests/support/shared/kueue/run_once.py), the role's for every input the test modules
declare with `configure_ahead` in one run.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb import paths
from tests.support.shared.chart.helm import YAML_LOADER
from tests.support.shared.kueue.role_playbook import run_declared, run_playbook
from tests.support.shared.kueue.run_once import ahead, once

KIND = "kueue role config"

PLAYBOOK = """\
- name: Compute the Kueue configuration as roles/kueue does
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Merge planb's settings into the chart's default
      ansible.builtin.include_role:
        name: kueue
        tasks_from: config.yml
    - name: Hand the result to the test
      ansible.builtin.copy:
        content: >-
          {{ {'helm_values': kueue_helm_values,
              'merged': kueue_manager_config_merged,
              'host_argument': kueue_manager_config_merged | to_json} | to_json }}
        dest: "{{ planb_test_out }}"
        mode: "0600"
"""


def chart() -> Path:
    return paths.manifests_dir() / "kueue" / "chart"


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is not built: run `make tools`")
    return path


def upstream_default() -> dict[str, Any]:
    """The pinned chart's own default manager configuration."""
    values = yaml.safe_load((need(chart()) / "values.yaml").read_text())
    config = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    assert isinstance(config, dict)
    return config


def configure_ahead(*inputs: tuple[str, dict[str, Any] | None]) -> None:
    """Declare, at a test module's import, the (mode, extra) its tests will give `role_config`: run together."""
    ahead(KIND, *([mode, extra or {}] for mode, extra in inputs))


def role_config(tmp_path: Path, mode: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run the role's config tasks against the pinned chart; what it would hand to helm or the host Kueue."""
    helm = need(paths.tool("helm"))
    run_declared(KIND, tmp_path / "declared", PLAYBOOK, lambda inputs, out: _variables(helm, inputs[0], out, inputs[1]))
    return once(KIND, [mode, extra or {}], lambda: _run_role_config(tmp_path, helm, mode, extra))


def _variables(helm: Path, mode: str, out: Path, extra: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "kueue_install_mode": mode,
        "kueue_helm_binary": str(helm),
        # Helm mode reads the chart it installs; here that is the pinned chart (no registry needed).
        "kueue_chart_ref": str(chart()),
        "kueue_local_chart_dir": str(chart()),
        "planb_test_out": str(out),
        **(extra or {}),
    }


def _run_role_config(tmp_path: Path, helm: Path, mode: str, extra: dict[str, Any] | None) -> dict[str, Any]:
    out = tmp_path / "kueue-config.json"
    done = run_playbook(tmp_path / "kueue-config.yml", PLAYBOOK, _variables(helm, mode, out, extra))
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    result = json.loads(out.read_text())
    assert isinstance(result, dict)
    return result


def helm_installed_config(tmp_path: Path, helm_values: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """`helm template` of the pinned chart with the role's values: the ConfigMap's configuration, all objects."""
    return once("kueue helm template", helm_values, lambda: _render_installed_config(tmp_path, helm_values))


def _render_installed_config(
    tmp_path: Path, helm_values: dict[str, Any]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    values = tmp_path / "values.json"
    values.write_text(json.dumps(helm_values))
    done = subprocess.run(
        [str(paths.tool("helm")), "template", "kueue", str(chart()), "--namespace", "kueue-system", "-f", str(values)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # The render is about 1.7 MB (the chart's CRDs): libyaml's loader reads it in a tenth of the pure-Python time.
    docs = [doc for doc in yaml.load_all(done.stdout, Loader=YAML_LOADER) if doc]
    (config_map,) = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "kueue-manager-config"]
    config = yaml.safe_load(config_map["data"]["controller_manager_config.yaml"])
    assert isinstance(config, dict)
    return config, docs
