"""TPU zones and quota keys in the catalog: sourced, dated, generated into the collection."""

from __future__ import annotations

import re

import pytest

from planb.build import collection
from planb.catalog import gpu, quotas, tpu, zones

_ZONE = re.compile(r"^[a-z]+-[a-z]+[0-9]+-(ai[0-9]+)?[a-z]$")


@pytest.mark.parametrize("generation", [g.name for g in tpu.GENERATIONS])
def test_every_tpu_generation_has_sourced_zones(generation: str) -> None:
    entry = zones.TPU_ZONES[generation]
    assert entry.zones, f"TPU {generation} carries no zone"
    for zone in entry.zones:
        assert _ZONE.match(zone), zone
        assert entry.sources[zone] in (zones.REGIONS_ZONES_URL, zones.CALENDAR_MODE_URL, zones.TYPES_ZONES_URL)
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", zones.REGIONS_ZONES_AS_OF)


def test_the_seed_zone_offers_the_seed_generation_and_regions_are_not_zones() -> None:
    assert "us-east5-b" in zones.zones("v6e")
    assert zones.zones("tpu7x") == ("us-central1-ai1a", "us-central1-c")
    assert zones.is_zone("us-east5-b") and zones.is_zone("us-central1-ai1a") and not zones.is_zone("us-east5")
    assert zones.region_of("us-central1-ai1a") == "us-central1" and zones.region_of("us-east5") == "us-east5"


def test_quota_keys_cover_every_tpu_generation_and_name_no_quota_id() -> None:
    assert set(quotas.TPU_ON_DEMAND) == {g.name for g in tpu.GENERATIONS}
    assert quotas.TPU_ON_DEMAND["v6e"].dimensions == {"tpu_family": "CT6E"}
    # Only the H100 80GB's quota name is sourced; the others are not guessed.
    labels = {m.gke_accelerator for m in gpu.MACHINES}
    assert set(quotas.GPU_ON_DEMAND) == {"nvidia-h100-80gb"} and set(quotas.GPU_ON_DEMAND) <= labels
    for key in [*quotas.TPU_ON_DEMAND.values(), *quotas.GPU_ON_DEMAND.values()]:
        assert key.url.startswith("https://cloud.google.com/") and key.unit in ("chips", "GPUs")


def test_collection_facts_carry_zones_and_quota() -> None:
    from ansible_collections.planb.gke.plugins.module_utils._generated.machine_types import FACTS

    assert collection.generated()["machine_types.py"][1] == FACTS
    v6e = FACTS["ct6e-standard-4t"]
    assert v6e["zones"] == list(zones.zones("v6e"))
    assert v6e["zones_url"] == zones.REGIONS_ZONES_URL and v6e["zones_as_of"] == zones.REGIONS_ZONES_AS_OF
    assert v6e["quota"]["display_name"] == "TPUs per TPU family"
    assert FACTS["a3-highgpu-8g"]["quota"]["display_name"] == "NVIDIA H100 GPUs"
    assert FACTS["a4-highgpu-8g"]["quota"] is None
