"""Two teams share plan A: one borrows the other's idle quota, the owner's higher-priority job takes it back.

The queues release of the `site` topology is switched to two teams (queues.teams, `helm upgrade --reuse-values`;
Topologies.reset rolls it back): team-a owns no quota and team-b owns plan A's one slice, in one Kueue cohort.
team-a's low-priority job (examples/your-code/team/regression.py through job.command, as in test_your_code.py)
is admitted on team-b's idle quota, borrowed. team-b's high-priority job then reclaims it (reclaimWithinCohort
LowerPriority, so it is the priority that decides): Kueue preempts team-a's job (the job suspended, KubeRay deletes
its Ray cluster, the stand-in stops the program with SIGTERM and it saves the step it reached), runs team-b's,
and re-admits team-a's once team-b's has ended, which resumes from its checkpoint with 0 or 1 steps lost.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from planb import paths
from planb.kube import Kube, Obj
from planb.kube_objects import conditions
from planb.local.rayhead import settings as rayhead_settings
from planb.status.report import KUEUE
from tests.support.e2e.jobs import install_job, payload_processes
from tests.support.e2e.topologies import Run, Topologies
from tests.support.e2e.waits import wait_until

pytestmark = [pytest.mark.slow]

TEAM = paths.REPO / "examples" / "your-code" / "team"
COMMAND = ["python", "/workspace/regression.py", "--steps", "100000000", "--save-every", "100", "--report-every", "50"]
SLICE = {"cpu": 32, "memory": "64Gi", "accelerator": 16}
TEAMS = [
    {"name": "team-a", "namespaces": ["team-a"], "quotas": {}},
    {"name": "team-b", "namespaces": ["team-b"], "quotas": {"on-demand": SLICE}},
]


def workload(kube: Kube, namespace: str, job: str) -> Obj | None:
    for wl in kube.items(f"{KUEUE}/namespaces/{namespace}/workloads"):
        if any(o.get("name") == job for o in wl["metadata"].get("ownerReferences", [])):
            return wl
    return None


def admitted_on(kube: Kube, namespace: str, job: str) -> str:
    """The accelerator flavor the job's Workload is admitted on by its ClusterQueue ('' while it is not)."""
    wl = workload(kube, namespace, job) or {}
    if conditions(wl).get("Admitted", {}).get("status") != "True":
        return ""
    admission = (wl.get("status") or {}).get("admission") or {}
    flavors = {f for ps in admission.get("podSetAssignments", []) for f in (ps.get("flavors") or {}).values()}
    return f"{admission.get('clusterQueue')}:{','.join(sorted(flavors - {'default-cpu'}))}"


def borrowed_chips(kube: Kube, cluster_queue: str) -> str:
    """The chips of plan A the ClusterQueue uses beyond its own quota (status.flavorsUsage[].resources[].borrowed)."""
    usage = ((kube.get(f"{KUEUE}/clusterqueues/{cluster_queue}") or {}).get("status") or {}).get("flavorsUsage") or []
    found = [r for f in usage if f["name"] == "on-demand" for r in f["resources"] if r["name"] == "google.com/tpu"]
    return str(found[0].get("borrowed", "0")) if found else ""


def logs(namespace: str, job: str, since: float) -> list[Path]:
    found = [p for p in rayhead_settings.logs_dir().glob(f"{namespace}_{job}_*.log") if p.stat().st_mtime >= since]
    return sorted(found, key=lambda p: p.stat().st_mtime)


def resumed_run(since: float) -> bool:
    found = logs("team-a", "job-1", since)
    return len(found) == 2 and "planb-progress" in found[-1].read_text(errors="replace")


@pytest.fixture()
def teams(site: Path, helm: Run, topologies: Topologies) -> Iterator[Kube]:
    """The namespaces and the two teams' queues; afterwards the team jobs go, the queues release is rolled back
    while the namespaces it wrote into still exist, then the queues and namespaces go (the queue objects are kept on
    a rollback, helm.sh/resource-policy: keep)."""
    kube = Kube(site)
    for team in TEAMS:
        kube.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": team["name"]}})
    try:
        yield kube
    finally:
        for ns, job in (("team-a", "job-1"), ("team-b", "job-2")):
            helm("uninstall", job, "-n", ns, check=False)
        wait_until(lambda: not any(workload(kube, t["name"], j) for t in TEAMS for j in ("job-1", "job-2")),
                   "the teams' Workloads to go", 60)  # fmt: skip
        topologies.restore_queues()
        for team in TEAMS:
            kube.delete(f"{KUEUE}/namespaces/{team['name']}/localqueues/user-queue")
            kube.delete(f"{KUEUE}/clusterqueues/{team['name']}")
            kube.delete(f"/api/v1/namespaces/{team['name']}")
        for name in ("low", "normal", "high"):
            kube.delete(f"{KUEUE}/workloadpriorityclasses/{name}")


