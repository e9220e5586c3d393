"""roles/kueue_queues in the concurrent ladder mode: the chart values carry Kueue's migration settings from the
inventory, and each plan's quota also holds its jobs' heads and submitters (the CPU flavor leaves the
ClusterQueue, since Kueue holds every PodSet of a variant to one flavor). The sequential default derives what it
derived before (tests/integration/kueue/test_queues_ladder.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from planb.catalog import values
from tests.support.shared.kueue.kueue_role import configure_ahead, role_config
from tests.support.shared.kueue.queues_role import FOUR, chart_values_of, derive_ahead, render

pytestmark = pytest.mark.tools

CONCURRENT = {
    "kueue_queues_ladder": FOUR,
    "kueue_queues_ladder_mode": "concurrent",
    "kueue_queues_last_acceptable_plan": "dws",
}
SEQUENTIAL = {"kueue_queues_ladder": FOUR}
derive_ahead(CONCURRENT, SEQUENTIAL)
configure_ahead(*(("helm", {"kueue_concurrent_admission": concurrent}) for concurrent in (False, True)))


def test_concurrent_mode_carries_the_policy_and_the_heads_quota(tmp_path: Path) -> None:
    chart = chart_values_of(tmp_path, CONCURRENT)
    assert chart["queues"]["ladderMode"] == "concurrent"
    assert chart["queues"]["concurrentAdmission"] == {
        "migrationMode": "TryPreferredFlavors",
        "lastAcceptableFlavor": "dws",
    }
    one = values.chart_values("tpu-v6e-4x4", on_demand_slices=1)["queues"]["quotas"]["onDemand"]
    spot = chart["queues"]["ladder"][3]["quota"]
    # planb's policy: 3 CPU and 5Gi per slice for a head and a submitter (2 slices on spot).
    assert spot["cpu"] == 2 * one["cpu"] + 6
    assert spot["memory"] == f"{2 * int(one['memory'].removesuffix('Gi')) + 10}Gi"
    assert spot["accelerator"] == 2 * one["accelerator"]
    (cq,) = [o for o in render(tmp_path, chart) if o["kind"] == "ClusterQueue"]
    assert [f["name"] for f in cq["spec"]["resourceGroups"][0]["flavors"]] == ["reserved", "on-demand", "dws", "spot"]
    assert cq["spec"]["concurrentAdmissionPolicy"]["migration"]["constraints"] == {"lastAcceptableFlavorName": "dws"}


def test_sequential_mode_adds_no_concurrent_values(tmp_path: Path) -> None:
    chart = chart_values_of(tmp_path, SEQUENTIAL)
    assert "ladderMode" not in chart["queues"]
    assert "concurrentAdmission" not in chart["queues"]


@pytest.mark.parametrize("concurrent", [False, True])
def test_the_concurrent_gate_is_merged_into_the_feature_gates_helm_gets(tmp_path: Path, concurrent: bool) -> None:
    result = role_config(tmp_path, "helm", {"kueue_concurrent_admission": concurrent})
    gates = result["helm_values"]["controllerManager"]["featureGates"]
    expected = [{"name": "ElasticJobsViaWorkloadSlices", "enabled": True}]
    assert gates == expected + ([{"name": "ConcurrentAdmission", "enabled": True}] if concurrent else [])
