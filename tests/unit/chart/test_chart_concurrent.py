"""The concurrent ladder mode: queues.ladderMode=concurrent gives the ClusterQueue Kueue's
concurrentAdmissionPolicy, drops the CPU flavor from it (Kueue holds every PodSet of a variant to one
flavor), keeps the DWS admission check on the dws flavor only, and refuses what Kueue's webhook or
planb's policy refuses. The sequential default renders the golden files unchanged
(tests/unit/chart/test_chart_ladder.py compares them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml

from planb.build import golden
from tests.support.shared.chart.helm import Helm
from tests.support.shared.chart.ladders import FOUR, PROFILE

Render = Callable[..., list[dict[str, Any]]]


def _args(tmp_path: Any, queues: dict[str, Any], *extra: str) -> tuple[str, ...]:
    path = tmp_path / "concurrent.yaml"
    path.write_text(yaml.safe_dump({"mode": "queues", "queues": {"ladder": FOUR, **queues}}))
    return ("-f", str(golden.CHART_DIR / "values" / f"{PROFILE}.yaml"), "-f", str(path), *extra)


def _cluster_queue(objs: list[dict[str, Any]]) -> dict[str, Any]:
    [cq] = [o for o in objs if o["kind"] == "ClusterQueue"]
    return cq


def test_concurrent_mode_renders_the_policy_and_only_the_ladders_flavors(template: Render, tmp_path: Any) -> None:
    cq = _cluster_queue(template(*_args(tmp_path, {"ladderMode": "concurrent"})))
    spec = cq["spec"]
    assert spec["concurrentAdmissionPolicy"] == {"migration": {"mode": "TryPreferredFlavors"}}
    [group] = spec["resourceGroups"]
    assert [f["name"] for f in group["flavors"]] == ["reserved", "on-demand", "dws", "spot"]
    assert spec["admissionChecksStrategy"] == {"admissionChecks": [{"name": "dws-prov", "onFlavors": ["dws"]}]}


def test_sequential_mode_has_no_policy_and_keeps_the_cpu_flavor(template: Render, tmp_path: Any) -> None:
    spec = _cluster_queue(template(*_args(tmp_path, {})))["spec"]
    assert "concurrentAdmissionPolicy" not in spec
    assert spec["resourceGroups"][0]["flavors"][0]["name"] == "default-cpu"


def test_the_last_acceptable_plan_and_retain_mode_come_from_the_values(template: Render, tmp_path: Any) -> None:
    concurrent = {"ladderMode": "concurrent", "concurrentAdmission": {"lastAcceptableFlavor": "dws"}}
    spec = _cluster_queue(template(*_args(tmp_path, concurrent)))["spec"]
    assert spec["concurrentAdmissionPolicy"]["migration"] == {
        "mode": "TryPreferredFlavors",
        "constraints": {"lastAcceptableFlavorName": "dws"},
    }
    retain = {"ladderMode": "concurrent", "concurrentAdmission": {"migrationMode": "RetainFirstAdmission"}}
    spec = _cluster_queue(template(*_args(tmp_path, retain)))["spec"]
    assert spec["concurrentAdmissionPolicy"] == {"migration": {"mode": "RetainFirstAdmission"}}


def test_a_concurrent_job_leaves_head_and_submitter_to_kueues_flavor(template: Render) -> None:
    values = str(golden.CHART_DIR / "values" / f"{PROFILE}.yaml")
    [rayjob] = [o for o in template("-f", values, "--set", "job.ladderMode=concurrent") if o["kind"] == "RayJob"]
    head = rayjob["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
    submitter = rayjob["spec"]["submitterPodTemplate"]["spec"]
    for pod in (head, submitter):
        assert "nodeSelector" not in pod
        assert {t["key"] for t in pod["tolerations"]} == {"google.com/tpu", "cloud.google.com/gke-queued"}
    [sequential] = [o for o in template("-f", values) if o["kind"] == "RayJob"]
    seq_head = sequential["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
    assert seq_head["nodeSelector"] == {"cloud.google.com/gke-nodepool": "default-pool"}


def _refused(helm: Helm, args: tuple[str, ...], message: str) -> None:
    done = helm("template", golden.RELEASE, str(golden.CHART_DIR), *args)
    assert done.returncode != 0, done.stdout[-2000:]
    assert message in done.stderr, done.stderr


def test_refusals(helm: Helm, tmp_path: Any) -> None:
    _refused(
        helm,
        _args(tmp_path, {"ladderMode": "concurrent", "concurrentAdmission": {"lastAcceptableFlavor": "gone"}}),
        "queues.concurrentAdmission.lastAcceptableFlavor=gone is not a plan of queues.ladder "
        "(reserved, on-demand, dws, spot)",
    )
    retain = {"migrationMode": "RetainFirstAdmission", "lastAcceptableFlavor": "dws"}
    _refused(
        helm,
        _args(tmp_path, {"ladderMode": "concurrent", "concurrentAdmission": retain}),
        "needs migrationMode TryPreferredFlavors, not RetainFirstAdmission",
    )
    _refused(
        helm,
        _args(tmp_path, {"ladderMode": "concurrent"}, "--set", "failover.afterMinutes=10"),
        "queues.ladderMode=concurrent cannot be combined with failover.afterMinutes=10: planb's policy:",
    )
    seed = tmp_path / "seed.yaml"
    seed.write_text(yaml.safe_dump({"mode": "queues", "queues": {"ladderMode": "concurrent"}}))
    _refused(helm, ("-f", str(seed)), "queues.ladderMode=concurrent needs queues.ladder: planb's policy:")
    _refused(helm, ("--set", "queues.ladderMode=both"), "ladderMode")
