"""A RayJob's own lifecycle on the local stack: Running while its payload runs,
then Complete/SUCCEEDED, or Failed with the payload's own error; its quota goes to the next job.

KWOK runs no container, so the Ray head stand-in (planb.local.rayhead) answers KubeRay's Ray job API and
does what the submitter pod would; everything asserted here is what the real KubeRay operator and
Kueue wrote on the RayJob, the submitter Job and the Workload.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from planb import paths
from planb.kube import Kube, KubeError, Obj
from planb.kube_objects import conditions
from planb.local.rayhead import settings as rayhead_settings
from planb.status.shapes import NO_FLAVOR_MATCH
from tests.support.e2e.jobs import install_job, no_quota, planb_status, wait_jobs, workload_of
from tests.support.e2e.topologies import PROFILE, Run, run
from tests.support.e2e.waits import holds_for, wait_until

pytestmark = [pytest.mark.slow]

RAYJOBS = "/apis/ray.io/v1/namespaces/default/rayjobs"


def rayjob(kube: Kube, name: str) -> Obj:
    found = kube.get(f"{RAYJOBS}/{name}")
    assert found is not None, f"RayJob {name} is gone"
    return found


def status(kube: Kube, name: str) -> tuple[str, str]:
    st = rayjob(kube, name).get("status") or {}
    return str(st.get("jobDeploymentStatus", "")), str(st.get("jobStatus", ""))


def queued(kube: Kube, job: str) -> bool:
    try:
        wl = workload_of(kube, job)
    except AssertionError:
        return False
    return conditions(wl).get("QuotaReserved", {}).get("status") == "False"


def test_a_job_runs_then_succeeds_and_its_quota_admits_the_next(site: Path, helm: Run) -> None:
    kube = Kube(site)
    rayhead_settings.set_payload("job-1", rayhead_settings.Payload(seconds=6))
    rayhead_settings.set_payload("job-*", rayhead_settings.Payload(seconds=600))
    no_dws = no_quota(helm, "dws")  # only plan A: job 3 waits for job 1's quota
    helm("upgrade", "planb-queues", str(paths.REPO / "charts" / "planb"), "--reuse-values", *no_dws)
    install_job(helm, "job-1")
    wait_jobs(kube, {"job-1": "on-demand"})
    wait_until(lambda: status(kube, "job-1") == ("Running", "RUNNING"), "job 1 to run", 90)
    install_job(helm, "job-3")
    wait_until(lambda: queued(kube, "job-3"), "job 3 to be queued behind job 1", 30)
    assert status(kube, "job-1") == ("Running", "RUNNING")  # still running: the payload takes 6 s
    wait_until(lambda: status(kube, "job-1") == ("Complete", "SUCCEEDED"), "job 1 to succeed", 120)
    st = rayjob(kube, "job-1")["status"]
    assert st["rayJobInfo"]["startTime"] and st["rayJobInfo"]["endTime"]
    submitter = kube.get("/apis/batch/v1/namespaces/default/jobs/job-1")
    assert submitter is None or any(
        c["type"] == "Complete" and c["status"] == "True" for c in (submitter.get("status") or {}).get("conditions", [])
    )
    wait_until(
        lambda: conditions(workload_of(kube, "job-1")).get("Finished", {}).get("status") == "True",
        "job 1's Workload to finish",
        60,
    )
    # Its quota is free: job 3 is admitted on plan A.
    wait_jobs(kube, {"job-3": "on-demand"}, timeout=120)
    wait_until(lambda: status(kube, "job-3")[1] == "RUNNING", "job 3 to run", 90)
    assert "KubeRay: Complete" in planb_status(site, "job-1")
    # `planb status --cost`: job 1's chip-hours end at its Workload's Finished condition, job 3's run on;
    # each is its slice's 16 chips (the catalog's tpu-v6e-4x4) over the time Kueue admitted it, summed for the team.
    planb = str(Path(sys.executable).parent / "planb")
    out = run(planb, "status", "--cost", "--rate-per-chip-hour", "2", "-o", "json", "--kubeconfig", str(site)).stdout
    found = json.loads(out)
    jobs = {j["name"]: j for j in found["jobs"]}
    assert {jobs[n]["chips"] for n in ("job-1", "job-3")} == {16} and jobs["job-1"]["runs"] == 1, found
    for job in jobs.values():
        # admittedSeconds is rounded to 3 places and chipHours to 4, each from the unrounded seconds
        assert abs(job["chipHours"] - job["chips"] * job["admittedSeconds"] / 3600) <= 1e-4, job
        assert abs(job["cost"] - job["chipHours"] * 2) < 1e-3, job  # each rounded to 4 places
    assert jobs["job-1"]["admittedSeconds"] > 0 and found["teams"][0]["team"] == "default", found
    text = run(planb, "status", "--cost", "--kubeconfig", str(site)).stdout
    assert "CHIP-HOURS" in text and "TEAM (namespace)" in text and "job-1" in text, text


def test_a_failing_payload_fails_the_job_with_its_own_error(site: Path, helm: Run) -> None:
    kube = Kube(site)
    rayhead_settings.set_payload(
        "job-1", rayhead_settings.Payload(seconds=5, fail="ValueError: loss is NaN at step 40")
    )
    install_job(helm, "job-1")
    wait_jobs(kube, {"job-1": "on-demand"})
    wait_until(lambda: status(kube, "job-1")[0] == "Failed", "job 1 to fail", 120)
    st = rayjob(kube, "job-1")["status"]
    assert st["jobStatus"] == "FAILED" and st.get("reason") == "AppFailed"
    assert "loss is NaN at step 40" in st.get("message", "")
    # The submitter pod's log is the job's output, as `ray job logs --follow` prints it on GKE (kwok serves the
    # file the stand-in writes).
    # (KubeRay's submitter Job may have made more than one pod: the one that followed the job has its output.)
    pods = kube.items("/api/v1/namespaces/default/pods", {"labelSelector": "job-name=job-1"})
    # A pod that followed nothing has no log: kwok answers 400 "no logs found" for it.
    logs = [_log_or_none(kube, p["metadata"]["name"]) for p in pods]
    assert any(
        log is not None
        and "simulated payload of 'python " in log
        and "then FAILED: ValueError: loss is NaN at step 40" in log
        for log in logs
    ), logs
    wait_until(
        lambda: conditions(workload_of(kube, "job-1")).get("Finished", {}).get("status") == "True",
        "job 1's Workload to finish",
        60,
    )


def _log_or_none(kube: Kube, pod: str) -> str | None:
    """The pod's log; None where kwok serves none (no Logs object names a file for the pod)."""
    try:
        return kube.text(f"/api/v1/namespaces/default/pods/{pod}/log")
    except KubeError as exc:
        if exc.status == 400 and "no logs found" in str(exc):
            return None
        raise


