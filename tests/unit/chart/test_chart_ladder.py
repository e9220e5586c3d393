"""The capacity ladder: queues.ladder renders one ResourceFlavor per plan, in order, and
job.avoidPlans keeps a job's workers off some plans.

An empty ladder must render what the chart rendered before the ladder existed: the golden files of
tests/golden (chart-queues-*.yaml) were written before it and are compared here and in
tests/unit/catalog/test_catalog_golden.py; and the seed's two plans spelled out as a ladder render the
same objects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml

from planb.build import golden
from planb.catalog import values
from tests.support.shared.chart.helm import Helm
from tests.support.shared.chart.ladders import FOUR, PROFILE, quota

Render = Callable[..., list[dict[str, Any]]]


def _ladder_args(tmp_path: Any, ladder: list[dict[str, Any]], *extra: str) -> tuple[str, ...]:
    path = tmp_path / "ladder.yaml"
    path.write_text(yaml.safe_dump({"mode": "queues", "queues": {"ladder": ladder}}))
    return ("-f", str(golden.CHART_DIR / "values" / f"{PROFILE}.yaml"), "-f", str(path), *extra)


def _by_kind(objs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == kind]


@pytest.mark.parametrize("name", sorted(n for n in golden.chart_cases() if n.startswith("chart-queues-")))
def test_no_ladder_renders_what_the_chart_rendered_before(name: str) -> None:
    """Byte for byte: the goldens predate queues.ladder."""
    assert golden.render_chart(golden.chart_cases()[name]) == (golden.GOLDEN_DIR / name).read_text()


def test_the_seed_spelled_as_a_ladder_renders_the_same_objects(template: Render, tmp_path: Any) -> None:
    seed = values.chart_values(PROFILE)["queues"]["quotas"]
    ladder = [
        {"name": "on-demand", "kind": "on-demand", "quota": seed["onDemand"]},
        {"name": "dws", "kind": "dws", "quota": seed["dws"]},
    ]
    before = template("-f", str(golden.CHART_DIR / "values" / f"{PROFILE}.yaml"), "--set", "mode=queues")
    after = template(*_ladder_args(tmp_path, ladder))
    assert after == before


def test_four_rungs_are_four_flavors_in_the_queue_s_order(template: Render, tmp_path: Any) -> None:
    objs = template(*_ladder_args(tmp_path, FOUR))
    flavors = {o["metadata"]["name"]: o["spec"] for o in _by_kind(objs, "ResourceFlavor")}
    # Each plan's label beside the profile's accelerator labels (tests/unit/chart/test_chart_plans.py).
    shape = {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "4x4"}
    assert flavors["reserved"] == {"nodeLabels": {"planb.dev/plan": "reserved", **shape}}
    assert flavors["on-demand"] == {"nodeLabels": {"planb.dev/plan": "on-demand", **shape}}
    assert flavors["dws"] == {"nodeLabels": {"planb.dev/plan": "dws", **shape}}
    # GKE's Spot label and taint (https://cloud.google.com/kubernetes-engine/docs/how-to/spot-vms).
    assert flavors["spot"] == {
        "nodeLabels": {"planb.dev/plan": "spot", "cloud.google.com/gke-spot": "true", **shape},
        "tolerations": [
            {"key": "cloud.google.com/gke-spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
        ],
    }
    (cq,) = _by_kind(objs, "ClusterQueue")
    group = cq["spec"]["resourceGroups"][0]
    assert [f["name"] for f in group["flavors"]] == ["default-cpu", "reserved", "on-demand", "dws", "spot"]
    quotas = {f["name"]: {r["name"]: r["nominalQuota"] for r in f["resources"]} for f in group["flavors"]}
    assert quotas["spot"] == {"cpu": 64, "memory": "128Gi", "google.com/tpu": 32}
    assert quotas["reserved"] == {"cpu": 32, "memory": "64Gi", "google.com/tpu": 16}
    # DWS's admission check on the dws flavor only, so the other plans admit without a request.
    assert cq["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": "dws-prov", "onFlavors": ["dws"]}]}
    assert len(_by_kind(objs, "AdmissionCheck")) == 1
    assert len(_by_kind(objs, "ProvisioningRequestConfig")) == 1


def test_a_reservation_flavor_names_its_reservation_for_the_keepers_reads(template: Render, tmp_path: Any) -> None:
    shared = [{**FOUR[0], "reservationProject": "owner-project"}, *FOUR[1:]]
    for ladder, ref, extra in (
        (FOUR, "r1", ()),
        (shared, "projects/owner-project/reservations/r1", ("--set", "queues.keepOnUninstall=false")),
    ):
        flavors = {
            o["metadata"]["name"]: o["metadata"]
            for o in _by_kind(template(*_ladder_args(tmp_path, ladder, *extra)), "ResourceFlavor")
        }
        assert flavors["reserved"]["annotations"]["planb.dev/reservation"] == ref
        assert all(
            "planb.dev/reservation" not in (m.get("annotations") or {}) for n, m in flavors.items() if n != "reserved"
        )
        kept = {n: (m.get("annotations") or {}).get("helm.sh/resource-policy") for n, m in flavors.items()}
        assert set(kept.values()) == ({None} if extra else {"keep"})  # the keep annotation stays beside it


def test_a_ladder_without_dws_has_no_admission_check(template: Render, tmp_path: Any) -> None:
    objs = template(*_ladder_args(tmp_path, [FOUR[1], FOUR[3]]))
    (cq,) = _by_kind(objs, "ClusterQueue")
    assert "admissionChecksStrategy" not in cq["spec"]
    assert not _by_kind(objs, "AdmissionCheck")
    assert not _by_kind(objs, "ProvisioningRequestConfig")


def test_two_dws_rungs_share_the_check(template: Render, tmp_path: Any) -> None:
    ladder = [FOUR[2], {**FOUR[2], "name": "dws-2"}]
    (cq,) = _by_kind(template(*_ladder_args(tmp_path, ladder)), "ClusterQueue")
    assert cq["spec"]["admissionChecksStrategy"]["admissionChecks"][0]["onFlavors"] == ["dws", "dws-2"]


def test_failover_starts_from_the_first_rung(template: Render, tmp_path: Any) -> None:
    objs = template(*_ladder_args(tmp_path, FOUR, "--set", "failover.afterMinutes=5"))
    (deploy,) = _by_kind(objs, "Deployment")
    args = deploy["spec"]["template"]["spec"]["containers"][0]["args"]
    assert {"--plan-a-flavor=reserved", "--plan-a-label=planb.dev/plan=reserved"} <= set(args)


@pytest.mark.parametrize(
    ("ladder", "extra", "message"),
    [
        (
            [{**FOUR[1], "kind": "preemptible"}],
            (),
            "at '/queues/ladder/0/kind': value must be one of 'reservation', 'on-demand', 'dws', 'spot'",
        ),
        ([{k: v for k, v in FOUR[0].items() if k != "reservation"}], (), "missing property 'reservation'"),
        ([{k: v for k, v in FOUR[1].items() if k != "quota"}], (), "missing property 'quota'"),
        ([{**FOUR[1], "name": "On_Demand"}], (), "/queues/ladder/0/name"),
        (
            [FOUR[1], {**FOUR[3], "name": "on-demand"}],
            (),
            'queues.ladder[1].name "on-demand" repeats queues.ladder[0]: each plan is one ResourceFlavor and one '
            "plan label value, so give every plan its own name",
        ),
        (
            [{**FOUR[1], "name": "default-cpu"}],
            (),
            'queues.ladder[0].name "default-cpu" is the CPU flavor\'s name (queues.flavors.cpu): rename the plan',
        ),
        (
            [FOUR[2]],
            ("--set", "dws.enabled=false"),
            "queues.ladder[0] (dws) is a dws plan but dws.enabled=false",
        ),
    ],
)
def test_bad_ladders_are_refused_naming_the_value(
    helm: Helm, tmp_path: Any, ladder: list[dict[str, Any]], extra: tuple[str, ...], message: str
) -> None:
    done = helm("template", "q", str(golden.CHART_DIR), *_ladder_args(tmp_path, ladder, *extra))
    assert done.returncode != 0
    assert message in done.stderr, done.stderr


def _workers(objs: list[dict[str, Any]]) -> dict[str, Any]:
    (rayjob,) = _by_kind(objs, "RayJob")
    spec: dict[str, Any] = rayjob["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]
    return spec


def test_avoid_plans_is_a_required_node_affinity_on_the_workers(template: Render) -> None:
    objs = template("-f", str(golden.CHART_DIR / "values" / f"{PROFILE}.yaml"), "--set", "job.avoidPlans={spot}")
    assert _workers(objs)["affinity"] == {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "planb.dev/plan", "operator": "NotIn", "values": ["spot"]}]}
                ]
            }
        }
    }
    (rayjob,) = _by_kind(objs, "RayJob")
    head = rayjob["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
    assert "affinity" not in head  # the head runs on the CPU pool, which no plan label names


def test_no_avoid_plans_no_affinity(template: Render) -> None:
    assert "affinity" not in _workers(template("-f", str(golden.CHART_DIR / "values" / f"{PROFILE}.yaml")))


def test_avoid_plans_must_be_plan_names(helm: Helm) -> None:
    done = helm("template", "j", str(golden.CHART_DIR), "--set", "job.avoidPlans={Spot Pool}")
    assert done.returncode != 0
    assert "/job/avoidPlans/0" in done.stderr, done.stderr


def test_the_schema_caps_a_plans_slices_and_a_jobs_workers_at_200(helm: Any, tmp_path: Any) -> None:
    """planb's ceiling (planb.catalog.pool_layout.MAX_SLICES) holds for values written by hand too."""
    at_cap = [{"name": "on-demand", "kind": "on-demand", "slices": 200, "quota": quota(1)}]
    assert helm("template", "q", str(golden.CHART_DIR), *_ladder_args(tmp_path, at_cap)).returncode == 0
    over = [{"name": "on-demand", "kind": "on-demand", "slices": 201, "quota": quota(1)}]
    done = helm("template", "q", str(golden.CHART_DIR), *_ladder_args(tmp_path, over))
    assert done.returncode != 0 and "201" in done.stderr and "200" in done.stderr, done.stderr
    job = ("-f", str(golden.CHART_DIR / "values" / f"{PROFILE}.yaml"), "--set", "job.workers.replicas=201")
    done = helm("template", "j", str(golden.CHART_DIR), *job)
    assert done.returncode != 0 and "replicas" in done.stderr and "200" in done.stderr, done.stderr
