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

ACTIONS = ("inventory_vars", "ladder", "node_pool_layout")
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


def test_ladder_returns_the_filter_s_layout() -> None:
    from ansible_collections.planb.gke.plugins.filter.ladder import plans

    result = _run("ladder", {"plans": SEED, "profile": "tpu-v6e-4x4", "project": "my-project"})
    assert not result.get("failed") and result["changed"] is False
    assert result["ladder"] == plans(SEED, "tpu-v6e-4x4", project="my-project")


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
