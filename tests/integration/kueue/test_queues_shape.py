"""roles/kueue_queues hands the chart the profile's accelerator values (planb.gke.chart_values), so every plan's
flavor it installs selects the profile's shape beside the plan: the labels a job of the same profile's values file
puts in its workers' nodeSelector, and that GKE (and the capacity simulator) put on the profile's nodes."""

from __future__ import annotations

from pathlib import Path

import pytest

from planb.catalog import profiles
from planb.local.capacity import pools
from tests.support.shared.kueue.queues_role import FOUR, chart_values_of, derive_ahead, render

pytestmark = pytest.mark.tools

INPUTS: list[dict[str, object]] = [{"kueue_queues_ladder": FOUR}, {"kueue_queues_profile": "gpu-a3-h100-8"}]
derive_ahead(*INPUTS)


@pytest.mark.parametrize(
    ("profile", "extra"),
    [
        ("tpu-v6e-4x4", INPUTS[0]),
        ("gpu-a3-h100-8", INPUTS[1]),
    ],
    ids=["tpu-ladder", "gpu-seed-plans"],
)
def test_every_plan_flavor_the_role_installs_selects_the_profile_s_shape(
    tmp_path: Path, profile: str, extra: dict[str, object]
) -> None:
    objs = render(tmp_path, chart_values_of(tmp_path, extra))
    flavors = {o["metadata"]["name"]: o["spec"]["nodeLabels"] for o in objs if o["kind"] == "ResourceFlavor"}
    shape = profiles.get(profile).node_selector
    # What a node of the profile carries, as the capacity simulator labels it from GKE's pool.
    found = profiles.get(profile)
    assert pools.accelerator_labels(found.machine_type, found.topology) == shape
    plans = [p for p in flavors if p != "default-cpu"]
    assert plans, flavors
    for plan in plans:
        assert {k: v for k, v in flavors[plan].items() if k in shape} == shape, plan
        assert flavors[plan]["planb.dev/plan"] == plan
    assert flavors["default-cpu"] == {"cloud.google.com/gke-nodepool": "default-pool"}
