"""queues.teams: a ClusterQueue per team in one cohort, a LocalQueue per namespace, and Kueue's
WorkloadPriorityClasses, which a job names with job.priority.

Without teams the chart renders today's one ClusterQueue and LocalQueue byte for byte (the goldens,
compared in tests/unit/chart/test_chart_ladder.py), and no WorkloadPriorityClass.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from planb.build import golden
from tests.support.shared.chart.helm import Helm

Render = Callable[..., list[dict[str, Any]]]

TEAMS = [
    {
        "name": "team-a",
        "namespaces": ["team-a"],
        "quotas": {"on-demand": {"cpu": 32, "memory": "64Gi", "accelerator": 16}},
    },
    {
        "name": "team-b",
        "namespaces": ["team-b", "team-b2"],
        "quotas": {
            "on-demand": {"cpu": 32, "memory": "64Gi", "accelerator": 16},
            "default-cpu": {"cpu": 4, "memory": "8Gi"},
        },
        "borrowingLimit": {"accelerator": 0},
        "lendingLimit": {"accelerator": 8},
    },
]


def _teams(tmp_path: Path, teams: list[dict[str, Any]]) -> tuple[str, ...]:
    path = tmp_path / "teams.yaml"
    path.write_text(yaml.safe_dump({"mode": "queues", "queues": {"teams": teams}}))
    return ("-f", str(path))


def _kind(objs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == kind]


def _flavors(queue: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    [group] = queue["spec"]["resourceGroups"]
    return {
        f["name"]: {r["name"]: {k: v for k, v in r.items() if k != "name"} for r in f["resources"]}
        for f in group["flavors"]
    }


def test_no_teams_render_one_queue_and_no_priority_class(template: Render) -> None:
    objs = template("--set", "mode=queues")
    assert [q["metadata"]["name"] for q in _kind(objs, "ClusterQueue")] == ["cluster-queue"]
    assert "cohortName" not in _kind(objs, "ClusterQueue")[0]["spec"]
    assert [(q["metadata"]["namespace"], q["spec"]["clusterQueue"]) for q in _kind(objs, "LocalQueue")] == [
        ("default", "cluster-queue")
    ]
    assert _kind(objs, "WorkloadPriorityClass") == []


def test_two_teams_share_a_cohort_each_with_its_quota_and_limits(template: Render, tmp_path: Path) -> None:
    objs = template(*_teams(tmp_path, TEAMS))
    queues = {q["metadata"]["name"]: q for q in _kind(objs, "ClusterQueue")}
    assert sorted(queues) == ["team-a", "team-b"]
    for name, queue in queues.items():
        assert queue["spec"]["cohortName"] == "planb"
        assert queue["spec"]["preemption"] == {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"}
        assert queue["metadata"]["labels"]["planb.dev/team"] == name
    assert queues["team-b"]["spec"]["namespaceSelector"] == {
        "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["team-b", "team-b2"]}]
    }
    a, b = _flavors(queues["team-a"]), _flavors(queues["team-b"])
    # team-a: the default CPU quota, its own plan A, no plan B of its own (it may only borrow there), no limits.
    assert a["default-cpu"]["cpu"] == {"nominalQuota": 10}
    assert a["on-demand"]["google.com/tpu"] == {"nominalQuota": 16}
    assert a["dws"]["google.com/tpu"] == {"nominalQuota": 0}
    # team-b never borrows; it lends 8 chips of its plan A, and lends nothing where it owns nothing.
    # The limits are the plans' (Kueue's borrowing of chips); the CPU flavor keeps the team's own quota alone.
    assert b["default-cpu"]["cpu"] == {"nominalQuota": 4}
    assert b["on-demand"]["google.com/tpu"] == {"nominalQuota": 16, "borrowingLimit": 0, "lendingLimit": 8}
    assert b["on-demand"]["cpu"] == {"nominalQuota": 32}
    assert b["dws"]["google.com/tpu"] == {"nominalQuota": 0, "borrowingLimit": 0}
    # Plan B's admission check stays on each team's queue.
    assert queues["team-a"]["spec"]["admissionChecksStrategy"]["admissionChecks"][0]["onFlavors"] == ["dws"]
    locals_ = {
        (q["metadata"]["namespace"], q["metadata"]["name"]): q["spec"]["clusterQueue"]
        for q in _kind(objs, "LocalQueue")
    }
    assert locals_ == {
        ("team-a", "user-queue"): "team-a",
        ("team-b", "user-queue"): "team-b",
        ("team-b2", "user-queue"): "team-b",
    }
    accounts = {(s["metadata"].get("namespace"), s["metadata"]["name"]) for s in _kind(objs, "ServiceAccount")}
    assert {("team-a", "planb-job"), ("team-b", "planb-job"), ("team-b2", "planb-job")} <= accounts
    # `helm test` checks every team's ClusterQueue and the LocalQueue of each of its namespaces, as a ServiceAccount
    # that may get those and nothing else (a Role in each team namespace).
    [pod] = [o for o in _kind(objs, "Pod") if o["metadata"]["name"].endswith("-test-queues")]
    args = pod["spec"]["containers"][0]["command"]
    assert args[4:] == [
        "--cluster-queue=team-a",
        "--cluster-queue=team-b",
        "--local-queue=team-a/user-queue=team-a",
        "--local-queue=team-b/user-queue=team-b",
        "--local-queue=team-b2/user-queue=team-b",
    ], args
    hooks = [o for o in objs if o["metadata"].get("annotations", {}).get("helm.sh/hook") == "test"]
    [reader] = [o for o in hooks if o["kind"] == "ClusterRole"]
    assert reader["rules"][0]["resourceNames"] == ["team-a", "team-b"]
    roles = {o["metadata"]["namespace"]: o["rules"][0]["resourceNames"] for o in hooks if o["kind"] == "Role"}
    assert roles == {"team-a": ["user-queue"], "team-b": ["user-queue"], "team-b2": ["user-queue"]}
    bound = {o["metadata"]["namespace"] for o in hooks if o["kind"] == "RoleBinding"}
    assert bound == {"team-a", "team-b", "team-b2"}
    assert {p["metadata"]["name"]: p["value"] for p in _kind(objs, "WorkloadPriorityClass")} == {
        "low": 100,
        "normal": 1000,
        "high": 10000,
    }


def test_a_namespace_in_two_teams_is_refused(helm: Helm, tmp_path: Path) -> None:
    teams = [{**TEAMS[0]}, {**TEAMS[1], "namespaces": ["team-b", "team-a"]}]
    done = helm("template", "q", "charts/planb", *_teams(tmp_path, teams))
    assert done.returncode != 0
    assert "namespace team-a is in teams team-a and team-b" in done.stderr, done.stderr


def test_a_plan_quota_without_chips_is_refused_naming_the_team_and_the_plan(helm: Helm, tmp_path: Path) -> None:
    """A team's quota on a plan flavor must give its chips: Kueue's ClusterQueue wants a nominalQuota for every covered
    resource, so without this check the API server refused the install after the render. The CPU flavor's quota
    (default-cpu, team-b's) needs none."""
    teams = [{**TEAMS[0], "quotas": {"on-demand": {"cpu": 32, "memory": "64Gi"}}}, TEAMS[1]]
    done = helm("template", "q", "charts/planb", *_teams(tmp_path, teams))
    assert done.returncode != 0
    assert "team team-a's quota on plan on-demand has no accelerator (its chips there); give it, 0" in done.stderr, (
        done.stderr
    )
    assert helm("template", "q", "charts/planb", *_teams(tmp_path, TEAMS)).returncode == 0


def test_a_job_names_its_priority_class(template: Render) -> None:
    def labels(*args: str) -> dict[str, str]:
        [job] = _kind(template(*args), "RayJob")
        return dict(job["metadata"]["labels"])

    assert "kueue.x-k8s.io/priority-class" not in labels()
    assert labels("--set", "job.priority=high")["kueue.x-k8s.io/priority-class"] == "high"
    [smoke] = _kind(
        template(
            "--set", "job.smoke.enabled=true", "--set", "job.training.checkpointDir=/tmp/c", "--set", "job.priority=low"
        ),
        "RayJob",
    )
    assert smoke["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "low"


def test_a_job_larger_than_its_team_can_ever_hold_is_refused_saying_by_how_much(helm: Helm, tmp_path: Path) -> None:
    """The queues release's record (the KubeRay record's key `teams`) as a job release reads it with Helm's lookup:
    a copy of the chart reads the record from a file instead, since `helm template` has no cluster."""
    chart = tmp_path / "planb"
    shutil.copytree(golden.CHART_DIR, chart)
    (chart / "templates" / "zz-teams-probe.yaml").write_text(
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: teams-probe\ndata:\n'
        '  teams: {{ include "planb.teamsRecord" . | quote }}\n'
    )  # fmt: skip
    done = helm("template", "q", str(chart), *_teams(tmp_path, TEAMS))
    assert done.returncode == 0, done.stderr
    [probe] = [d for d in yaml.safe_load_all(done.stdout) if d and d["metadata"]["name"] == "teams-probe"]
    record = json.loads(probe["data"]["teams"])
    # team-a: its 16 chips of plan A and the 8 team-b lends; team-b never borrows.
    assert record["team-a"] == {"team": "team-a", "plans": {"on-demand": 24, "dws": 0}}
    assert record["team-b2"] == {"team": "team-b", "plans": {"on-demand": 16, "dws": 0}}
    helpers = chart / "templates" / "_helpers.tpl"
    lookup = '{{- $data = (lookup "v1" "ConfigMap" (first $at) (last $at)).data | default dict -}}'
    assert lookup in helpers.read_text()
    helpers.write_text(helpers.read_text().replace(lookup, '{{- $data = .Files.Get "record.json" | fromJson -}}'))
    (chart / "record.json").write_text(json.dumps({"teams": probe["data"]["teams"]}))

    def job(namespace: str, slices: int) -> subprocess.CompletedProcess[str]:
        return helm("template", "job-1", str(chart), "-n", namespace, "--set", f"job.workers.replicas={slices}")

    refused = job("team-a", 2)
    assert refused.returncode != 0
    assert (
        "this job asks for 32 google.com/tpu (job.workers.replicas 2 x 4 hosts x 4 per host) but team team-a"
        " (namespace team-a) can ever hold at most 24 on any plan (on-demand: its quota plus what it may borrow"
    ) in refused.stderr, refused.stderr
    assert "8 too many" in refused.stderr and "ask for at most 24" in refused.stderr, refused.stderr
    assert "16 too many" in job("team-b", 2).stderr
    assert job("team-b", 1).returncode == 0
    # A namespace of no team: nothing to check against.
    assert job("elsewhere", 9).returncode == 0


def test_the_failover_controller_acts_on_every_team_s_queue_and_only_in_their_namespaces(
    template: Render, tmp_path: Path
) -> None:
    """With teams the release renders no queues.clusterQueue and no LocalQueue in queues.localQueue.namespace: the
    controller is given each team's ClusterQueue and namespace (else it would skip every team's stocked-out job),
    gets its Role there and nowhere else, and its ServiceAccount says the same for the host controller of local mode."""
    on = ("--set", "failover.afterMinutes=10")
    failover = [o for o in template(*_teams(tmp_path, TEAMS), *on) if o["metadata"]["name"].endswith("-failover")]
    [deployment] = _kind(failover, "Deployment")
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--cluster-queues=team-a,team-b" in args, args
    assert "--namespaces=team-a,team-b,team-b2" in args, args
    for kind in ("Role", "RoleBinding"):
        assert [o["metadata"]["namespace"] for o in _kind(failover, kind)] == ["team-a", "team-b", "team-b2"]
    [account] = _kind(failover, "ServiceAccount")
    assert account["metadata"]["annotations"] == {
        "planb.dev/cluster-queues": "team-a,team-b",
        "planb.dev/namespaces": "team-a,team-b,team-b2",
    }
    # failover.extraNamespaces still adds a namespace; clusterWide leaves the namespaces to its ClusterRole.
    extra = template(*_teams(tmp_path, TEAMS), *on, "--set-json", 'failover.extraNamespaces=["ml-infra"]')
    [account] = [o for o in _kind(extra, "ServiceAccount") if o["metadata"]["name"].endswith("-failover")]
    assert account["metadata"]["annotations"]["planb.dev/namespaces"] == "team-a,team-b,team-b2,ml-infra"
    wide = template(*_teams(tmp_path, TEAMS), *on, "--set", "failover.clusterWide=true")
    [account] = [o for o in _kind(wide, "ServiceAccount") if o["metadata"]["name"].endswith("-failover")]
    assert account["metadata"]["annotations"]["planb.dev/namespaces"] == ""


def test_queues_notes_name_each_team_s_queue_and_namespace(notes: Callable[..., str], tmp_path: Path) -> None:
    """With teams NOTES.txt names what the release renders (the chart's planb.clusterQueues and
    planb.localQueueNamespaces): each team's ClusterQueue and LocalQueue, not queues.clusterQueue or the LocalQueue in
    queues.localQueue.namespace, which it does not render; its delete commands name each object it keeps."""
    text = notes(*_teams(tmp_path, TEAMS), "--set", "queues.jobServiceAccount=planb-job")
    assert "ClusterQueues team-a, team-b, one per team in cohort planb" in text
    assert "LocalQueue user-queue in each team's namespace (team-a, team-b, team-b2)" in text
    assert "kubectl get clusterqueue team-a team-b -o wide" in text
    assert "helm install job-1 charts/planb -n team-a " in text
    for ns in ("team-a", "team-b", "team-b2"):
        assert f"kubectl delete localqueue user-queue -n {ns}\n" in text
        assert f"kubectl delete serviceaccount planb-job -n {ns}\n" in text
    assert "kubectl delete clusterqueue team-a team-b\n" in text
    assert "kubectl delete workloadpriorityclass low normal high" in text
    assert "cluster-queue" not in text
    assert "default/user-queue" not in text and "user-queue -n default" not in text
