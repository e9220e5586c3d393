"""planb.gke.plans: the inventory's capacity ladder (planb_plans) checked before any API call, and laid out.

each plan is a kind of capacity (reservation, on-demand, dws, spot), slices and a pool name; the filter
refuses a bad list naming the entry and the fix, and returns each plan's pools with the GKE settings of its kind.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import pytest
from ansible.errors import AnsibleFilterError

PROFILE = "tpu-v6e-4x4"
SEED: list[dict[str, Any]] = [
    {"name": "on-demand", "kind": "on-demand", "slices": 1, "nodepool": "on-demand-pool"},
    {"name": "dws", "kind": "dws", "slices": 1, "nodepool": "dws-pool"},
]
LADDER: list[dict[str, Any]] = [
    {"name": "reserved", "kind": "reservation", "slices": 2, "nodepool": "reserved-pool", "reservation": "tpu-res"},
    {"name": "on-demand", "kind": "on-demand", "slices": "1", "nodepool": "on-demand-pool"},
    {"name": "dws", "kind": "dws", "slices": 2, "nodepool": "dws-pool"},
    {"name": "spot", "kind": "spot", "slices": 1, "nodepool": "spot-pool"},
]


def _ladder() -> ModuleType:
    return importlib.import_module("ansible_collections.planb.gke.plugins.filter.ladder")


def _refused(plans: object, *needles: str, project: str = "") -> str:
    with pytest.raises(AnsibleFilterError) as refused:
        _ladder().plans(plans, PROFILE, project=project)
    message = str(refused.value)
    for needle in needles:
        assert needle in message, message
    return message


def test_the_seed_plans_lay_out_as_today() -> None:
    ladder = _ladder().plans(SEED, PROFILE)
    assert [p["name"] for p in ladder] == ["on-demand", "dws"]
    on_demand, dws = ladder
    assert [pool["name"] for pool in on_demand["pools"]] == ["on-demand-pool"]
    assert on_demand["settings"] == {
        "reservation_affinity": "NO_RESERVATION",
        "reservation": "",
        "queued_provisioning": False,
        "flex_start": False,
        "spot": False,
        "auto_repair": True,
        "location_policy": "",
        "taints": [],
    }
    # Plan B is today's DWS pool: queued, flex-start, no auto-repair, location policy ANY.
    assert dws["settings"]["queued_provisioning"] and dws["settings"]["flex_start"]
    assert not dws["settings"]["auto_repair"] and dws["settings"]["location_policy"] == "ANY"
    assert dws["pools"][0]["flex_start"] is True and dws["pools"][0]["labels"] == {"planb.dev/plan": "dws"}


def test_a_four_rung_ladder_has_the_settings_of_each_kind() -> None:
    ladder = _ladder().plans(LADDER, PROFILE, project="my-project")
    assert [(p["rung"], p["name"], p["kind"], p["slices"]) for p in ladder] == [
        (1, "reserved", "reservation", 2),
        (2, "on-demand", "on-demand", 1),
        (3, "dws", "dws", 2),
        (4, "spot", "spot", 1),
    ]
    pools = [(pool["name"], pool["plan"], pool["plan_kind"]) for plan in ladder for pool in plan["pools"]]
    assert pools == [
        ("reserved-pool", "reserved", "reservation"),
        ("reserved-pool-2", "reserved", "reservation"),
        ("on-demand-pool", "on-demand", "on-demand"),
        ("dws-pool", "dws", "dws"),
        ("dws-pool-2", "dws", "dws"),
        ("spot-pool", "spot", "spot"),
    ]
    reserved, _, _, spot = ladder
    assert reserved["settings"]["reservation_affinity"] == "SPECIFIC_RESERVATION"
    assert reserved["settings"]["reservation"] == "tpu-res"
    assert spot["settings"]["spot"] is True and not spot["settings"]["flex_start"]
    assert spot["settings"]["taints"] == [{"key": "cloud.google.com/gke-spot", "value": "true", "effect": "NoSchedule"}]
    assert spot["pools"][0]["settings"] is spot["settings"]


def test_a_shared_reservation_is_targeted_by_its_project_path() -> None:
    shared = [dict(LADDER[0], reservation_project="owner-project")]
    assert _ladder().plans(shared, PROFILE, project="my-project")[0]["settings"]["reservation"] == (
        "projects/owner-project/reservations/tpu-res"
    )
    # The cluster's own project: by name, as for an unshared reservation.
    assert _ladder().plans(shared, PROFILE, project="owner-project")[0]["settings"]["reservation"] == "tpu-res"


@pytest.mark.parametrize(
    ("plans", "needles"),
    [
        ([], ["planb_plans must be a non-empty list"]),
        ([dict(SEED[0], slices="two")], ["planb_plans[0] (plan 'on-demand')", "slices 'two'", "planb_ondemand_slices"]),
        ([dict(SEED[0], slices=0)], ["slices 0 must be at least 1: planb's policy", "remove it from planb_plans"]),
        ([dict(SEED[0], slices=True)], ["slices True must be a whole number"]),
        ([dict(SEED[0], kind="preemptible")], ["kind 'preemptible' is not one planb knows", "reservation, on-demand"]),
        ([dict(SEED[0], name="On_Demand")], ["name 'On_Demand' must be a Kubernetes label value and a Kueue flavor"]),
        ([dict(SEED[0], reservaton="x")], ["unknown key(s) reservaton"]),
        ([SEED[0], dict(SEED[1], name="on-demand")], ["planb_plans[1]", "is also planb_plans[0]'s"]),
        ([SEED[0], dict(SEED[1], nodepool="on-demand-pool-2")], ["name each other's pools", "on-demand-pool-2"]),
        ([dict(SEED[0], nodepool="default-pool")], ["name each other's pools", "default-pool"]),
        ([dict(SEED[0], nodepool="Pool")], ["node pool name 'Pool' must be 1-40 lowercase"]),
        ([dict(LADDER[0], reservation="")], ["kind reservation needs reservation: <name>", "reservation_project"]),
        ([dict(SEED[0], reservation="tpu-res")], ["belong to kind reservation only, this plan is kind on-demand"]),
        ([dict(LADDER[0], reservation="projects/x/reservations/y")], ["give the owner project in reservation_project"]),
        (
            [dict(LADDER[0], reservation_project="Owner")],
            ["reservation_project 'Owner' must be a Google Cloud project"],
        ),
        (
            [LADDER[3], dict(LADDER[3], name="spot-2", nodepool="cheap-pool")],
            ["a second plan of kind spot (plan 'spot' is one): planb's policy"],
        ),
        (
            [LADDER[0], dict(LADDER[0], name="reserved-2", nodepool="other-pool")],
            ["reservation 'tpu-res' is already plan 'reserved''s: planb's policy"],
        ),
    ],
)
def test_a_bad_ladder_is_refused_naming_the_entry_and_the_fix(plans: object, needles: list[str]) -> None:
    _refused(plans, *needles)


def test_two_reservations_are_two_rungs() -> None:
    two = [LADDER[0], dict(LADDER[0], name="reserved-b", nodepool="reserved-b-pool", reservation="tpu-res-b")]
    assert [p["settings"]["reservation"] for p in _ladder().plans(two, PROFILE)] == ["tpu-res", "tpu-res-b"]


def test_dws_on_a_generation_without_flex_start_names_the_plan() -> None:
    with pytest.raises(AnsibleFilterError) as refused:
        _ladder().plans([SEED[1]], "tpu-v4-2x2x2")
    assert "planb_plans[0] (plan 'dws')" in str(refused.value) and "flex-start" in str(refused.value)


def test_surplus_pools_are_those_of_fewer_slices_and_of_removed_rungs() -> None:
    ladder = _ladder().plans([dict(LADDER[1], slices=1), LADDER[3]], PROFILE)
    existing = [
        {"name": "default-pool", "config": {}},
        {"name": "on-demand-pool", "config": {"labels": {"planb.dev/plan": "on-demand"}}},
        {"name": "on-demand-pool-2", "config": {"labels": {"planb.dev/plan": "on-demand"}}},
        {"name": "dws-pool", "config": {"labels": {"planb.dev/plan": "dws"}}},  # a rung removed from the list
        {"name": "spot-pool", "config": {"labels": {"planb.dev/plan": "spot"}}},
        {"name": "cpu-pool", "config": {"labels": {"team": "data"}}},  # not planb's
    ]
    assert _ladder().surplus_pools(existing, ladder) == ["on-demand-pool-2", "dws-pool"]
    # Pools made before the plan label (names only) are found by their plan's pool name.
    assert _ladder().surplus_pools(["on-demand-pool", "on-demand-pool-3", "dws-pool"], ladder) == ["on-demand-pool-3"]


def test_nodepool_defaults_to_the_plan_s_name_and_pool() -> None:
    ladder = _ladder().plans([{"name": "spot", "kind": "spot", "slices": 2}], PROFILE)
    assert [pool["name"] for pool in ladder[0]["pools"]] == ["spot-pool", "spot-pool-2"]
