"""GKE's flex-start zones: carried with their page and date, a DWS rung outside them is refused as
Google's requirement (not planb's policy), and the shipped inventories put every DWS rung inside them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb.build import collection
from planb.catalog import profiles, tpu, zones
from planb.paths import REPO


def test_flex_start_zones_are_sourced_dated_and_within_each_generations_tpu_zones() -> None:
    assert zones.FLEX_START_ZONES_URL == "https://cloud.google.com/kubernetes-engine/docs/concepts/provisioning-model"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", zones.FLEX_START_ZONES_AS_OF)
    offered = {g.name for g in tpu.GENERATIONS if g.flex_start}
    assert set(zones.FLEX_START_ZONES) == offered == {"v5e", "v5p", "v6e"}
    for generation, listed in zones.FLEX_START_ZONES.items():
        assert listed and set(listed) <= set(zones.zones(generation)), generation
    # The tutorial's zone is one; the regions inventory's old europe-west4-a is not.
    assert "us-east5-b" in zones.flex_start_zones("v6e") and "europe-west4-a" not in zones.flex_start_zones("v6e")
    assert zones.flex_start_zones("tpu7x") == () and zones.flex_start_zones("v4") == ()


def test_collection_facts_carry_the_flex_start_zones_with_page_and_date() -> None:
    from ansible_collections.planb.gke.plugins.module_utils._generated.machine_types import FACTS

    assert collection.generated()["machine_types.py"][1] == FACTS
    v6e = FACTS["ct6e-standard-4t"]
    assert v6e["flex_start_zones"] == list(zones.flex_start_zones("v6e"))
    assert v6e["flex_start_zones_url"] == zones.FLEX_START_ZONES_URL
    assert v6e["flex_start_zones_as_of"] == zones.FLEX_START_ZONES_AS_OF


def _dws_pool(location: str, **extra: Any) -> Any:
    from ansible_collections.planb.gke.plugins.module_utils.node_pool_request import NodePoolRequest

    return NodePoolRequest.of(
        {
            "project": "planb-test",
            "auth_kind": "none",
            "api_endpoint": "http://127.0.0.1:9",
            "name": "dws-pool",
            "cluster": "c",
            "location": location,
            "state": "present",
            "machine_type": "ct6e-standard-4t",
            "tpu_topology": "4x4",
            "autoscaling": {"enabled": True, "min_node_count": 0, "max_node_count": 4, "location_policy": "ANY"},
            "reservation_affinity": "NO_RESERVATION",
            "initial_node_count": 0,
            "flex_start": True,
            "queued_provisioning": True,
            "auto_repair": False,
            "check_tpu_zone": True,
            **extra,
        }
    )


def test_a_dws_tpu_pool_outside_the_list_is_refused_as_googles_requirement_with_the_page() -> None:
    from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError
    from ansible_collections.planb.gke.plugins.module_utils.validate_pool import validate_node_pool

    with pytest.raises(GkeError) as refused:
        validate_node_pool(_dws_pool("europe-west4-a"))
    said = str(refused.value)
    assert "zone europe-west4-a is not a zone where GKE offers flex-start for TPU v6e (ct6e-standard-4t)" in said
    assert f"lists asia-northeast1-b, us-east5-a, us-east5-b ({zones.FLEX_START_ZONES_URL}" in said
    assert f"as read {zones.FLEX_START_ZONES_AS_OF}" in said
    # Google's refusal, apart from planb's policy wording.
    assert "This is Google's requirement, not planb's policy" in said and "planb's policy, based on" not in said
    # A regional cluster whose TPU pools live in that zone is refused alike.
    with pytest.raises(GkeError, match="zone europe-west4-a is not a zone where GKE offers flex-start"):
        validate_node_pool(_dws_pool("europe-west4", node_locations=["europe-west4-a"]))
    # In the list, the same pool is fine; outside it, an on-demand pool is fine; the switch skips the list.
    validate_node_pool(_dws_pool("us-east5-b"))
    on_demand = {"flex_start": False, "queued_provisioning": False, "auto_repair": True}
    validate_node_pool(_dws_pool("europe-west4-a", **on_demand))
    validate_node_pool(_dws_pool("europe-west4-a", check_tpu_zone=False))


def _hosts(inventory: Path) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}

    def walk(group: dict[str, Any]) -> None:
        for name, host in (group.get("hosts") or {}).items():
            found[name] = host or {}
        for child in (group.get("children") or {}).values():
            walk(child or {})

    walk(yaml.safe_load((inventory / "hosts.yml").read_text())["all"])
    return found


def test_every_dws_rung_of_the_google_regions_inventory_is_in_a_flex_start_zone() -> None:
    hosts = _hosts(REPO / "inventories" / "gke-regions")
    dws = {
        name: host for name, host in hosts.items() if any(p.get("kind") == "dws" for p in host.get("planb_plans") or [])
    }
    assert dws, "inventories/gke-regions has no DWS rung"
    for name, host in dws.items():
        profile = profiles.get(host["planb_profile"])
        assert host["planb_zone"] in zones.flex_start_zones(profile.generation), (name, host["planb_zone"])
        assert host.get("planb_check_tpu_zone", True) is True, name


def test_the_local_rehearsal_skips_the_list_only_where_gke_would_refuse() -> None:
    """inventories/regions rehearses three regions on the emulator; its europe-west4 has no v6e flex-start zone on
    Google's page, so that host alone skips the list (and says why); Google's inventory has no such region."""
    for name, host in _hosts(REPO / "inventories" / "regions").items():
        if not any(p.get("kind") == "dws" for p in host.get("planb_plans") or []):
            continue
        inside = host["planb_zone"] in zones.flex_start_zones(profiles.get(host["planb_profile"]).generation)
        assert inside is (host.get("planb_check_tpu_zone", True) is True), (name, host["planb_zone"])
