"""`planb capacity set`: the lifecycle switches per pool and per request, and what it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from planb.capacity import settings as settings_mod
from planb.capacity.settings import Lifecycle
from tests.capacity.conftest import capacity_cli as capacity


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
