"""`planb local up --regions N`'s layout (planb.local.regions): the members, their state, their ports, the refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planb.catalog.zones import zones
from planb.local import loopback, regions
from planb.local.apiserver import PORT as APISERVER_BASE


@pytest.fixture(autouse=True)
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PLANB_STATE_DIR", str(tmp_path))
    return tmp_path


def test_three_regions_are_a_manager_and_three_stacks_each_with_its_own_state_and_ports(state: Path) -> None:
    members = regions.layout(3)
    assert [m.name for m in members] == ["manager", "us-east5", "europe-west4", "asia-northeast1"]
    assert [m.offset for m in members] == [0, 100, 200, 300]
    assert len({m.state for m in members}) == 4 and all(m.state.parent == state / "regions" for m in members)
    # Each member's API server (and every other fixed port) moves by its offset, so no two meet.
    apiservers = {loopback.port(APISERVER_BASE - loopback.offset(), m.env()) for m in members}
    assert len(apiservers) == 4
    assert len({m.env()["PLANB_GKE_EMULATOR_PORT"] for m in members}) == 4
    manager, us, *_ = members
    assert "REGION" not in manager.env() and manager.env()["PLANB_STATE_DIR"] == str(state / "regions" / "manager")
    assert us.env()["REGION"] == "us-east5" and us.env()["ZONE"] == "us-east5-b"
    assert us.kubeconfig == state / "regions" / "us-east5" / "local" / "kubeconfig"


def test_every_region_s_zone_offers_the_default_profile_s_tpus() -> None:
    """A region's site.yml converge checks its zone against Google's TPU list (planb.catalog.zones)."""
    offered = set(zones("v6e"))
    assert {zone for _, zone in regions.REGIONS} <= offered


@pytest.mark.parametrize("count", [0, 4, -1])
def test_a_count_outside_one_to_three_is_refused_naming_the_regions_and_the_fix(count: int) -> None:
    with pytest.raises(regions.RegionsError) as refused:
        regions.layout(count)
    assert f"--regions {count}" in str(refused.value) and "us-east5, europe-west4, asia-northeast1" in str(
        refused.value
    )
    assert "Fix: --regions 3" in str(refused.value)


def test_down_and_status_act_on_the_members_the_last_up_recorded(state: Path) -> None:
    assert regions.recorded() == []
    (state / "regions").mkdir()
    (state / "regions" / "layout.json").write_text(json.dumps({"regions": 2}))
    assert [m.name for m in regions.recorded()] == ["manager", "us-east5", "europe-west4"]
    (state / "regions" / "layout.json").write_text("not json")
    assert regions.recorded() == []


def test_up_with_another_count_than_the_running_one_is_refused_before_anything_starts(state: Path) -> None:
    (state / "regions").mkdir()
    (state / "regions" / "layout.json").write_text(json.dumps({"regions": 2}))
    with pytest.raises(regions.RegionsError, match=r"2 region\(s\) run already .* planb local down --regions"):
        regions.up(3)
    assert not (state / "regions" / "manager").exists()
