"""The capacity ladder on the real Kueue and KubeRay.

site.yml with four plans (a reservation the emulator holds, on-demand, DWS, Spot; one slice each)
makes one flavor per plan in that order. Jobs fill the ladder rung by rung; a job with
job.avoidPlans={spot} is never given the Spot flavor; and a Spot job whose nodes are preempted loses its
training run, which KubeRay retries on new Spot nodes after GKE's termination notice (simulated), resuming
from its last checkpoint (Kueue keeps it admitted, see the test).
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from planb.kube import Kube, conditions
from planb.local.capacity import settings as capacity_settings
from planb.local.capacity import spot
from planb.local.process import is_alive
from planb.local.rayhead import settings as rayhead_settings
from planb.status.report import KUEUE, collect
from tests.support.e2e.jobs import job_logs, payload_processes, run_env, steps
from tests.support.e2e.topologies import Run, install_job, wait_jobs
from tests.support.e2e.waits import wait_until

pytestmark = [pytest.mark.slow]

NEVER_SPOT = ("--set", "job.avoidPlans={spot}")


@pytest.fixture(autouse=True)
def long_jobs(ladder: Path) -> None:
    """Every job's (simulated) Ray payload runs 15 minutes, so no job ends and frees its rung during a test (the
    next test's reset clears it)."""
    rayhead_settings.set_payload(None, rayhead_settings.Payload(seconds=900))


def _workload(kube: Kube, job: str) -> dict[str, Any]:
    for wl in kube.items(f"{KUEUE}/namespaces/default/workloads"):
        if any(o.get("name") == job for o in wl["metadata"].get("ownerReferences", [])):
            return wl
    raise AssertionError(f"no Workload for {job}")


def _pools(kube: Kube, job: str) -> set[str]:
    (status,) = [j for j in collect(kube, "default") if j.name == job]
    return {pool for node, pool in status.nodes.items() if status.node_plans.get(node)}


def test_the_ladder_fills_rung_by_rung_and_a_never_spot_job_skips_spot(ladder: Path, helm: Run) -> None:
    kube = Kube(ladder)
    flavors = [f["metadata"]["name"] for f in kube.items(f"{KUEUE}/resourceflavors")]
    assert {"reserved", "on-demand", "dws", "spot"} <= set(flavors)
    (cq,) = kube.items(f"{KUEUE}/clusterqueues")
    order = [f["name"] for f in cq["spec"]["resourceGroups"][0]["flavors"]]
    assert order == ["default-cpu", "reserved", "on-demand", "dws", "spot"]
    for job, plan in (("job-1", "reserved"), ("job-2", "on-demand"), ("job-3", "dws")):
        install_job(helm, job, *NEVER_SPOT)
        wait_jobs(kube, {job: plan})
    # Every rung above Spot is full: a job that must not be preempted waits; Kueue says why.
    install_job(helm, "job-4", *NEVER_SPOT)

    seen: list[str] = [""]

    def refused_spot() -> bool:
        try:
            wl = _workload(kube, "job-4")
        except AssertionError:
            return False  # Kueue has not made job-4's Workload yet
        seen[0] = str(conditions(wl).get("QuotaReserved", {}).get("message", ""))
        return "flavor spot doesn't match node affinity" in seen[0]

    try:
        wait_until(refused_spot, "Kueue to refuse job-4 the spot flavor for its node affinity", 60)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; job-4's QuotaReserved message: {seen[0]}") from None
    # A preemptible job takes the Spot rung, on the Spot pool's nodes.
    install_job(helm, "job-5")
    jobs = wait_jobs(kube, {"job-1": "reserved", "job-2": "on-demand", "job-3": "dws", "job-5": "spot"})
    assert {name: jobs[name].plan for name in ("job-1", "job-2", "job-3", "job-5")} == {
        "job-1": "reserved",
        "job-2": "on-demand",
        "job-3": "dws",
        "job-5": "spot",
    }
    wait_until(lambda: _pools(kube, "job-5") == {"spot-pool"}, "job-5's workers on the Spot pool", 60)
    spot_nodes = kube.items("/api/v1/nodes", {"labelSelector": "cloud.google.com/gke-nodepool=spot-pool"})
    assert spot_nodes and all(n["metadata"]["labels"].get(spot.SPOT_LABEL) == "true" for n in spot_nodes)
    # Still waiting, with the Spot flavor refused for its affinity (not for quota: Spot has room now only for
    # job-5, taken after job-4 was refused).
    assert {j.name: j.state for j in collect(kube, "default")}["job-4"] == "Pending"


def _spot_nodes(kube: Kube) -> set[str]:
    return {
        n["metadata"]["name"]
        for n in kube.items("/api/v1/nodes", {"labelSelector": "cloud.google.com/gke-nodepool=spot-pool"})
    }


