"""Stockout-aware failover on the real Kueue: waitForPodsReady + planb's failover controller, on the seed topology with
no failover value given: the local inventory's default turns it on (FAILOVER_AFTER_SECONDS)."""

from __future__ import annotations

import os
import signal
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from planb import paths
from planb.failover.controller import EVENT_REASON, MOVED_ANNOTATION, move_message
from planb.kube import Kube
from planb.kube_objects import conditions, is_true, parse_time
from planb.local import failover_settings
from planb.local.capacity import settings as capacity_settings
from planb.local.stack.stack import LocalStack
from planb.status.report import RAY, admitted_on, collect
from tests.support.e2e import dashboard
from tests.support.e2e.jobs import install_job, wait_jobs, workload_of, workloads_by_job
from tests.support.e2e.topologies import FAILOVER_AFTER_SECONDS, Run, run
from tests.support.e2e.waits import holds_for, wait_until

pytestmark = [pytest.mark.slow]

#: Plan A's time to make a job's pods ready (Kueue's waitForPodsReady timeout): the local inventory's default.
AFTER_SECONDS = FAILOVER_AFTER_SECONDS
MESSAGE = move_message(AFTER_SECONDS)
#: The labels of planb's series for the local stack's one ClusterQueue (the chart's default) and no region.
QUEUE = 'cluster_queue="cluster-queue",region=""'
#: The dashboard's metrics this test's jobs leave without data: the concurrent ladder mode alone migrates jobs.
CONCURRENT_ONLY = frozenset({"planb_migrations_total"})
#: The controller's test double that pauses mid-move (run with -m from the checkout).
PAUSED_CONTROLLER = "tests.support.shared.failover.paused_controller"


@pytest.fixture()
def failover(site: Path) -> Path:
    """The seed as site.yml converged it on the local inventory's defaults (failover on, N = 15 s), the controller
    freshly restarted."""
    stack = LocalStack()
    assert failover_settings.load(stack.state).after_seconds == AFTER_SECONDS
    wait_until(lambda: stack.failover.pid() is not None, "the failover controller to run")
    return site


def past_plan_a_timeout(kube: Kube, job: str) -> float:
    """Seconds from now until 3 s past `job`'s plan A timeout. Kueue counts waitForPodsReady's timeout from the
    Workload's Admitted condition (pkg/controller/core/workload_controller.go, admittedNotReadyWorkload); the
    margin covers lastTransitionTime's one-second resolution and Kueue's eviction being seen."""
    admitted = conditions(workload_of(kube, job))["Admitted"]
    at = parse_time(admitted.get("lastTransitionTime"))
    assert admitted.get("status") == "True" and at is not None, admitted
    return max(1.0, at + AFTER_SECONDS + 3 - time.time())


def rayjob(kube: Kube, name: str) -> dict[str, object]:
    found = kube.get(f"{RAY}/namespaces/default/rayjobs/{name}")
    assert found is not None
    return found


def move_events(kube: Kube, name: str) -> list[dict[str, object]]:
    """The move Events of the RayJob of this name that exists now (Events outlive a deleted job)."""
    uid = rayjob(kube, name)["metadata"]["uid"]  # type: ignore[index]
    events = kube.items("/api/v1/namespaces/default/events", {"fieldSelector": f"involvedObject.uid={uid}"})
    return [e for e in events if e.get("reason") == EVENT_REASON]


def metrics() -> str:
    port = failover_settings.METRICS_PORT
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        return str(resp.read().decode())


