"""Teams (the queues chart's queues.teams): the controller, started with the command line the chart renders for it,
moves a team's job stocked out on plan A, lists only the teams' namespaces, and counts the team's jobs in its metrics
by plan and by the team's ClusterQueue. Before the chart listed every team's ClusterQueue, it gave the controller
`--cluster-queues=cluster-queue`, which no team's Workload names, and each team's stocked-out job stayed on plan A's
eviction loop."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb.failover.__main__ import main
from planb.failover.controller import MOVED_ANNOTATION, Config, Controller
from planb.failover.kubeapi import Api
from tests.support.shared.failover.fake_api import FakeCluster
from tests.support.shared.failover.kueue_steps import Kueue
from tests.support.shared.failover.objects import JOB, NOT_ON_PLAN_A, NS, PLAN_A, WL, rayjob_object, workload_object

Obj = dict[str, Any]

pytestmark = pytest.mark.usefixtures("no_network")

#: Two teams; the job of the unit tests' objects (namespace `default`) is team serving's.
PLAN_A_QUOTA = {"on-demand": {"cpu": 32, "memory": "64Gi", "accelerator": 16}}
TEAMS = [
    {"name": "research", "namespaces": ["research"], "quotas": PLAN_A_QUOTA},
    {"name": "serving", "namespaces": ["serving", NS], "quotas": PLAN_A_QUOTA},
]


class Started(Exception):
    """What `python -m planb.failover` built from its command line, before it talks to anything."""

    def __init__(self, cfg: Config) -> None:
        super().__init__("started")
        self.cfg = cfg


class _Capture(Controller):
    def __init__(self, api: Api, cfg: Config) -> None:
        raise Started(cfg)


def chart_config(template: Callable[..., list[Obj]], tmp_path: Path) -> Config:
    """The controller's Config as its Deployment in the queues chart, rendered with TEAMS, starts it."""
    values = tmp_path / "teams.yaml"
    values.write_text(yaml.safe_dump({"mode": "queues", "failover": {"afterMinutes": 10}, "queues": {"teams": TEAMS}}))
    [deployment] = [o for o in template("-f", str(values)) if o["kind"] == "Deployment"]
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    with pytest.raises(Started) as started:
        main([*args, "--server=https://127.0.0.1:6443", "--token-file=/nonexistent"], _Capture)
    return started.value.cfg


def test_a_team_s_job_stocked_out_on_plan_a_moves_to_plan_b(
    template: Callable[..., list[Obj]], tmp_path: Path, cluster: FakeCluster, kueue: Kueue
) -> None:
    cfg = chart_config(template, tmp_path)
    assert cfg.cluster_queues == ("research", "serving")
    assert cfg.namespaces == ("research", "serving", NS)
    elsewhere = workload_object(rayjob_object())
    elsewhere["metadata"].update(namespace="no-team", uid="9f3c")
    cluster.put("workloads", elsewhere)
    controller = Controller(cluster, cfg)

    kueue.admit(PLAN_A, "serving")
    controller.poll_once()
    # Labelled with the team's ClusterQueue, as Kueue's own metrics are (the dashboard's cluster_queue variable).
    assert 'planb_admitted_workloads{plan="on-demand",cluster_queue="serving",region=""} 1' in controller.metrics()
    kueue.evict()
    controller.poll_once()
    kueue.release()
    controller.poll_once()

    assert [(w.verb, w.plural) for w in cluster.writes] == [
        ("patch", "rayjobs"),
        ("patch", "workloads"),
        ("create", "events"),
    ]
    assert cluster.read("workloads", WL)["spec"]["podSets"][1]["template"]["spec"]["affinity"] == NOT_ON_PLAN_A
    assert MOVED_ANNOTATION in cluster.read("rayjobs", JOB)["metadata"]["annotations"]
    # Moved after Kueue released its quota (no admission left): the team is the one its LocalQueue was admitted to.
    assert 'planb_failover_moves_total{plan="on-demand",cluster_queue="serving",region=""} 1' in controller.metrics()
    # Each team's namespace is listed, and no other.
    listed = {namespace for verb, plural, namespace in cluster.calls if (verb, plural) == ("list", "workloads")}
    assert listed == {"research", "serving", NS}