def _refusal(kube: Kube, job: str) -> str:
    """Kueue's QuotaReserved=False message on `job`'s Workload while it holds no admission; '' otherwise."""
    try:
        wl = workload_of(kube, job)
    except AssertionError:
        return ""
    reserved = conditions(wl).get("QuotaReserved") or {}
    if "admission" in (wl.get("status") or {}) or reserved.get("status") != "False":
        return ""
    return str(reserved.get("message", ""))


def test_a_job_of_another_shape_is_never_admitted_and_status_says_why(site: Path, helm: Run) -> None:
    """A job rendered for tpu-v6e-2x4 on the site's tpu-v6e-4x4 queues used to get plan A's quota and
    wait forever for nodes. The plan flavors select the profile's accelerator labels, so Kueue finds no flavor for
    its workers (kueue v0.19.2 flavorassigner.go checkFlavorForPodSets: "flavor %s doesn't match node affinity"),
    holds no quota for it, and admits a job of the right shape behind it."""
    assert PROFILE == "tpu-v6e-4x4"
    kube = Kube(site)
    rayhead_settings.set_payload("job-*", rayhead_settings.Payload(seconds=600))
    chart = paths.REPO / "charts" / "planb"
    helm("install", "job-1", str(chart), "-f", str(chart / "values" / "tpu-v6e-2x4.yaml"))
    wait_until(
        lambda: f"flavor on-demand {NO_FLAVOR_MATCH}" in _refusal(kube, "job-1"),
        "Kueue to refuse job 1 for its shape",
        60,
        explain=lambda: _refusal(kube, "job-1"),
    )
    # The right shape behind it is admitted on plan A: the wrong one neither blocks the queue nor holds quota.
    install_job(helm, "job-2")
    wait_jobs(kube, {"job-2": "on-demand"}, timeout=60)

    def still_refused() -> bool:
        rayjob_1 = rayjob(kube, "job-1")
        return f"flavor on-demand {NO_FLAVOR_MATCH}" in _refusal(kube, "job-1") and rayjob_1["spec"].get("suspend")

    holds_for(still_refused, "job 1 refused for its shape, suspended, with no admission", 5)
    out = planb_status(site, "job-1")
    assert "profile tpu-v6e-2x4 (the job's workers), tpu-v6e-4x4 (ClusterQueue cluster-queue)" in out, out
    (why,) = [line for line in out.splitlines() if "wrong shape" in line]
    assert why.startswith(
        "  wrong shape: the job is tpu-v6e-2x4 but ClusterQueue cluster-queue's flavors select tpu-v6e-4x4"
    ), out
    assert f"flavor on-demand {NO_FLAVOR_MATCH}" in why, why
    assert why.endswith("install it with -f charts/planb/values/tpu-v6e-4x4.yaml (or `planb values tpu-v6e-4x4`)")
