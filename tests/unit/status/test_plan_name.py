"""`planb status` names the plan each job landed on, not only the flavor: the plan is the
planb.dev/plan node label its ResourceFlavor selects, so a ladder's spot rung reads as plan spot."""

from __future__ import annotations

from typing import Any

from planb.status.render import explain, table
from planb.status.report import collect
from tests.support.shared.status_fakes import FakeKube, pool_node, ray_pod

Obj = dict[str, Any]


def _flavor(name: str, labels: dict[str, str]) -> Obj:
    return {"metadata": {"name": name}, "spec": {"nodeLabels": labels}}


def _kube(flavor: str, flavors: list[Obj]) -> FakeKube:
    rayjob = {
        "metadata": {"namespace": "default", "name": "job-4", "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
        "spec": {"suspend": False},
        "status": {"rayClusterName": "job-1-raycluster"},
    }
    workload = {
        "metadata": {
            "namespace": "default",
            "name": "rayjob-job-4-abcde",
            "ownerReferences": [{"kind": "RayJob", "name": "job-4"}],
        },
        "spec": {"active": True},
        "status": {
            "conditions": [{"type": "Admitted", "status": "True", "reason": "Admitted", "message": ""}],
            "admission": {
                "podSetAssignments": [
                    {"name": "head", "count": 1, "flavors": {"cpu": "default-cpu"}},
                    {"name": "workers", "count": 4, "flavors": {"cpu": flavor, "google.com/tpu": flavor}},
                ]
            },
        },
    }
    return FakeKube(
        {
            "/namespaces/default/rayjobs": [rayjob],
            "/namespaces/default/workloads": [workload],
            "/resourceflavors": flavors,
            "/api/v1/nodes": [pool_node("n-s", "spot-pool", "spot")],
            "/namespaces/default/pods": [ray_pod("job-4-worker-0", "n-s")],
        }
    )


LADDER = [
    _flavor("default-cpu", {"cloud.google.com/gke-nodepool": "default-pool"}),
    _flavor("on-demand", {"planb.dev/plan": "on-demand"}),
    _flavor("spot", {"planb.dev/plan": "spot", "cloud.google.com/gke-spot": "true"}),
    _flavor("flex", {"planb.dev/plan": "dws"}),
]


def test_the_table_and_the_detail_name_the_plan() -> None:
    (job,) = collect(_kube("spot", LADDER), "default")  # type: ignore[arg-type]
    assert job.plan == "spot"
    header, row = table([job]).splitlines()[:2]
    assert header.split()[:4] == ["JOB", "STATE", "PLAN", "FLAVOR"]
    assert row.split()[:4] == ["default/job-4", "Admitted", "spot", "spot"]
    assert "    plan spot (flavor spot)" in explain(job)


def test_a_flavor_named_otherwise_still_names_its_plan() -> None:
    (job,) = collect(_kube("flex", LADDER), "default")  # type: ignore[arg-type]
    assert (job.plan, job.accelerator_flavor) == ("dws", "flex")
    assert "plan dws (flavor flex)" in explain(job)


def test_without_a_plan_label_or_the_right_to_read_flavors_the_plan_is_a_dash() -> None:
    (job,) = collect(_kube("spot", []), "default")  # type: ignore[arg-type]
    assert job.plan == "-"
    assert "plan " not in explain(job).split("Workload", 1)[1].splitlines()[1]
