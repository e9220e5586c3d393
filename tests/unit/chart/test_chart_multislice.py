"""A job of two or more multi-host TPU slices stays off the DWS plans, and the chart says why.

Kueue asks for all of a job's workers in one ProvisioningRequest and GKE provisions it only in one
node pool that holds every pod, while a multi-host TPU pool holds one slice (planb.local.capacity.scaleup),
so such a job would never be provisioned on a dws rung: the workers' node affinity keeps Kueue's flavor
assignment off those rungs, and the RayJob's annotation and NOTES.txt give planb's reason.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from planb.build import golden
from planb.catalog import values

Render = Callable[..., list[dict[str, Any]]]
MULTI_HOST = str(golden.CHART_DIR / "values" / "tpu-v6e-4x4.yaml")  # 4 hosts per slice
SINGLE_HOST = str(golden.CHART_DIR / "values" / "tpu-v6e-2x4.yaml")
OFF_DWS = "planb.dev/off-dws"


def _rayjob(objs: list[dict[str, Any]]) -> dict[str, Any]:
    (rayjob,) = [o for o in objs if o["kind"] == "RayJob"]
    return rayjob


def _not_in(rayjob: dict[str, Any]) -> list[str] | None:
    spec = rayjob["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]
    if "affinity" not in spec:
        return None
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    (expression,) = terms[0]["matchExpressions"]
    assert (expression["key"], expression["operator"]) == ("planb.dev/plan", "NotIn")
    return list(expression["values"])


def test_a_two_slice_job_stays_off_the_seed_s_dws_plan_and_says_why(template: Render) -> None:
    rayjob = _rayjob(template("-f", MULTI_HOST, "--set", "job.workers.replicas=2"))
    assert _not_in(rayjob) == ["dws"]
    reason = rayjob["metadata"]["annotations"][OFF_DWS]
    assert reason.startswith("planb's policy: this job of 2 slices x 4 hosts stays off DWS plan(s) dws because")
    assert "its 8 workers in one ProvisioningRequest" in reason


def test_every_dws_rung_of_the_ladder_is_avoided_with_the_job_s_own_plans(template: Render, tmp_path: Path) -> None:
    quota = values.chart_values("tpu-v6e-4x4", on_demand_slices=3)["queues"]["quotas"]["onDemand"]
    ladder = [
        {"name": "on-demand", "kind": "on-demand", "quota": quota},
        {"name": "flex", "kind": "dws", "quota": quota},
        {"name": "flex-2", "kind": "dws", "quota": quota},
    ]
    extra = tmp_path / "ladder.yaml"
    extra.write_text(yaml.safe_dump({"queues": {"ladder": ladder}, "job": {"avoidPlans": ["spot", "flex"]}}))
    rayjob = _rayjob(template("-f", MULTI_HOST, "-f", str(extra), "--set", "job.workers.replicas=3"))
    assert _not_in(rayjob) == ["spot", "flex", "flex-2"]  # each plan once, the job's own first
    assert "stays off DWS plan(s) flex, flex-2 because" in rayjob["metadata"]["annotations"][OFF_DWS]


def test_one_slice_single_host_or_no_dws_keeps_the_dws_plan(template: Render) -> None:
    for args in (
        ("-f", MULTI_HOST),
        ("-f", SINGLE_HOST, "--set", "job.workers.replicas=2"),  # a single-host pool holds every slice
        ("-f", MULTI_HOST, "--set", "job.workers.replicas=2", "--set", "dws.enabled=false"),
    ):
        rayjob = _rayjob(template(*args))
        assert _not_in(rayjob) is None, args
        assert OFF_DWS not in rayjob["metadata"].get("annotations", {}), args


def test_notes_say_why_a_two_slice_job_stays_off_dws(notes: Callable[..., str]) -> None:
    text = notes("-f", MULTI_HOST, "--set", "job.workers.replicas=2")
    assert "planb's policy: this job of 2 slices x 4 hosts stays off DWS plan(s) dws because" in text
    assert "run it with job.workers.replicas=1 to use DWS." in text
    assert "planb's policy" not in notes("-f", MULTI_HOST)
