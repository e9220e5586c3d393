"""planb.gke's validating action plugins: each documents the options it takes, and refuses with planb's sentence.

The actions (plugins/action) have no module code; their stubs under plugins/modules document them for ansible-doc
and ansible-test. Each stub's options must be the action's argument spec, and a refusal must be the task's `msg`
alone (the filter's or the inventory's sentence), never an exception for Ansible to wrap.
"""

from __future__ import annotations

import importlib
from typing import Any
from unittest import mock

import pytest
import yaml
from ansible.errors import AnsibleUndefinedVariable

from planb.paths import REPO

ACTIONS = ("helm_version", "inventory_vars", "ladder", "node_pool_layout")
SEED = [
    {"name": "on-demand", "kind": "on-demand", "slices": 2, "nodepool": "on-demand-pool"},
    {"name": "dws", "kind": "dws", "slices": 1, "nodepool": "dws-pool"},
]


def _action_class(name: str) -> Any:
    return importlib.import_module(f"ansible_collections.planb.gke.plugins.action.{name}").ActionModule


def _documented_options(name: str) -> dict[str, Any]:
    stub = importlib.import_module(f"ansible_collections.planb.gke.plugins.modules.{name}")
    return dict(yaml.safe_load(stub.DOCUMENTATION)["options"])


@pytest.mark.parametrize("name", ACTIONS)
def test_each_stub_documents_exactly_the_action_s_arguments(name: str) -> None:
    spec = _action_class(name).ARGUMENT_SPEC
    documented = _documented_options(name)
    assert sorted(documented) == sorted(spec)
    for option, doc in documented.items():
        assert doc["type"] == spec[option]["type"], option
        assert doc.get("default") == spec[option].get("default"), option
        assert bool(doc.get("required")) == bool(spec[option].get("required")), option
        assert doc.get("elements") == spec[option].get("elements"), option
    assert (REPO / "collections/ansible_collections/planb/gke/plugins/modules" / f"{name}.py").is_file()


def _run(name: str, args: dict[str, Any], task_vars: dict[str, Any] | None = None, templar: Any = None) -> Any:
    task = mock.MagicMock(args=args, async_val=0, check_mode=False, diff=False)
    action = _action_class(name)(task, mock.MagicMock(), None, mock.MagicMock(), templar or mock.MagicMock(), None)
    with mock.patch("ansible.plugins.action.ActionBase.run", return_value={}):
        return action.run(task_vars=task_vars or {})


def test_ladder_lays_out_each_plan_s_pools_with_its_kind_s_settings() -> None:
    """The seed's ladder of tpu-v6e-4x4 (4 hosts a slice): one pool per slice, named from the plan's nodepool."""
    result = _run("ladder", {"plans": SEED, "profile": "tpu-v6e-4x4", "project": "my-project"})
    assert not result.get("failed") and result["changed"] is False
    on_demand, dws = result["ladder"]
    assert [(p["name"], p["max_nodes"], p["labels"]) for p in on_demand["pools"]] == [
        ("on-demand-pool", 4, {"planb.dev/plan": "on-demand"}),
        ("on-demand-pool-2", 4, {"planb.dev/plan": "on-demand"}),
    ]
    assert [(p["name"], p["max_nodes"], p["flex_start"], p["plan_kind"]) for p in dws["pools"]] == [
        ("dws-pool", 4, True, "dws")
    ]
    assert on_demand["settings"]["queued_provisioning"] is False
    assert (dws["settings"]["queued_provisioning"], dws["settings"]["location_policy"]) == (True, "ANY")


def test_ladder_takes_project_machine_type_and_a_left_out_nodepool() -> None:
    """The options reach the layout: a reservation shared from another project is named by its path, one of the
    cluster's project by its name; machine_type changes the hosts of a slice; nodepool defaults to <name>-pool."""
    reserved = {"name": "reserved", "kind": "reservation", "slices": 1, "reservation": "r1"}
    shared = _run(
        "ladder",
        {"plans": [{**reserved, "reservation_project": "owner-project"}], "profile": "tpu-v6e-4x4", "project": "mine"},
    )
    assert shared["ladder"][0]["settings"]["reservation"] == "projects/owner-project/reservations/r1"
    own = _run(
        "ladder",
        {
            "plans": [{**reserved, "reservation_project": "my-project"}],
            "profile": "tpu-v6e-4x4",
            "project": "my-project",
        },
    )
    assert own["ladder"][0]["settings"]["reservation"] == "r1"
    assert [p["name"] for p in own["ladder"][0]["pools"]] == ["reserved-pool"]
    plan = [{"name": "on-demand", "kind": "on-demand", "slices": 1}]
    for machine, nodes in (("ct5lp-hightpu-8t", 1), ("ct5lp-hightpu-4t", 2)):  # a 2x4 slice: 1 VM of 8 chips or 2 of 4
        laid_out = _run("ladder", {"plans": plan, "profile": "tpu-v5e-2x4", "machine_type": machine})["ladder"]
        assert [(p["machine_type"], p["max_nodes"]) for p in laid_out[0]["pools"]] == [(machine, nodes)]


def test_ladder_refuses_with_the_filter_s_sentence_alone() -> None:
    result = _run("ladder", {"plans": [{**SEED[0], "slices": "two"}], "profile": "tpu-v6e-4x4"})
    assert result["failed"] is True
    assert result["msg"].startswith("planb.gke.plans: planb_plans[0] (plan 'on-demand'): slices 'two' must be")


def test_node_pool_layout_sizes_and_places_or_refuses() -> None:
    placed = _run("node_pool_layout", {"profile": "tpu-v6e-4x4", "location": "us-east5", "tpu_zone": "us-east5-b"})
    assert placed["catalog"]["max_nodes"] == 4 and placed["node_locations"] == ["us-east5-b"]
    deleted = _run("node_pool_layout", {"profile": "tpu-v6e-4x4", "location": "us-east5", "state": "absent"})
    assert deleted["node_locations"] == [] and not deleted.get("failed")
    region = _run("node_pool_layout", {"profile": "tpu-v6e-4x4", "location": "us-east5"})
    assert region["failed"] is True and region["msg"].startswith("planb.gke.node_locations: location us-east5 is a")
    unknown = _run("node_pool_layout", {"profile": "tpu-v6e-5x5", "location": "us-east5-b"})
    assert unknown["msg"].startswith("planb.gke.node_pool: unknown profile 'tpu-v6e-5x5'")


def test_inventory_vars_fails_with_the_inventory_s_hint_alone() -> None:
    hint = "inventories/gke needs PROJECT_ID, the Google Cloud project ID to act on: export PROJECT_ID=<project id>"

    def template(value: object) -> object:
        if value == "?":  # the inventory's `lookup(...) or undef(hint=...)`, templated
            raise AnsibleUndefinedVariable(hint)
        return value

    templar = mock.MagicMock()
    templar.template.side_effect = template
    task_vars = {"planb_zone": "us-east5-b", "planb_project_id": "?"}
    result = _run("inventory_vars", {"names": ["planb_zone", "planb_project_id"]}, task_vars, templar)
    assert result["failed"] is True and result["msg"] == hint
    missing = _run("inventory_vars", {"names": ["planb_cluster_name"]}, task_vars, templar)
    assert missing["msg"].startswith("planb_cluster_name is not set: the inventory's group_vars set it")
    ok = _run("inventory_vars", {"names": ["planb_zone"]}, task_vars, templar)
    assert not ok.get("failed") and ok["resolved"] == ["planb_zone"]
