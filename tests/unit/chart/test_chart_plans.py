"""Queues mode: each plan's ResourceFlavor selects the plan's node label, so it covers all of the plan's pools.

A multi-host TPU slice node pool holds one slice, so plan A with K slices is K pools (on-demand-pool,
on-demand-pool-2, ...): a flavor that selected one pool name would leave the others unused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml

from planb.build import golden
from planb.catalog import nodepool as catalog_nodepool
from tests.support.chart.helm import Helm

Render = Callable[..., list[dict[str, Any]]]


def _flavors(objs: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    return {o["metadata"]["name"]: o["spec"]["nodeLabels"] for o in objs if o["kind"] == "ResourceFlavor"}


def test_plan_flavors_select_the_plan_label_the_roles_set(template: Render) -> None:
    flavors = _flavors(template("--set", "mode=queues"))
    assert flavors == {
        # GKE's own default pool, by GKE's pool-name label.
        "default-cpu": {"cloud.google.com/gke-nodepool": "default-pool"},
        # Every pool of a plan, by the label the roles put on each (catalog.plan_labels).
        "on-demand": catalog_nodepool.plan_labels(catalog_nodepool.ON_DEMAND),
        "dws": catalog_nodepool.plan_labels(catalog_nodepool.DWS),
    }
    assert flavors["on-demand"] == {"planb.dev/plan": "on-demand"}


def test_chart_plan_defaults_are_the_catalog_s() -> None:
    values = yaml.safe_load((golden.CHART_DIR / "values.yaml").read_text())
    assert values["plans"] == {
        "onDemand": catalog_nodepool.plan_labels(catalog_nodepool.ON_DEMAND),
        "dws": catalog_nodepool.plan_labels(catalog_nodepool.DWS),
    }
    assert values["nodePools"] == {"cpu": "default-pool"}


def test_other_plan_labels_are_followed(template: Render) -> None:
    flavors = _flavors(
        template("--set", "mode=queues", "--set", "plans.dws.planb\\.dev/plan=flex", "--set", "plans.dws.team=ml")
    )
    assert flavors["on-demand"] == {"planb.dev/plan": "on-demand"}
    assert flavors["dws"] == {"planb.dev/plan": "flex", "team": "ml"}


def test_one_value_for_both_plans_is_refused(helm: Helm) -> None:
    done = helm(
        "template", "q", str(golden.CHART_DIR), "--set", "mode=queues", "--set", "plans.dws.planb\\.dev/plan=on-demand"
    )
    assert done.returncode != 0
    assert 'plans.onDemand and plans.dws are both {"planb.dev/plan":"on-demand"}' in done.stderr


def test_a_pool_name_for_plan_a_is_refused_by_the_schema(helm: Helm) -> None:
    """Values written for the old chart (a pool name per plan) fail loudly instead of selecting one pool."""
    done = helm(
        "template", "q", str(golden.CHART_DIR), "--set", "mode=queues", "--set", "nodePools.onDemand=on-demand-pool"
    )
    assert done.returncode != 0
    assert "additional properties 'onDemand' not allowed" in done.stderr
