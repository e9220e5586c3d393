"""Local mode's failover switch (planb.local.failover_settings) kept in one JSON file, as planb's other
switches are."""

from __future__ import annotations

from pathlib import Path

import pytest

from planb.local import failover_settings as settings
from planb.local.statefile import SettingsError


def test_no_file_is_failover_off(tmp_path: Path) -> None:
    assert settings.load(tmp_path) == settings.FailoverSettings()
    assert not settings.load(tmp_path).enabled


def test_what_planb_local_failover_saves_is_what_planb_local_up_reads(tmp_path: Path) -> None:
    wanted = settings.FailoverSettings(after_seconds=600, plan_a_flavor="reservation", namespaces="team-a,team-b")
    settings.save(tmp_path, wanted)
    assert settings.load(tmp_path) == wanted
    assert settings.load(tmp_path).enabled
    assert (tmp_path / "failover.json").stat().st_mode & 0o777 == 0o600


def test_a_file_of_an_older_planb_keeps_the_defaults_of_what_it_lacks(tmp_path: Path) -> None:
    (tmp_path / "failover.json").write_text('{"after_seconds": 90}\n')
    assert settings.load(tmp_path) == settings.FailoverSettings(after_seconds=90.0)


@pytest.mark.parametrize("text", ["{", "[]", '{"after_seconds": "ten"}', '{"metrics_port": null}'])
def test_a_file_it_cannot_use_names_the_file_and_the_fix(tmp_path: Path, text: str) -> None:
    file = tmp_path / "failover.json"
    file.write_text(text)
    with pytest.raises(SettingsError, match=f"failover settings file {file} is unreadable .*Fix: delete it"):
        settings.load(tmp_path)
