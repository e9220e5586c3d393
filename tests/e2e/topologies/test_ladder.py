"""The capacity ladder on the real Kueue and KubeRay.

site.yml with four plans (a reservation the emulator holds, on-demand, DWS, Spot; one slice each)
makes one flavor per plan in that order. Jobs fill the ladder rung by rung; a job with
job.avoidPlans={spot} is never given the Spot flavor; and a Spot job whose nodes are preempted gets GKE's
termination notice on its workers alone (their preStop hook, then SIGTERM; simulated), so its training run saves,
stops and fails, and KubeRay retries it on new Spot nodes, resuming at the step saved on the notice (Kueue keeps it
admitted, see the test).
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from planb.kube import Kube
from planb.kube_objects import conditions
from planb.local.capacity import settings as capacity_settings
from planb.local.capacity import spot
from planb.local.process import is_alive
from planb.local.rayhead import settings as rayhead_settings
from planb.local.rayhead.shutdown import ray_train_workers
from planb.local.stack.stack import LocalStack
from planb.status.report import KUEUE, collect
from tests.support.e2e.jobs import install_job, job_logs, payload_processes, run_env, steps, wait_jobs
from tests.support.e2e.topologies import Run
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


def test_a_preempted_spot_slice_is_told_as_gke_tells_it_and_the_retry_resumes_at_the_step_saved_on_the_notice(
    ladder: Path, helm: Run, tmp_path: Path
) -> None:
    """Spot preemption, the notice as GKE gives it: the Spot nodes are cordoned and, on each, the kubelet terminates
    the worker pods (their preStop hook, then SIGTERM, within the first 15 s of the VM's 30:
    https://cloud.google.com/kubernetes-engine/docs/concepts/spot-vms, "Termination and graceful shutdown of Spot
    VMs"); the head and the submitter on the CPU pool are told nothing. train.py runs under Ray on this host (the
    Ray head stand-in's `run` payload): its driver is the payload's own process, the head's, and one Ray Train worker
    process stands for the slice's workers (planb.local.rayhead.shutdown says where this differs from GKE and why).
    The workers' hook creates the notice file, the worker saves the step it reached and stops, and the driver, told
    nothing, ends non-zero before the VM's end (EXIT_STOPPED, 75, or 1 when the kubelet's SIGTERM ends the Ray worker
    before Ray Train has collected why it stopped): the Ray job fails, KubeRay counts the failed run and retries the
    RayJob (job.backoffLimit) with a new Ray cluster on new Spot nodes, and the retry resumes at the step saved on
    the notice.

    Kueue keeps the job admitted on the Spot flavor throughout: the retry is KubeRay's, inside the admission, and
    Kueue's RayJob integration reads PodsReady from the RayCluster's state, which KubeRay never sets back from
    ready (kuberay#2288), so waitForPodsReady's recovery timeout would not evict it either.
    """
    kube = Kube(ladder)
    since = time.time()
    root = tmp_path / "checkpoints"
    # The release's own directory under the root: KubeRay's retry (a new submission id) resumes from it.
    ckpt = root / "default" / "job-2"
    work = rayhead_settings.work_dir("default", "job-2")
    ray = run_env(PLANB_RUNNER="ray", PLANB_NUM_WORKERS="1", PLANB_CPUS_PER_WORKER="1", RAY_USAGE_STATS_ENABLED="0")
    rayhead_settings.set_payload("default/job-2", rayhead_settings.Payload(mode="run", env=ray))
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
    # KubeRay's retry runs the plain runner: what it shows is the resume, train.py's own restore under either runner
    # (tests/integration/training/test_ray.py resumes across them), and make test is spared a second Ray start
    # (about 18 CPU-seconds). The first submission has started, so the setting reaches the retry alone.
    rayhead_settings.set_payload("default/job-2", rayhead_settings.Payload(mode="run", env=run_env()))
    old = _spot_nodes(kube)
    workers = _worker_pods(kube, "job-2")
    assert workers and all(pod["spec"]["nodeName"] in old for pod in workers), workers
    first = _workload(kube, "job-2")["metadata"]["uid"]
    (log,) = job_logs("job-2", since)  # one submission so far
    # The RayJob's submissions share its work directory: the first run's driver is told from the retry's by its pid.
    (driver,) = [pid for pid in payload_processes(f"{work}/") if "train.py" in _cmdline(pid)]
    trainers = ray_train_workers(driver)
    assert len(trainers) == 1, f"Ray Train worker processes of the driver's session: {trainers}"
    stand_in = LocalStack().state / "ray-head-stand-in.log"
    told_from = stand_in.stat().st_size
    # GKE's default: the VM ends 30 s after the notice, and the node's pods get its first 15 s.
    notice = 15.0
    capacity_settings.update(preempt=("spot-pool",), spot_notice_seconds=notice)
    start = time.monotonic()

    def noticed() -> bool:
        nodes = kube.items("/api/v1/nodes", {"labelSelector": "cloud.google.com/gke-nodepool=spot-pool"})
        return bool(nodes) and all(
            n["spec"].get("unschedulable") and spot.NOTICE_ANNOTATION in n["metadata"].get("annotations", {})
            for n in nodes
        )

    wait_until(noticed, "the preemption notice on every Spot node (cordoned, stamped)", 10)
    # The notice reaches the workers alone; the driver, told nothing, ends on its own before the VM's end.
    wait_until(lambda: not is_alive(driver), "the driver to end after its worker stopped on the notice", notice)
    ended_after = time.monotonic() - start
    assert old <= _spot_nodes(kube), "the Spot nodes went before the driver ended: the notice did not stop the run"
    out = log.read_text(errors="replace")
    assert "Training Complete!" not in out and "reached the driver" not in out, out[-3000:]  # no signal to the driver
    # The worker saved the step it reached on the notice (the newest checkpoint, off the 500-step interval's).
    saved = steps(ckpt)[-1]
    assert f"checkpoint step {saved} saved; stopping" in out, out[-3000:]

    def stand_in_lines() -> str:
        return stand_in.read_text(errors="replace")[told_from:]

    # The driver ended on its own, non-zero. 75 (EXIT_STOPPED) when Ray Train's controller collected the worker's
    # StoppedOnNoticeError before the kubelet's SIGTERM ended that worker; 1 when the SIGTERM, which follows the
    # hook's next look at stop.saved (0 to 1 s after the save), ended it first: Ray Train then reports the worker's
    # death, not why it stopped. Either way the run saved, is not finished, and fails.
    ended = r"job \S+ FAILED \(exit (-?\d+)\)"  # the stand-in's line once it has the driver's exit status
    wait_until(lambda: re.search(ended, stand_in_lines()) is not None, "the Ray job to fail with its driver", 10)
    (code,) = map(int, re.findall(ended, stand_in_lines()))
    if code == 75:
        finished = "worker(s) stopped on a notice before the last step: the run saved and is not finished"
        assert f"{finished} (exit status 75)" in out, out[-3000:]
        assert f"Stop notice: worker 0 stopped on a notice after step {saved} of" in out, out[-3000:]
    else:
        assert code == 1 and "The process receives a SIGTERM." in out, (code, out[-3000:])
    # What the stand-in did, as the kubelet: each worker pod's hook, the notice file in the launch's emptyDir (the
    # file the Ray worker polls), then SIGTERM to the worker processes only; nothing to the head or the submitter.
    # The kubelet's SIGTERM follows each pod's hook, whose wait looks for stop.saved once a second.
    wait_until(
        lambda: stand_in_lines().count(": SIGTERM to ") >= len(workers), "SIGTERM to each worker pod after its hook", 15
    )
    told = stand_in_lines()
    files = set(re.findall(r"its preStop hook created (\S+) and waits for stop\.saved", told))
    assert len(files) == 1, told  # one file on this host for every pod (planb.local.rayhead.shutdown says why)
    (notice_file,) = map(Path, files)
    assert notice_file.parent.parent == work and Path(f"{notice_file}.saved").is_file(), notice_file
    for pod in workers:
        name = f"pod default/{pod['metadata']['name']}"
        assert f"{name}: Spot preemption notice; its preStop hook created {notice_file}" in told, told
        assert f"{name}: preStop hook ended, stop.saved found" in told, told
    acted = [line for line in told.splitlines() if "preStop hook" in line or "SIGTERM" in line]
    assert {line.split(":", 1)[0] for line in acted} == {
        f"[rayhead] pod default/{p['metadata']['name']}" for p in workers
    }
    sigterms = [line.split(": SIGTERM to ", 1)[1] for line in acted if ": SIGTERM to " in line]
    assert len(sigterms) == len(workers), told  # each pod's, after its hook
    # Each to the Ray Train worker, or to none left (it ended on its own, or the payload had ended).
    named = {
        int(pid) for line in sigterms if "process(es) " in line for pid in line.split("process(es) ")[1].split(",")
    }
    assert named <= set(trainers), told
    # The nodes go at the VM's end, or before it once KubeRay has deleted the failed run's cluster: the simulator
    # scales down the emptied nodes (the tier's scale_down_after_seconds; the notice period itself is
    # tests/unit/local/capacity/test_spot.py's). KubeRay retries with a new cluster on new Spot VMs.
    wait_until(lambda: not (old & _spot_nodes(kube)), "the preempted Spot nodes to go", notice + 15)
    gone_after = time.monotonic() - start
    wait_until(
        lambda: _pools(kube, "job-2") == {"spot-pool"} and not (set(_job_nodes(kube, "job-2")) & old),
        "job-2's new workers on new Spot nodes",
        90,
    )
    wait_until(lambda: len(job_logs("job-2", since)) == 2, "KubeRay's retry to submit the job again", 90)
    resumed = job_logs("job-2", since)[-1]
    wait_until(lambda: "step(s) lost" in resumed.read_text(errors="replace"), "the retry to resume", 120)
    again = resumed.read_text(errors="replace")
    assert f"Resumed from checkpoint step {saved} in {ckpt}" in again, again[-3000:]
    lost = re.search(r"resumed from checkpoint step (\d+); (\d+) step\(s\) lost", again)
    assert lost and int(lost.group(1)) == saved and int(lost.group(2)) <= 1, again[-3000:]
    rj = kube.get("/apis/ray.io/v1/namespaces/default/rayjobs/job-2") or {}
    assert (rj.get("status") or {}).get("failed") == 1, rj.get("status")
    wl = _workload(kube, "job-2")
    assert wl["metadata"]["uid"] == first
    assert {j.name: (j.state, j.plan) for j in collect(kube, "default")}["job-2"][1] == "spot"
    print(
        f"Spot notice: the driver ended ({code}) {ended_after:.1f} s after it, before the VM's end; nodes gone "
        f"{gone_after:.1f} s after a {notice:.0f} s notice; job-2 resumed at step {saved}, {lost.group(2)} step(s) lost"
    )


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def _worker_pods(kube: Kube, job: str) -> list[dict[str, Any]]:
    """The running Ray worker pods of the RayJob's current RayCluster."""
    rj = kube.get(f"/apis/ray.io/v1/namespaces/default/rayjobs/{job}") or {}
    cluster = (rj.get("status") or {}).get("rayClusterName")
    selector = f"ray.io/cluster={cluster},ray.io/node-type=worker"
    return [
        p
        for p in kube.items("/api/v1/namespaces/default/pods", {"labelSelector": selector})
        if p["spec"].get("nodeName")
    ]


def _ray_job(kube: Kube, job: str) -> str:
    rj = kube.get(f"/apis/ray.io/v1/namespaces/default/rayjobs/{job}") or {}
    return str((rj.get("status") or {}).get("jobStatus", ""))


def _job_nodes(kube: Kube, job: str) -> list[str]:
    (status,) = [j for j in collect(kube, "default") if j.name == job]
    return [node for node in status.nodes if status.nodes[node] == "spot-pool"]
