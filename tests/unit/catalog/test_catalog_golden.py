"""`planb profiles` / `planb values` output and the shipped values files are generated and not stale."""

from __future__ import annotations

import pytest

from planb.build import golden
from planb.catalog import values

FIX = "run `make golden` (or `make values`) and review the diff"


@pytest.mark.parametrize("name", sorted(golden.CLI_CASES))
def test_cli_output_matches_golden(name: str) -> None:
    path = golden.GOLDEN_DIR / name
    assert path.exists(), f"{path} is missing: {FIX}"
    assert golden.run_cli(*golden.CLI_CASES[name]) == path.read_text(), f"{path} is stale: {FIX}"


def test_shipped_values_files_are_generated_and_fresh() -> None:
    directory = golden.CHART_DIR / "values"
    expected = values.shipped_files(directory)
    assert sorted(directory.glob("*.yaml")) == sorted(expected), f"{directory} holds other files: {FIX}"
    for path, content in expected.items():
        assert path.read_text() == content, f"{path} is stale: {FIX}"
        assert content.startswith("# Generated from the planb accelerator catalog")


def test_values_output_is_the_seed() -> None:
    """`planb values tpu-v6e-4x4` carries the seed's numbers."""
    seed = values.chart_values("tpu-v6e-4x4")
    assert seed["accelerator"]["hostsPerSlice"] == 4
    assert seed["accelerator"]["chipsPerHost"] == 4
    assert seed["queues"]["quotas"]["onDemand"]["accelerator"] == 16
    assert seed["job"]["workers"]["resources"] == {"cpu": "8", "memory": "16Gi"}


def test_dws_quota_is_finite_and_sized_in_slices() -> None:
    """Plan B's quota is the DWS pool's size: K slices, like plan A's, never 'unlimited'."""
    one = values.chart_values("tpu-v6e-4x4")["queues"]["quotas"]
    assert one["dws"] == one["onDemand"] == {"cpu": 32, "memory": "64Gi", "accelerator": 16}
    three = values.chart_values("tpu-v6e-4x4", dws_slices=3)["queues"]["quotas"]["dws"]
    assert three == {"cpu": 96, "memory": "192Gi", "accelerator": 48}
    gpu = values.chart_values("gpu-a3-h100-8", dws_slices=2)["queues"]["quotas"]["dws"]
    assert gpu["accelerator"] == 16