def test_a_preempted_spot_slice_goes_after_the_notice_and_the_job_resumes_from_its_checkpoint(
    ladder: Path, helm: Run, tmp_path: Path
) -> None:
    """Spot preemption: the notice, then the nodes and their pods go; the training run fails with its lost workers
    (Ray Train without max_failures), KubeRay retries the RayJob (job.backoffLimit) with a new Ray cluster on new
    Spot nodes, and the retried run resumes from the newest checkpoint.

    Kueue keeps the job admitted on the Spot flavor throughout: the retry is KubeRay's, inside the admission, and
    Kueue's RayJob integration reads PodsReady from the RayCluster's state, which KubeRay never sets back from
    ready (kuberay#2288), so waitForPodsReady's recovery timeout would not evict it either.
    """
    kube = Kube(ladder)
    since = time.time()
    root = tmp_path / "checkpoints"
    # The release's own directory under the root: KubeRay's retry (a new submission id) resumes from it.
    ckpt = root / "default" / "job-2"
    plain = run_env()
    rayhead_settings.set_payload("default/job-2", rayhead_settings.Payload(mode="run", env=plain))
    # Plan A full (job 1 keeps off the reservation and Spot), then a job that cannot wait for DWS (and keeps off the
    # reservation, which job 1 left free) falls through to Spot.
    install_job(helm, "job-1", "--set", "job.avoidPlans={reserved,spot}")
    wait_jobs(kube, {"job-1": "on-demand"})
    install_job(
        helm, "job-2", "--set", "job.avoidPlans={reserved,dws}",
        "--set", "job.backoffLimit=1",
        "--set", f"job.training.checkpointDir={root}",
        "--set", "job.training.checkpointEvery=500",
        "--set", "job.training.epochs=100000000",
    )  # fmt: skip
    wait_jobs(kube, {"job-2": "spot"})
    wait_until(lambda: _pools(kube, "job-2") == {"spot-pool"}, "job-2's workers on the Spot pool", 60)
    wait_until(lambda: _ray_job(kube, "job-2") == "RUNNING" and len(steps(ckpt)) >= 2, "two checkpoints", 180)
    old = _spot_nodes(kube)
    first = _workload(kube, "job-2")["metadata"]["uid"]
    assert len(job_logs("job-2", since)) == 1  # one submission so far
    # The RayJob's submissions share its work directory: the first run is told from the retry by its pids.
    first_run = payload_processes(f"{rayhead_settings.work_dir('default', 'job-2')}/")
    assert first_run, "no training process runs from job-2's work directory"
    notice = 3.0
    capacity_settings.update(preempt=("spot-pool",), spot_notice_seconds=notice)
    start = time.monotonic()

    def noticed() -> bool:
        nodes = kube.items("/api/v1/nodes", {"labelSelector": "cloud.google.com/gke-nodepool=spot-pool"})
        return bool(nodes) and all(
            n["spec"].get("unschedulable") and spot.NOTICE_ANNOTATION in n["metadata"].get("annotations", {})
            for n in nodes
        )

    wait_until(noticed, "the preemption notice on every Spot node (cordoned, stamped)", 10)
    wait_until(lambda: not (old & _spot_nodes(kube)), "the preempted Spot nodes to go", 30)
    gone_after = time.monotonic() - start
    assert gone_after >= notice - 0.5, f"the nodes went {gone_after:.1f} s after a {notice:.0f} s notice"
    # The training process died with its workers; the newest checkpoint it left is where the retry starts.
    wait_until(lambda: not any(map(is_alive, first_run)), "the first training run to end with its workers", 60)
    latest = steps(ckpt)[-1]
    # KubeRay retries with a new cluster; the Spot pool gets new VMs for it (capacity is there again).
    wait_until(
        lambda: _pools(kube, "job-2") == {"spot-pool"} and not (set(_job_nodes(kube, "job-2")) & old),
        "job-2's new workers on new Spot nodes",
        90,
    )
    wait_until(lambda: len(job_logs("job-2", since)) == 2, "KubeRay's retry to submit the job again", 90)
    resumed = job_logs("job-2", since)[-1]
    wait_until(lambda: "Resumed from checkpoint" in resumed.read_text(errors="replace"), "the retry to resume", 90)
    assert f"Resumed from checkpoint step {latest} in {ckpt}" in resumed.read_text(errors="replace")
    # No step lost: the stand-in stops the payload with SIGTERM when its workers go, as the kubelet stops
    # a preempted node's pods (https://cloud.google.com/kubernetes-engine/docs/concepts/spot-vms#termination), and
    # train.py saves at the next step boundary before it exits. The step in flight when the signal came may be lost.
    wait_until(lambda: "step(s) lost" in resumed.read_text(errors="replace"), "the retry's resume line", 30)
    log = resumed.read_text(errors="replace")
    lost = re.search(r"resumed from checkpoint step (\d+); (\d+) step\(s\) lost", log)
    assert lost and int(lost.group(1)) == latest and int(lost.group(2)) <= 1, log[-2000:]
    rj = kube.get("/apis/ray.io/v1/namespaces/default/rayjobs/job-2") or {}
    assert (rj.get("status") or {}).get("failed") == 1, rj.get("status")
    wl = _workload(kube, "job-2")
    assert wl["metadata"]["uid"] == first
    assert {j.name: (j.state, j.plan) for j in collect(kube, "default")}["job-2"][1] == "spot"
    print(
        f"Spot nodes gone {gone_after:.1f} s after a {notice:.0f} s notice; job-2 resumed at step {latest}, "
        f"{lost.group(2)} step(s) lost"
    )


def _ray_job(kube: Kube, job: str) -> str:
    rj = kube.get(f"/apis/ray.io/v1/namespaces/default/rayjobs/{job}") or {}
    return str((rj.get("status") or {}).get("jobStatus", ""))


def _job_nodes(kube: Kube, job: str) -> list[str]:
    (status,) = [j for j in collect(kube, "default") if j.name == job]
    return [node for node in status.nodes if status.nodes[node] == "spot-pool"]