def sample(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    raise AssertionError(f"{name} not in the metrics:\n{text}")


def ray_clusters(kube: Kube, job: str) -> list[str]:
    return [
        c["metadata"]["name"]
        for c in kube.items(f"{RAY}/namespaces/default/rayclusters")
        if any(o.get("name") == job for o in c["metadata"].get("ownerReferences", []))
    ]


def test_stockout_moves_the_job_to_plan_b_and_capacity_return_brings_new_jobs_back(failover: Path, helm: Run) -> None:
    kube = Kube(failover)
    capacity_settings.update(stockout=("on-demand-pool",))
    start = time.monotonic()
    install_job(helm, "job-1")
    wait_until(lambda: "job-1" in workloads_by_job(kube), "job 1's Workload")
    lineage = workloads_by_job(kube)["job-1"]
    clusters_seen: set[str] = set()

    def on_dws() -> bool:
        clusters = ray_clusters(kube, "job-1")
        assert len(clusters) <= 1, f"two RayClusters at once: {clusters}"
        clusters_seen.update(clusters)
        jobs = {j.name: j for j in collect(kube, "default")}
        job = jobs.get("job-1")
        return bool(job and job.accelerator_flavor == "dws" and job.state == "Admitted")

    wait_until(on_dws, "job 1 admitted on plan B after plan A's timeout", timeout=120)
    took = time.monotonic() - start
    jobs = wait_jobs(kube, {"job-1": "dws"})
    print(f"\nBENCH stockout -> admitted on plan B: {took:.1f} s (N = {AFTER_SECONDS} s; goal N + 15 s)")
    assert [r.state for r in jobs["job-1"].requests][-1:] == ["Provisioned"]
    # One Workload lineage: the same Workload object, re-admitted on plan B; the job keeps its name.
    assert workloads_by_job(kube)["job-1"] == lineage
    annotations = rayjob(kube, "job-1")["metadata"]["annotations"]  # type: ignore[index]
    assert MOVED_ANNOTATION in annotations
    events = move_events(kube, "job-1")
    assert [(e["message"], e.get("count")) for e in events] == [(MESSAGE, 1)]
    status = run(str(Path(sys.executable).parent / "planb"), "status", f"--kubeconfig={failover}", check=False)
    assert MESSAGE in status.stdout, status.stdout
    # The workers run on plan B's nodes only.
    wait_until(
        lambda: (
            {
                kube.get(f"/api/v1/nodes/{node}")["metadata"]["labels"].get("planb.dev/plan")  # type: ignore[index]
                for _, phase, node in next(j for j in collect(kube, "default") if j.name == "job-1").pods
                if node and phase == "Running"
            }
            >= {"dws"}
        ),
        "job 1's pods on plan B's nodes",
    )
    # The controller renders its metrics from the Workloads of its last poll: the one after job 1's re-admission
    # may still be to come (the poll before it saw the Workload evicted from plan A and not yet admitted again).
    wait_until(
        lambda: f'planb_time_to_admission_seconds_count{{plan="dws",{QUEUE}}} ' in metrics(),
        "the failover controller's metrics to count job 1's admission on plan B (at its next poll)",
        timeout=30,
        explain=metrics,
    )
    text = metrics()
    assert sample(text, "planb_failover_moved_jobs") == 1
    assert sample(text, f'planb_failover_moves_total{{plan="on-demand",{QUEUE}}}') == 1
    assert sample(text, f'planb_time_to_admission_seconds_count{{plan="dws",{QUEUE}}}') == 1
    assert sample(text, f'planb_time_to_admission_seconds_sum{{plan="dws",{QUEUE}}}') >= AFTER_SECONDS

    # Plan A has machines again: a new job goes to plan A; job 1 stays on plan B (never moved back). Its nodes come
    # at once: plan A's N must cover the scale-up, KubeRay's pods and their readiness, and on two loaded cores
    # the default 2 s delay once left too little of it (Kueue, rightly, evicted job 2 before its pods were ready).
    capacity_settings.update(stockout=(), provisioning_delay_seconds=0.0)
    install_job(helm, "job-2")
    wait_jobs(kube, {"job-1": "dws", "job-2": "on-demand"})
    wait_until(
        lambda: is_true(workload_of(kube, "job-2"), "PodsReady"),
        f"job 2's pods ready on plan A within plan A's {AFTER_SECONDS} s",
        timeout=AFTER_SECONDS + 30,
        explain=lambda: workload_of(kube, "job-2").get("status"),
    )

    def as_placed() -> bool:
        jobs = {j.name: j for j in collect(kube, "default")}
        return all(n in jobs and admitted_on(jobs[n], f) for n, f in (("job-1", "dws"), ("job-2", "on-demand")))

    def job_2_not_evicted() -> bool:
        return not is_true(workload_of(kube, "job-2"), "Evicted")

    # Past plan A's timeout with no stockout: job 2's pods were ready in time, so Kueue never evicts it and nothing
    # moves it (it stays on plan A); job 1 is never moved back.
    holds_for(
        lambda: as_placed() and job_2_not_evicted(),
        "job 1 on plan B and job 2 on plan A, not evicted",
        past_plan_a_timeout(kube, "job-2"),
    )
    assert MOVED_ANNOTATION not in (rayjob(kube, "job-2")["metadata"].get("annotations") or {})  # type: ignore[attr-defined]
    assert move_events(kube, "job-2") == []
    assert len(move_events(kube, "job-1")) == 1
    text = metrics()
    # Each admission on plan A is observed once and stays: job 1's before its move, and job 2's.
    assert sample(text, f'planb_time_to_admission_seconds_count{{plan="on-demand",{QUEUE}}}') == 2

    # The chart's dashboard reads what a move leaves: every panel's queries (and its template
    # variables') find data in one scrape of Kueue's /metrics and the controller's (tests/support/e2e/dashboard.py).
    with dashboard.scraper_token(kube) as token:
        wait_until(
            lambda: not dashboard.lacking(dashboard.scrape(token), CONCURRENT_ONLY),
            "data behind every query of the dashboard",
            timeout=30,
            explain=lambda: dashboard.lacking(dashboard.scrape(token), CONCURRENT_ONLY),
        )
        assert dashboard.panels_without_data(dashboard.scrape(token)) == []


def test_controller_killed_mid_move_catches_up_with_one_move(
    failover: Path, helm: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    kube = Kube(failover)
    stack = LocalStack()
    # Restart the controller as a test double that pauses between patching the RayJob and the Workload.
    assert stack.failover.stop()
    with monkeypatch.context() as env:
        env.setenv("PYTHONPATH", os.pathsep.join(filter(None, (str(paths.REPO), os.environ.get("PYTHONPATH")))))
        assert stack.start_failover(module=PAUSED_CONTROLLER)
    capacity_settings.update(stockout=("on-demand-pool",))
    install_job(helm, "job-1")
    wait_until(
        lambda: MOVED_ANNOTATION in (rayjob(kube, "job-1")["metadata"].get("annotations") or {}),  # type: ignore[attr-defined]
        "the controller to start the move",
        timeout=90,
    )
    moved_at = rayjob(kube, "job-1")["metadata"]["annotations"][MOVED_ANNOTATION]  # type: ignore[index]
    pid = stack.failover.pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: stack.failover.pid() is None, "the controller to die")
    assert move_events(kube, "job-1") == []  # killed before it recorded the move
    stack.up()  # restarts only what is missing: the failover controller
    assert stack.failover.pid() is not None
    wait_jobs(kube, {"job-1": "dws"}, timeout=120)
    wait_until(lambda: len(move_events(kube, "job-1")) == 1, "the move's Event after the restart")
    holds_for(lambda: len(move_events(kube, "job-1")) == 1, "one move Event", 3)
    events = move_events(kube, "job-1")
    assert [(e["message"], e.get("count")) for e in events] == [(MESSAGE, 1)]
    assert rayjob(kube, "job-1")["metadata"]["annotations"][MOVED_ANNOTATION] == moved_at  # type: ignore[index]
    assert len(workloads_by_job(kube)["job-1"]) == 1
