"""Names, versions and counts are matched whole: a trailing newline passes nowhere, and slices have a ceiling.

Python's ``$`` also matches before a final newline, so ``re.match(r"^name$", "name\\n")`` succeeds; every
check here uses ``fullmatch``. The slice ceiling is planb's policy (pool_layout.MAX_SLICES): a multi-host
plan is one node pool per slice.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import pytest
from ansible.errors import AnsibleFilterError

from planb.catalog import pool_layout, values
from planb.catalog.errors import CatalogError
from planb.catalog.tpu import TopologyError, topology_chips
from planb.local.gke_emulator import rules

PROFILE = "tpu-v6e-4x4"


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"ansible_collections.planb.gke.plugins.{name}")


def _plan(**fields: Any) -> list[dict[str, Any]]:
    plan = {"name": "on-demand", "kind": "on-demand", "slices": 1, "nodepool": "on-demand-pool"}
    return [{**plan, **fields}]


@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        ({"name": "on-demand\n"}, "name"),
        ({"slices": "1\n"}, "must be a whole number"),
        ({"kind": "reservation", "reservation": "tpu-res\n"}, "must be a Compute Engine reservation name"),
        (
            {"kind": "reservation", "reservation": "tpu-res", "reservation_project": "other-project\n"},
            "must be a Google Cloud project ID",
        ),
        ({"nodepool": "on-demand-pool\n"}, "node pool name"),
    ],
)
def test_the_ladder_refuses_a_trailing_newline(fields: dict[str, Any], needle: str) -> None:
    with pytest.raises(AnsibleFilterError, match=needle):
        _module("filter.ladder").plans(_plan(**fields), PROFILE)


def test_the_collections_validators_refuse_a_trailing_newline() -> None:
    validate = _module("module_utils.validate")
    assert validate.parse_version("1.34") == (1, 34)
    assert validate.parse_version("1.34\n") is None
    with pytest.raises(Exception, match="reservation"):
        _module("module_utils.reservation").split_reservation("tpu-res\n", "my-project")
    assert _module("module_utils.credentials").PROJECT_ID.fullmatch("my-project\n") is None
    with pytest.raises(pool_layout.PoolLayoutError):
        pool_layout.plan_labels("on-demand\n")


def test_the_emulators_and_catalogs_checks_refuse_a_trailing_newline() -> None:
    assert rules.parse_version("1.34\n") is None
    with pytest.raises(rules.RuleViolation):
        rules.check_name("cluster", "tpu-cluster\n")
    with pytest.raises(TopologyError):
        topology_chips("4x4\n")


def test_a_plan_of_up_to_200_slices_lays_out_and_one_more_is_refused() -> None:
    ladder = _module("filter.ladder")
    [plan] = ladder.plans(_plan(slices=200), PROFILE)
    assert len(plan["pools"]) == 200 and plan["pools"][-1]["name"] == "on-demand-pool-200"
    with pytest.raises(AnsibleFilterError) as refused:
        ladder.plans(_plan(slices=201), PROFILE)
    assert "slices 201 is more than 200: planb's policy, because a multi-host plan is one node pool per slice" in str(
        refused.value
    )


@pytest.mark.parametrize("option", ["slices", "on_demand_slices", "dws_slices"])
def test_the_chart_values_filter_refuses_more_than_200_slices(option: str) -> None:
    catalog = _module("filter.catalog")
    with pytest.raises(AnsibleFilterError, match=f"{option} 201 is more than 200: planb's policy"):
        catalog.chart_values(PROFILE, **{option: 201})


@pytest.mark.parametrize("option", ["slices", "on_demand_slices", "dws_slices"])
def test_planb_values_refuses_more_than_200_slices(option: str) -> None:
    with pytest.raises(CatalogError, match="201 is more than 200"):
        values.render(PROFILE, **{option: 201})
    assert values.render(PROFILE, **{option: 200})
