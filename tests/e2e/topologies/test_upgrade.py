"""Kueue and the KubeRay operator upgraded from the previous pins to the current ones with a job running: none lost.

On the converged `site` topology the test stops the pinned Kueue and KubeRay operator and starts the previous ones
(hack/upgrade-from.env; `make setup` builds them into .tools/bin as kueue-upgrade-from and
kuberay-operator-upgrade-from), installs a job with the chart and waits until it runs. Then it upgrades in
docs/upgrading.md's order: the CRDs are the current ones already (the stack installs them), Kueue next, the KubeRay
operator last. The running job keeps its Workload, admission and Ray cluster with the same pods, its program runs
once and on to the end when the test lets it, and a job installed after the upgrade is admitted.

The job's program (written below, run by the Ray head stand-in as `job.command`, like test_your_code.py's) counts
steps into a file until the test creates a release file: it runs as long as the test needs, with no timed
assertion, and a second start of it (a lost run) would show as a second `start` line.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planb import paths
from planb.kube import Kube, Obj
from planb.kube_objects import conditions
from planb.local.rayhead import settings as rayhead_settings
from planb.local.stack.stack import LocalStack
from planb.local.stack.versions import kueue_version_from_log
from tests.support.e2e.jobs import install_job, wait_jobs, workload_of
from tests.support.e2e.topologies import RAYCLUSTERS, RAYJOBS, Run
from tests.support.e2e.waits import wait_until

pytestmark = [pytest.mark.slow]

JOB = "job-1"
LATER = "job-2"
#: Counts steps into PROGRESS (argv[1]) until RELEASE (argv[2]) exists; `start PID` first, `done STEPS` last.
PROGRAM = """\
import os, sys, time
progress, release = sys.argv[1], sys.argv[2]
with open(progress, "a") as out:
    out.write(f"start {os.getpid()}\\n")
    out.flush()
    step = 0
    while not os.path.exists(release):
        step += 1
        out.write(f"step {step}\\n")
        out.flush()
        time.sleep(0.05)
    out.write(f"done {step}\\n")
"""


def _running_binary(pid: int | None) -> Path | None:
    return Path(os.readlink(f"/proc/{pid}/exe")) if pid is not None else None


@contextlib.contextmanager
def previous_controllers(stack: LocalStack) -> Iterator[None]:
    """The previous Kueue and KubeRay operator instead of the pinned ones; the pinned ones running again after, also
    when the test fails, so that the tests after this one find the topology as the converge left it."""
    previous_kueue, previous_kuberay = paths.tool("kueue-upgrade-from"), paths.tool("kuberay-operator-upgrade-from")
    assert previous_kueue.is_file() and previous_kuberay.is_file(), "run `make setup`: it builds the previous pins"
    stack.kueue.stop()
    stack.kuberay.stop()
    try:
        stack.kueue.start(binary=previous_kueue)
        stack.kueue.wait_ready(progress=False)
        stack.kueue.wait_webhook_admits()
        stack.start_kuberay(binary=previous_kuberay)
        yield
    finally:
        if _running_binary(stack.kueue.process.pid()) != paths.tool("kueue").resolve():
            stack.kueue.stop()
        if _running_binary(stack.kuberay.pid()) != paths.tool("kuberay-operator").resolve():
            stack.kuberay.stop()
        stack.up()  # starts what is stopped, with the pinned binaries; nothing when both run already
        assert stack.is_up()


def upgrade(stack: LocalStack) -> None:
    """docs/upgrading.md's order after the CRDs: Kueue, once its webhook admits again the KubeRay operator."""
    stack.kueue.stop()
    stack.start_kueue()
    stack.kueue.wait_webhook_admits()
    stack.kuberay.stop()
    stack.start_kuberay()


def kueue_version(stack: LocalStack) -> str:
    return kueue_version_from_log(stack.state / "kueue.log")


def rayjob(kube: Kube) -> Obj:
    found = kube.get(f"{RAYJOBS}/{JOB}")
    assert found is not None, f"RayJob {JOB} is gone"
    return found


def ray_status(kube: Kube) -> tuple[str, str]:
    st = rayjob(kube).get("status") or {}
    return str(st.get("jobDeploymentStatus", "")), str(st.get("jobStatus", ""))


def lines(progress: Path) -> list[str]:
    return progress.read_text().splitlines() if progress.is_file() else []


def steps(progress: Path) -> int:
    return sum(1 for line in lines(progress) if line.startswith("step "))


