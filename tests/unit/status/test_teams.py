"""`planb status` by team: a job's team is its ClusterQueue when the queues release made that queue for a team
(charts/planb queues.teams labels it planb.dev/team), else its namespace; the table and --cost group by it."""

from __future__ import annotations

from planb.status import cost, shapes
from planb.status.render import by_team, table
from planb.status.report import JobStatus


def _queue(name: str, team: bool) -> dict[str, object]:
    labels = {shapes.TEAM_LABEL: name} if team else {}
    return {"metadata": {"name": name, "labels": labels}, "spec": {"resourceGroups": []}}


def test_a_team_s_cluster_queue_names_the_team_else_the_namespace_does() -> None:
    local = [
        {"metadata": {"namespace": ns, "name": "user-queue"}, "spec": {"clusterQueue": cq}}
        for ns, cq in (("research", "research"), ("research-2", "research"), ("default", "cluster-queue"))
    ]
    queues = shapes.queues(local, [_queue("research", True), _queue("cluster-queue", False)], [])
    assert queues.team("research-2", queues.of("research-2", "user-queue")[0]) == "research"
    assert queues.team("default", queues.of("default", "user-queue")[0]) == "default"
    # A LocalQueue the reader cannot see: the namespace.
    assert queues.team("other", queues.of("other", "user-queue")[0]) == "other"


def _job(namespace: str, name: str, team: str) -> JobStatus:
    return JobStatus(namespace=namespace, name=name, queue="user-queue", suspended=False, team=team)


def test_one_team_prints_the_one_table_as_before() -> None:
    jobs = [_job("default", "job-1", "default"), _job("default", "job-2", "default")]
    assert by_team(jobs) == table(jobs)


def test_jobs_of_two_teams_print_a_table_per_team() -> None:
    jobs = [_job("team-b", "job-2", "team-b"), _job("team-a", "job-1", "team-a"), _job("team-a2", "job-3", "team-a")]
    out = by_team(jobs)
    first, second = out.split("\n\n")
    assert first.splitlines()[0] == "TEAM team-a (2 jobs)"
    assert [line.split()[0] for line in first.splitlines()[2:]] == ["team-a/job-1", "team-a2/job-3"]
    assert second.splitlines()[0] == "TEAM team-b (1 job)"
    assert [line.split()[0] for line in second.splitlines()[2:]] == ["team-b/job-2"]


def test_cost_adds_up_per_team() -> None:
    costs = [
        cost.JobCost("team-a", "job-1", "tpu-v6e-4x4", 16, 3600.0, 1, False, "team-a"),
        cost.JobCost("team-a2", "job-3", "tpu-v6e-4x4", 16, 1800.0, 1, False, "team-a"),
        cost.JobCost("default", "job-4", "tpu-v6e-4x4", 16, 3600.0, 1, False),
    ]
    assert cost.teams(costs) == {"default": 16.0, "team-a": 24.0}
