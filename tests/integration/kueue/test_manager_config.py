"""Kueue as the seed installs it: roles/kueue merges planb's settings into the chart's default configuration.

The upstream default is read from the pinned chart itself (`managerConfig.controllerManagerConfigYaml`
in .tools/manifests/kueue/chart/values.yaml); what the role installs is what its own tasks compute
(`tasks/config.yml`), rendered by `helm template` of that chart (the ConfigMap kueue-manager-config)
or laid under the local stack's host-only settings.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb import paths
from planb.local.stack.kueue_settings import KueueSettings, configuration, feature_gates_flag, parse_manager_config
from tests.support.shared.kueue.kueue_role import (
    configure_ahead,
    helm_installed_config,
    need,
    role_config,
    upstream_default,
)

pytestmark = pytest.mark.tools

#: The integrations planb submits; the role adds them to the chart's list.
PLANB_FRAMEWORKS = ("ray.io/rayjob", "ray.io/raycluster")
#: planb's settings as an inventory gives them.
PLANB_SETTINGS = {
    "kueue_manager_config": {
        "clientConnection": {"qps": 50},
        "waitForPodsReady": {"timeout": "10m"},
        "integrations": {"frameworks": ["batch/job"]},
    },
    "kueue_integrations": ["ray.io/rayjob", "ray.io/raycluster", "example.com/extra"],
}
configure_ahead(("helm", None), ("helm", PLANB_SETTINGS), ("host", None))


def lost(upstream: Any, installed: Any, where: str = "", values: bool = True) -> list[str]:
    """What of `upstream` `installed` lacks: every key (recursively) and every list item.

    With `values`, a scalar that differs counts as lost too.
    """
    if isinstance(upstream, dict):
        if not isinstance(installed, dict):
            return [f"{where or '<root>'}: a mapping upstream, {installed!r} installed"]
        out: list[str] = []
        for key, value in upstream.items():
            path = f"{where}.{key}" if where else str(key)
            if key not in installed:
                out.append(f"{path}: missing")
            else:
                out.extend(lost(value, installed[key], path, values))
        return out
    if isinstance(upstream, list):
        if not isinstance(installed, list):
            return [f"{where}: a list upstream, {installed!r} installed"]
        return [f"{where}: lacks {item!r}" for item in upstream if item not in installed]
    if values and upstream != installed:
        return [f"{where}: {upstream!r} upstream, {installed!r} installed"]
    return []


def test_helm_install_keeps_every_key_of_the_charts_default_configuration(tmp_path: Path) -> None:
    upstream = upstream_default()
    result = role_config(tmp_path, "helm")
    installed, docs = helm_installed_config(tmp_path, result["helm_values"])

    # Nothing of upstream's default is dropped or changed (client qps/burst, controller
    # concurrency, leader election, every default integration) ...
    assert lost(upstream, installed) == []
    assert installed["clientConnection"] == {"qps": 300, "burst": 500}
    # Kueue reports each ClusterQueue's usage per flavor, which the chart's dashboard reads (off in Kueue's default).
    assert installed["metrics"] == {**upstream["metrics"], "enableClusterQueueResources": True}
    # ... and planb's integrations are added to the chart's list, not put in its place.
    frameworks = installed["integrations"]["frameworks"]
    assert frameworks[: len(upstream["integrations"]["frameworks"])] == upstream["integrations"]["frameworks"]
    assert set(PLANB_FRAMEWORKS) <= set(frameworks)
    assert len(frameworks) == len(set(frameworks))
    # The feature gates still reach the controller's command line.
    (deployment,) = [d for d in docs if d["kind"] == "Deployment"]
    (manager,) = [c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "manager"]
    assert "--feature-gates=ElasticJobsViaWorkloadSlices=true" in manager["args"]


def test_planb_settings_are_merged_into_the_default_not_over_it(tmp_path: Path) -> None:
    upstream = upstream_default()
    result = role_config(tmp_path, "helm", PLANB_SETTINGS)
    installed, _ = helm_installed_config(tmp_path, result["helm_values"])

    assert installed["clientConnection"] == {"qps": 50, "burst": 500}
    assert installed["waitForPodsReady"] == {"timeout": "10m"}
    assert installed["metrics"]["enableClusterQueueResources"] is True
    # A list given in kueue_manager_config replaces the chart's; planb's integrations are still added.
    assert installed["integrations"]["frameworks"] == ["batch/job", *PLANB_FRAMEWORKS, "example.com/extra"]
    assert lost({k: v for k, v in upstream.items() if k not in ("clientConnection", "integrations")}, installed) == []


def host_config(tmp_path: Path) -> tuple[dict[str, Any], KueueSettings]:
    """The configuration the local stack's Kueue runs with after the role, in host mode."""
    result = role_config(tmp_path, "host")
    merged = parse_manager_config(result["host_argument"])  # what `planb local kueue --manager-config` gets
    assert merged == result["merged"]
    settings = KueueSettings(frameworks=tuple(merged["integrations"]["frameworks"]), manager_config=merged)
    return configuration(settings, tmp_path / "certs"), settings


def test_local_mode_keeps_every_default_key_under_its_host_overrides(tmp_path: Path) -> None:
    upstream = upstream_default()
    config, settings = host_config(tmp_path)

    assert lost(upstream, config, values=False) == []
    assert set(PLANB_FRAMEWORKS) <= set(config["integrations"]["frameworks"])
    assert config["clientConnection"] == upstream["clientConnection"]
    assert config["controller"] == upstream["controller"]
    # The host-only settings are laid on top.
    assert config["webhook"] == {"host": "127.0.0.1", "port": settings.webhook_port, "certDir": str(tmp_path / "certs")}
    assert config["health"]["healthProbeBindAddress"] == f"127.0.0.1:{settings.health_port}"
    metrics = {"bindAddress": f"127.0.0.1:{settings.metrics_port}", "enableClusterQueueResources": True}
    assert config["metrics"] == metrics
    assert config["leaderElection"]["leaderElect"] is False
    assert config["internalCertManagement"] == {"enable": False}


def _kueue_accepts(tmp_path: Path, config: dict[str, Any], gates: dict[str, bool]) -> None:
    """The pinned Kueue loads and validates `config`; it stops later, at the missing kubeconfig."""
    kueue = need(paths.tool("kueue"))
    config_file = tmp_path / "kueue-config.yaml"
    config_file.write_text(yaml.safe_dump(config))
    done = subprocess.run(
        [
            str(kueue),
            f"--config={config_file}",
            f"--feature-gates={feature_gates_flag(gates)}",
            f"--kubeconfig={tmp_path / 'no-such-kubeconfig'}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    output = done.stdout + done.stderr
    assert "Unable to load the configuration" not in output, output[-3000:]
    assert "Unable to validate the configuration" not in output, output[-3000:]
    assert '"msg":"Initializing"' in output, output[-3000:]


def test_the_pinned_kueue_accepts_the_local_mode_configuration(tmp_path: Path) -> None:
    config, settings = host_config(tmp_path)
    _kueue_accepts(tmp_path, config, settings.feature_gates)


def test_the_pinned_kueue_accepts_the_helm_configuration(tmp_path: Path) -> None:
    installed, _ = helm_installed_config(tmp_path, role_config(tmp_path, "helm")["helm_values"])
    _kueue_accepts(tmp_path, installed, {"ElasticJobsViaWorkloadSlices": True})