def what_runs(kube: Kube) -> dict[str, Any]:
    """What a lost or restarted job would change: its Workload and admission, its RayJob and Ray cluster, the pods."""
    wl = workload_of(kube, JOB)
    conds = conditions(wl)
    status = wl.get("status") or {}
    job = rayjob(kube)
    cluster = str((job.get("status") or {}).get("rayClusterName", ""))
    ray_cluster = kube.get(f"{RAYCLUSTERS}/{cluster}") if cluster else None
    pods = kube.items("/api/v1/namespaces/default/pods", {"labelSelector": f"ray.io/cluster={cluster}"})
    return {
        "workload": (wl["metadata"]["name"], wl["metadata"]["uid"]),
        "admission": status.get("admission"),
        "admitted since": {c: conds.get(c, {}).get("lastTransitionTime") for c in ("QuotaReserved", "Admitted")},
        "rayjob": (job["metadata"]["uid"], (job.get("status") or {}).get("jobId")),
        "ray cluster": (cluster, (ray_cluster or {}).get("metadata", {}).get("uid")),
        "pods": sorted((p["metadata"]["name"], p["metadata"]["uid"]) for p in pods),
    }


def never_evicted(kube: Kube) -> dict[str, object]:
    """The Workload's marks of an eviction or requeue (Kueue's Evicted, Requeued, requeueState); {} when none."""
    wl = workload_of(kube, JOB)
    conds = conditions(wl)
    marks: dict[str, object] = {
        c: conds[c] for c in ("Evicted", "Preempted", "Requeued") if conds.get(c, {}).get("status") == "True"
    }
    if (wl.get("status") or {}).get("requeueState"):
        marks["requeueState"] = wl["status"]["requeueState"]
    if conds.get("Admitted", {}).get("status") != "True":
        marks["Admitted"] = conds.get("Admitted")
    return marks


def test_kueue_and_kuberay_upgraded_from_the_previous_pins_with_a_job_running_lose_none(
    site: Path, helm: Run, tmp_path: Path
) -> None:
    kube = Kube(site)
    stack = LocalStack()
    pins = paths.versions()
    image, progress, release = tmp_path / "image", tmp_path / "progress", tmp_path / "release"
    image.mkdir()
    (image / "gate.py").write_text(PROGRAM)
    rayhead_settings.set_payload(
        f"default/{JOB}", rayhead_settings.Payload(mode="run", image={"/workspace": str(image)})
    )
    command = ["python", "/workspace/gate.py", str(progress), str(release)]
    with previous_controllers(stack):
        assert kueue_version(stack) == pins["UPGRADE_FROM_KUEUE_VERSION"]
        # The previous operator is a build of its own when its version differs from the pin (build-tools.sh).
        previous = paths.tool("kuberay-operator-upgrade-from").resolve()
        assert _running_binary(stack.kuberay.pid()) == previous
        assert (previous != paths.tool("kuberay-operator").resolve()) == (
            pins["UPGRADE_FROM_KUBERAY_VERSION"] != pins["KUBERAY_VERSION"]
        )
        install_job(helm, JOB, "--set-json", f"job.command={json.dumps(command)}", "--set-json", "job.pip=[]")
        wait_jobs(kube, {JOB: "on-demand"})
        wait_until(lambda: ray_status(kube) == ("Running", "RUNNING") and steps(progress) >= 1, f"{JOB} to run", 120)
        before = what_runs(kube)
        assert before["pods"] and before["ray cluster"][1], before
        assert never_evicted(kube) == {}

        upgrade(stack)
        assert kueue_version(stack) == pins["KUEUE_VERSION"]
        assert _running_binary(stack.kuberay.pid()) == paths.tool("kuberay-operator").resolve()

        # A job installed after the upgrade is admitted: plan A's quota is job 1's, so on plan B, through the
        # current Kueue's ProvisioningRequest admission check.
        install_job(helm, LATER)
        wait_jobs(kube, {JOB: "on-demand", LATER: "dws"})
        # The running job is the same job, admitted as before, on the same Ray cluster and pods; its program
        # started once and still counts on.
        assert what_runs(kube) == before
        assert never_evicted(kube) == {}
        assert ray_status(kube) == ("Running", "RUNNING")
        counted = steps(progress)
        wait_until(lambda: steps(progress) > counted, f"{JOB}'s program to count on after the upgrade", 60)
        assert [line for line in lines(progress) if not line.startswith("step ")] == [lines(progress)[0]]

        release.touch()
        wait_until(
            lambda: ray_status(kube) == ("Complete", "SUCCEEDED"),
            f"{JOB} to succeed",
            120,
            explain=lambda: ray_status(kube),
        )
        wait_until(
            lambda: conditions(workload_of(kube, JOB)).get("Finished", {}).get("status") == "True",
            f"{JOB}'s Workload to finish",
            60,
        )
        done = lines(progress)
        assert [line.split()[0] for line in done if not line.startswith("step ")] == ["start", "done"], done
        # 0 steps lost: one run counted every step from 1 to its last, through both controllers' restarts.
        assert [int(line.split()[1]) for line in done if line.startswith("step ")] == list(
            range(1, steps(progress) + 1)
        )
        assert int(done[-1].split()[1]) == steps(progress)
        assert never_evicted(kube) == {}
