"""TPU7x (Ironwood) in the catalog: no flex-start / queued provisioning (GKE documents none), a workload policy.

GKE's Ironwood page documents TPU7x node pools with a workload policy and no flex-start or queued provisioning;
the catalog marks flex-start off with that reason and URL, and every consumer refuses it naming the reason.
"""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.planb.gke.plugins.filter import catalog as filters
from ansible_collections.planb.gke.plugins.module_utils._generated.machine_types import FACTS

from planb.catalog import PROFILES, node_pool, tpu
from planb.catalog.errors import FlexStartError

IRONWOOD = "https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood"


def test_tpu7x_offers_no_flex_start_and_says_why_with_the_url() -> None:
    assert tpu.TPU7X.flex_start is False
    assert "not document" in tpu.TPU7X.flex_start_note and IRONWOOD in tpu.TPU7X.flex_start_url
    for gen in tpu.GENERATIONS:
        # Every generation without flex-start says why, with the page it comes from.
        assert gen.flex_start or (gen.flex_start_note and gen.flex_start_url.startswith("https://")), gen.name


@pytest.mark.parametrize("profile", sorted(p for p in PROFILES if p.startswith("tpu7x-")))
def test_every_tpu7x_profile_refuses_flex_start_with_the_reason(profile: str) -> None:
    assert not PROFILES[profile].flex_start
    with pytest.raises(FlexStartError, match="not offered by GKE for TPU tpu7x") as refused:
        node_pool(profile, flex_start=True)
    assert tpu.TPU7X.flex_start_note in str(refused.value) and IRONWOOD in str(refused.value)
    with pytest.raises(AnsibleFilterError, match="not offered by GKE for TPU tpu7x") as filtered:
        filters.node_pool(profile, flex_start=True)
    assert tpu.TPU7X.flex_start_note in str(filtered.value)


def test_collection_facts_carry_the_reason_and_the_workload_policy() -> None:
    facts = FACTS["tpu7x-standard-4t"]
    assert facts["flex_start"] is False and facts["flex_start_note"] == tpu.TPU7X.flex_start_note
    assert facts["uses_placement_policy"] is True
    assert FACTS["ct6e-standard-4t"]["uses_placement_policy"] is False
