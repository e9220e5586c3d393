"""Queues mode: each plan's ResourceFlavor selects the plan's node label, so it covers all of the plan's pools,
and the profile's accelerator labels, so a job of another shape matches none of them.

A multi-host TPU slice node pool holds one slice, so plan A with K slices is K pools (on-demand-pool,
on-demand-pool-2, ...): a flavor that selected one pool name would leave the others unused.

Kueue v0.19.2 lets a PodSet have a flavor only when the PodSet's nodeSelector agrees with the flavor's nodeLabels
on every key the flavor names (pkg/scheduler/flavorassigner/flavorassigner.go, checkFlavorForPodSets and
flavorSelector: keys the flavor does not name are dropped; "flavor %s doesn't match node affinity" otherwise).
`kueue_fits` below is that check for a nodeSelector.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb.build import golden
from planb.catalog import nodepool as catalog_nodepool
from planb.catalog import profiles, values
from tests.support.shared.chart.helm import Helm

Render = Callable[..., list[dict[str, Any]]]


def _flavors(objs: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    return {o["metadata"]["name"]: o["spec"]["nodeLabels"] for o in objs if o["kind"] == "ResourceFlavor"}


#: The seed's profile's accelerator labels, as GKE sets them on a TPU v6e 4x4 slice's nodes.
SEED_SHAPE = profiles.get("tpu-v6e-4x4").node_selector


def _values(profile: str) -> str:
    return str(golden.CHART_DIR / "values" / f"{profile}.yaml")


def _worker_selector(objs: list[dict[str, Any]]) -> dict[str, str]:
    (rayjob,) = [o for o in objs if o["kind"] == "RayJob"]
    (group,) = rayjob["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    return dict(group["template"]["spec"]["nodeSelector"])


def kueue_fits(node_selector: dict[str, str], node_labels: dict[str, str]) -> bool:
    """Kueue's flavor check for a PodSet's nodeSelector: only the flavor's own keys count, and each must agree."""
    return all(node_labels[k] == v for k, v in node_selector.items() if k in node_labels)


def test_plan_flavors_select_the_plan_label_the_roles_set(template: Render) -> None:
    flavors = _flavors(template("--set", "mode=queues"))
    assert flavors == {
        # GKE's own default pool, by GKE's pool-name label.
        "default-cpu": {"cloud.google.com/gke-nodepool": "default-pool"},
        # Every pool of a plan, by the label the roles put on each (catalog.plan_labels), of the profile's shape.
        "on-demand": {**catalog_nodepool.plan_labels(catalog_nodepool.ON_DEMAND), **SEED_SHAPE},
        "dws": {**catalog_nodepool.plan_labels(catalog_nodepool.DWS), **SEED_SHAPE},
    }
    assert flavors["on-demand"] == {
        "planb.dev/plan": "on-demand",
        "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
        "cloud.google.com/gke-tpu-topology": "4x4",
    }


@pytest.mark.parametrize("profile", values.SHIPPED)
def test_each_plan_flavor_selects_what_the_profile_s_workers_select(template: Render, profile: str) -> None:
    """The flavors carry exactly the labels a job of the same values file puts in its workers' nodeSelector."""
    flavors = _flavors(template("-f", _values(profile), "--set", "mode=queues"))
    workers = _worker_selector(template("-f", _values(profile)))
    assert workers == profiles.get(profile).node_selector
    for plan in ("on-demand", "dws"):
        assert flavors[plan] == {"planb.dev/plan": plan, **workers}, plan
        assert kueue_fits(workers, flavors[plan]), plan


def test_a_job_of_another_shape_fits_no_plan_flavor(template: Render) -> None:
    """Before: `-f values/tpu-v6e-2x4.yaml` on a 4x4 cluster got plan A's quota and then waited forever."""
    flavors = _flavors(template("-f", _values("tpu-v6e-4x4"), "--set", "mode=queues"))
    # The same TPU of another topology, another TPU of the same topology, another TPU of another topology.
    for other in ("tpu-v6e-2x4", "tpu-v5e-2x4", "tpu7x-2x2x2"):
        workers = _worker_selector(template("-f", _values(other)))
        fitting = [name for name, labels in flavors.items() if name != "default-cpu" and kueue_fits(workers, labels)]
        assert fitting == [], other
    # A GPU job's gke-accelerator is a key no TPU flavor names, so Kueue ignores it there (flavorSelector); such a
    # job asks for nvidia.com/gpu, which a TPU ClusterQueue does not cover at all ("resource nvidia.com/gpu
    # unavailable in ClusterQueue", findFlavorForPodSets).
    # The CPU flavor selects no accelerator label, so it "fits" by selector; its accelerator quota is 0.
    assert kueue_fits(_worker_selector(template("-f", _values("tpu-v6e-2x4"))), flavors["default-cpu"])


def test_a_plan_label_that_contradicts_the_profile_is_refused(helm: Helm) -> None:
    done = helm(
        "template", "q", str(golden.CHART_DIR), "--set", "mode=queues",
        "--set", "plans.onDemand.cloud\\.google\\.com/gke-tpu-topology=2x4",
    )  # fmt: skip
    assert done.returncode != 0
    assert (
        "plan on-demand selects node label cloud.google.com/gke-tpu-topology=2x4 but the profile's accelerator "
        "(accelerator.*) is cloud.google.com/gke-tpu-topology=4x4"
    ) in done.stderr


def test_more_than_kueue_s_eight_node_labels_are_refused(helm: Helm) -> None:
    """Kueue's ResourceFlavor CRD: nodeLabels MaxProperties=8 (apis/kueue/v1beta2/resourceflavor_types.go)."""
    extra = [arg for i in range(6) for arg in ("--set", f"plans.dws.team-{i}=x")]
    assert helm("template", "q", str(golden.CHART_DIR), "--set", "mode=queues", *extra[:10]).returncode == 0
    done = helm("template", "q", str(golden.CHART_DIR), "--set", "mode=queues", *extra)
    assert done.returncode != 0
    assert "plan dws's ResourceFlavor would select 9 node labels" in done.stderr
    assert "Kueue allows at most 8" in done.stderr


def test_the_failover_controller_excludes_plan_a_by_its_own_label_not_the_profile_s(
    template: Render, tmp_path: Path
) -> None:
    """The profile's labels are on every plan's flavor: excluding one would keep the job off plan B too."""
    plans = tmp_path / "plans.yaml"
    plans.write_text(yaml.safe_dump({"plans": {"onDemand": {"planb.dev/plan": None, "team": "ml"}}}))
    objs = template("--set", "mode=queues", "--set", "failover.afterMinutes=5", "-f", str(plans))
    assert _flavors(objs)["on-demand"] == {"team": "ml", **SEED_SHAPE}
    (deployment,) = [o for o in objs if o["kind"] == "Deployment"]
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--plan-a-label=team=ml" in args, args


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
    assert flavors["on-demand"] == {"planb.dev/plan": "on-demand", **SEED_SHAPE}
    assert flavors["dws"] == {"planb.dev/plan": "flex", "team": "ml", **SEED_SHAPE}


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
