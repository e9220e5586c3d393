"""`planb local capacity set`: the lifecycle switches per pool and per request, and what it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from planb.local.capacity import settings as settings_mod
from planb.local.capacity.settings import Lifecycle
from tests.support.integration.capacity import capacity_cli as capacity


def test_capacity_set_per_pool_and_per_request(tmp_path: Path) -> None:
    assert capacity(tmp_path, "set", "--booking-window", "5").returncode == 0
    assert capacity(tmp_path, "set", "--pool", "dws-pool", "--fail", "--delay", "9").returncode == 0
    done = capacity(tmp_path, "set", "--request", "default/*-dws-prov-1", "--max-run", "0")
    assert done.returncode == 0, done.stderr
    settings = settings_mod.load(tmp_path)
    assert settings.booking_window_seconds == 5
    assert settings.pools == {"dws-pool": Lifecycle(delay_seconds=9, fail=True)}
    assert settings.requests == {"default/*-dws-prov-1": Lifecycle(max_run_seconds=0)}
    assert capacity(tmp_path, "set", "--pool", "dws-pool", "--no-fail").returncode == 0
    assert settings_mod.load(tmp_path).pools["dws-pool"].fail is False
    assert capacity(tmp_path, "set", "--pool", "dws-pool", "--clear").returncode == 0
    assert settings_mod.load(tmp_path).pools == {}


def test_capacity_set_gke_s_multiple_podsets_flag_and_the_pool_backoff(tmp_path: Path) -> None:
    assert settings_mod.load(tmp_path).provisioning_request_multiple_podsets_enabled is True  # GKE's default
    assert settings_mod.load(tmp_path).node_group_backoff_seconds == settings_mod.GKE_INITIAL_BACKOFF_SECONDS
    done = capacity(tmp_path, "set", "--no-multiple-podsets-enabled", "--node-group-backoff", "2")
    assert done.returncode == 0, done.stderr
    settings = settings_mod.load(tmp_path)
    assert settings.provisioning_request_multiple_podsets_enabled is False
    assert settings.node_group_backoff_seconds == 2
    assert capacity(tmp_path, "set", "--multiple-podsets-enabled").returncode == 0
    assert settings_mod.load(tmp_path).provisioning_request_multiple_podsets_enabled is True
    done = capacity(tmp_path, "set", "--node-group-backoff", "-1")
    assert done.returncode == 2 and "--node-group-backoff must be >= 0" in done.stderr


def test_a_settings_file_with_a_flag_that_is_not_a_boolean_is_refused(tmp_path: Path) -> None:
    path = settings_mod.settings_file(tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"provisioning_request_multiple_podsets_enabled": "no"}')
    with pytest.raises(settings_mod.SettingsError, match="not true or false"):
        settings_mod.load(tmp_path)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--fail",), "add --pool POOL or --request NAMESPACE/NAME"),
        (("--max-run", "5"), "add --pool POOL or --request"),
        (("--pool", "p", "--booking-window", "-1"), "--booking-window must be >= 0"),
    ],
)
def test_capacity_set_refuses_what_it_cannot_apply(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    done = capacity(tmp_path, "set", *args)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "content",
    ['{"pools": []}', '{"pools": {"p": {"fail": "yes"}}}', '{"requests": {"x": {"delay_seconds": -1}}}'],
)
def test_a_bad_lifecycle_switch_in_the_file_is_named(tmp_path: Path, content: str) -> None:
    path = settings_mod.settings_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(content)
    with pytest.raises(settings_mod.SettingsError, match="is unreadable"):
        settings_mod.load(tmp_path)


def test_capacity_run_refuses_a_kubeconfig_of_another_cluster(tmp_path: Path) -> None:
    """Pointed at a real cluster it would write nodes and request states there: refused before any call."""
    kubeconfig = tmp_path / "gke-kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: gke\n"
        "clusters: [{name: gke, cluster: {server: 'https://34.118.0.1'}}]\n"
        "contexts: [{name: gke, context: {cluster: gke, user: gke}}]\nusers: [{name: gke, user: {token: t}}]\n"
    )
    done = capacity(tmp_path, "run", "--once", "--kubeconfig", str(kubeconfig), "--gke-endpoint", "http://127.0.0.1:1")
    assert done.returncode == 2, done.stderr
    assert "the capacity simulator refuses to start" in done.stderr and "'https://34.118.0.1'" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "flag", ["--delay", "--booking-window", "--scale-down-after", "--spot-notice", "--node-group-backoff"]
)
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999"])
def test_capacity_set_takes_only_finite_seconds(tmp_path: Path, flag: str, value: str) -> None:
    done = capacity(tmp_path, "set", f"{flag}={value}")
    assert done.returncode == 2 and "is not a finite number" in done.stderr, done.stderr
    assert not settings_mod.settings_file(tmp_path).exists()


def test_a_settings_file_with_nan_is_refused(tmp_path: Path) -> None:
    """JSON as Python writes and reads it allows NaN: the loaded settings must not."""
    path = settings_mod.settings_file(tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"provisioning_delay_seconds": NaN}')
    with pytest.raises(settings_mod.SettingsError, match="not a finite number"):
        settings_mod.load(tmp_path)
    path.write_text('{"pools": {"dws-pool": {"delay_seconds": Infinity}}}')
    with pytest.raises(settings_mod.SettingsError, match="not a finite number"):
        settings_mod.load(tmp_path)