def test_a_team_borrows_idle_quota_and_the_owner_s_higher_priority_job_takes_it_back(
    site: Path, helm: Run, teams: Kube, tmp_path: Path
) -> None:
    kube = teams
    since = time.time()
    helm(
        "upgrade", "planb-queues", str(paths.REPO / "charts" / "planb"), "--reuse-values",
        "--set-json", f"queues.teams={json.dumps(TEAMS)}",
        "--set", "queues.preemption.reclaimWithinCohort=LowerPriority",
    )  # fmt: skip
    root = tmp_path / "checkpoints"
    ckpt = root / "team-a" / "job-1"
    rayhead_settings.set_payload("team-a/job-1", rayhead_settings.Payload(mode="run", image={"/workspace": str(TEAM)}))
    rayhead_settings.set_payload("team-b/job-2", rayhead_settings.Payload(mode="simulate", seconds=10))
    job = ("--set", "job.serviceAccountName=planb-job", "--set", f"job.training.checkpointDir={root}")
    install_job(
        helm, "job-1", "-n", "team-a", *job, "--set", "job.priority=low",
        "--set-json", f"job.command={json.dumps(COMMAND)}", "--set-json", "job.pip=[]",
    )  # fmt: skip

    # Borrowing: team-a owns no chips, yet its job runs on plan A, on the cohort's quota that team-b does not use.
    wait_until(lambda: admitted_on(kube, "team-a", "job-1") == "team-a:on-demand", "team-a's job admitted", 90)
    # Kueue writes the ClusterQueue's usage a moment after the admission.
    wait_until(lambda: borrowed_chips(kube, "team-a") == "16", "team-a's ClusterQueue to borrow 16 chips", 30)
    wait_until(lambda: any(ckpt.glob("step-*.npz")), "team-a's first checkpoint", 90)

    # The owner's higher-priority job preempts the borrower.
    install_job(helm, "job-2", "-n", "team-b", *job, "--set", "job.priority=high")
    wait_until(
        lambda: conditions(workload(kube, "team-a", "job-1") or {}).get("Preempted", {}).get("status") == "True",
        "team-a's job preempted",
        60,
    )
    # Kueue's reason for a preemption that gives a ClusterQueue its nominal quota back from a borrower in its
    # cohort (kueue apis/kueue/v1beta2/workload_types.go InCohortReclamationReason).
    preempted = conditions(workload(kube, "team-a", "job-1") or {})["Preempted"]
    assert preempted.get("reason") == "InCohortReclamation", preempted
    wait_until(lambda: admitted_on(kube, "team-b", "job-2") == "team-b:on-demand", "team-b's job admitted", 60)
    work = f"{rayhead_settings.work_dir('team-a', 'job-1')}/"
    wait_until(lambda: not payload_processes(work), "team-a's program to end after its stop notice", 60)
    [first_log] = logs("team-a", "job-1", since)
    first = first_log.read_text(errors="replace")
    stopped = re.search(r"stop notice at step (\d+): checkpoint step (\d+) saved; stopping", first)
    assert stopped and stopped.group(1) == stopped.group(2), first[-2000:]
    at = int(stopped.group(1))

    # team-b's job ends; Kueue re-admits team-a's, which resumes from its checkpoint.
    wait_until(lambda: admitted_on(kube, "team-a", "job-1") == "team-a:on-demand", "team-a's job re-admitted", 90)
    wait_until(lambda: resumed_run(since), "the resumed run's first progress record", 90)
    resumed = logs("team-a", "job-1", since)[-1].read_text(errors="replace")
    lost = re.search(r"resumed from checkpoint step (\d+); (\d+) step\(s\) lost", resumed)
    assert lost and int(lost.group(1)) == at and int(lost.group(2)) <= 1, resumed[-2000:]

    # `helm test` of the two teams' queues release checks every team's ClusterQueue and each namespace's LocalQueue,
    # as the hook's ServiceAccount (a Role in each team namespace): with team-b's queue held (stopPolicy Hold, Kueue
    # sets Active False, reason Stopped) it fails naming team-b, the second team, and says team-a's checks passed.
    held = f"{KUEUE}/clusterqueues/team-b"
    kube.merge_patch(held, {"spec": {"stopPolicy": "Hold"}})
    wait_until(lambda: conditions(kube.get(held) or {}).get("Active", {}).get("status") == "False", "team-b held", 60)
    try:
        checked = helm("test", "planb-queues", "-n", "default", "--timeout", "120s", check=False)
        assert checked.returncode != 0, checked.stdout + checked.stderr
        for line in (
            "planb helm test: FAIL: ClusterQueue team-b is not Active: Stopped",
            "OK: ClusterQueue team-a is Active",
            "OK: LocalQueue team-a/user-queue points at ClusterQueue team-a",
            "OK: LocalQueue team-b/user-queue points at ClusterQueue team-b",
        ):
            assert line in checked.stderr, checked.stdout + checked.stderr
    finally:
        # The failed hook's pod and the account's cluster-wide objects stay after a failed test (hook-succeeded).
        kube.delete("/api/v1/namespaces/default/pods/planb-queues-test-queues")
        kube.delete("/api/v1/namespaces/default/serviceaccounts/planb-queues-test")
        for kind in ("clusterroles", "clusterrolebindings"):
            kube.delete(f"/apis/rbac.authorization.k8s.io/v1/{kind}/default-planb-queues-test")
