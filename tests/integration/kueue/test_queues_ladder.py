"""roles/kueue_queues turns the inventory's ordered plans (planb_plans) into the chart's queues.ladder
: one flavor per plan in order, each plan's quota its slices of the profile; bad plans are
refused before anything is installed, naming the entry and the fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planb.catalog import values
from tests.support.shared.kueue.queues_role import FOUR, chart_values_of, derive_ahead, refusals, render

pytestmark = pytest.mark.tools

FOUR_PLANS: dict[str, Any] = {"kueue_queues_ladder": FOUR}
THE_SEED_S_PLANS: dict[str, Any] = {"kueue_queues_ladder": [FOUR[1], FOUR[2]]}
NO_PLANS: dict[str, Any] = {"kueue_queues_ladder": []}
derive_ahead(FOUR_PLANS, THE_SEED_S_PLANS, NO_PLANS)


def test_four_plans_become_the_chart_s_ladder_in_order(tmp_path: Path) -> None:
    chart = chart_values_of(tmp_path, FOUR_PLANS)
    one = values.chart_values("tpu-v6e-4x4", on_demand_slices=1)["queues"]["quotas"]["onDemand"]
    two = values.chart_values("tpu-v6e-4x4", on_demand_slices=2)["queues"]["quotas"]["onDemand"]
    assert chart["queues"]["ladder"] == [
        {"name": "reserved", "kind": "reservation", "slices": 1, "nodepool": "reserved-pool", "reservation": "r1",
         "quota": one},
        {"name": "on-demand", "kind": "on-demand", "slices": 1, "nodepool": "on-demand-pool", "quota": one},
        {"name": "dws", "kind": "dws", "slices": 1, "nodepool": "dws-pool", "quota": one},
        {"name": "spot", "kind": "spot", "slices": 2, "nodepool": "spot-pool", "quota": two},
    ]  # fmt: skip
    # planb's policy: room on the CPU flavor for a head and a submitter per slice of the ladder (5 slices here).
    assert chart["queues"]["quotas"]["defaultCpu"] == {"cpu": 15, "memory": "25Gi"}
    (cq,) = [o for o in render(tmp_path, chart) if o["kind"] == "ClusterQueue"]
    flavors = cq["spec"]["resourceGroups"][0]["flavors"]
    assert [f["name"] for f in flavors] == ["default-cpu", "reserved", "on-demand", "dws", "spot"]
    assert flavors[-1]["resources"][2] == {"name": "google.com/tpu", "nominalQuota": 32}


def test_the_seed_s_two_plans_as_a_ladder_keep_the_chart_s_cpu_quota(tmp_path: Path) -> None:
    chart = chart_values_of(tmp_path, THE_SEED_S_PLANS)
    assert chart["queues"]["quotas"]["defaultCpu"] == {"cpu": 10, "memory": "20Gi"}


def test_no_plans_keep_the_seed_s_values(tmp_path: Path) -> None:
    chart = chart_values_of(tmp_path, NO_PLANS)
    assert "ladder" not in chart["queues"]
    assert chart["plans"] == {"onDemand": {"planb.dev/plan": "on-demand"}, "dws": {"planb.dev/plan": "dws"}}


#: (plans, what the refusal says)
BAD_PLANS: list[tuple[Any, str]] = [
    ({"name": "spot"}, "kueue_queues_ladder={'name': 'spot'} must be a list of plans"),
    ([{**FOUR[1], "kind": "preemptible"}], "kueue_queues_ladder[0]="),
    ([{**FOUR[1], "slices": 0}], "slices (a whole number >= 1)"),
    ([{**FOUR[1], "name": "On Demand"}], "name (a DNS label of at most 63 characters"),
    ([{k: v for k, v in FOUR[0].items() if k != "reservation"}], "a reservation plan also reservation"),
    ([FOUR[1], {**FOUR[3], "name": "on-demand"}], "names a plan twice: ['on-demand', 'on-demand']"),
]


@pytest.fixture(scope="module")
def refused(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str | None, Path]]:
    """The role on every bad ladder, in one ansible-playbook run of one host each (Ansible's start paid once)."""
    return refusals(tmp_path_factory.mktemp("bad-plans"), [{"kueue_queues_ladder": ladder} for ladder, _ in BAD_PLANS])


@pytest.mark.parametrize(
    ("index", "message"), [(i, message) for i, (_, message) in enumerate(BAD_PLANS)], ids=[m for _, m in BAD_PLANS]
)
def test_bad_plans_are_refused(refused: list[tuple[str | None, Path]], index: int, message: str) -> None:
    failure, values = refused[index]
    assert failure is not None, f"{BAD_PLANS[index][0]} passed"
    assert message in failure, failure[-3000:]
    assert not values.exists()
