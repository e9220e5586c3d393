"""The local stack's Kueue keeps the configuration the kueue role hands it, under its host-only settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from planb.local.stack.errors import LocalStackError
from planb.local.stack.kueue_settings import (
    KueueSettings,
    configuration,
    load_settings,
    parse_manager_config,
    save_settings,
)

BASE: dict[str, Any] = {
    "apiVersion": "config.kueue.x-k8s.io/v1beta2",
    "kind": "Configuration",
    "webhook": {"port": 9443},
    "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
    "clientConnection": {"qps": 300, "burst": 500},
    "integrations": {"frameworks": ["batch/job", "ray.io/rayjob"]},
}


def test_host_settings_are_laid_over_the_given_configuration(tmp_path: Path) -> None:
    settings = KueueSettings(frameworks=("batch/job", "ray.io/rayjob", "ray.io/raycluster"), manager_config=BASE)
    config = configuration(settings, tmp_path)
    assert config["clientConnection"] == {"qps": 300, "burst": 500}
    assert config["leaderElection"] == {"leaderElect": False, "resourceName": "c1f6bfd2.kueue.x-k8s.io"}
    assert config["webhook"] == {"host": "127.0.0.1", "port": settings.webhook_port, "certDir": str(tmp_path)}
    assert config["integrations"]["frameworks"] == ["batch/job", "ray.io/rayjob", "ray.io/raycluster"]
    assert BASE["leaderElection"]["leaderElect"] is True  # the input is not changed


def test_without_a_configuration_the_host_kueue_runs_as_before(tmp_path: Path) -> None:
    config = configuration(KueueSettings(), tmp_path)
    assert set(config) == {
        "apiVersion",
        "kind",
        "namespace",
        "health",
        "metrics",
        "webhook",
        "leaderElection",
        "internalCertManagement",
        "integrations",
    }


def test_the_configuration_survives_a_restart_and_old_settings_files_load(tmp_path: Path) -> None:
    path = tmp_path / "kueue-settings.json"
    settings = KueueSettings(manager_config=BASE)
    save_settings(settings, path)
    assert load_settings(path) == settings

    old = json.loads(path.read_text())
    del old["manager_config"]  # written by a planb before the role merged the chart's defaults
    path.write_text(json.dumps(old))
    assert load_settings(path).manager_config == {}

    path.write_text(json.dumps({**old, "manager_config": ["not", "a", "mapping"]}))
    with pytest.raises(LocalStackError, match="Fix: delete it"):
        load_settings(path)


@pytest.mark.parametrize(("text", "message"), [("{nope", "is not JSON"), ("[1]", "must be a JSON object")])
def test_a_bad_manager_config_argument_is_refused(text: str, message: str) -> None:
    with pytest.raises(LocalStackError, match=message):
        parse_manager_config(text)
