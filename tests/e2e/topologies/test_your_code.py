"""A team's own program through the chart (`job.command`), stopped by Kueue and resumed, with planb's goodput.

The program is examples/your-code/team/regression.py (plain JAX, nothing of planb's train.py), its code "inside
job.image" at /workspace: KWOK pulls no image, so the Ray head stand-in copies that folder there
(`--image-dir /workspace=...`, planb.local.rayhead.launch) and runs the entrypoint the chart made of job.command on
this machine's CPU. No training-files ConfigMap exists. The job runs on plan A of the `site` topology; deactivating
its Workload makes Kueue evict it (the job suspended, KubeRay deletes its Ray cluster, the stand-in stops the payload
with SIGTERM as the kubelet would), and the program saves the step it reached and ends 75. The command `planb status`
prints re-queues it; the new run resumes from that step with 0 or 1 steps lost, and `planb status JOB` counts its
goodput from the program's progress records (docs/your-code.md).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from planb import paths
from planb.kube import Kube
from planb.local.rayhead import settings as rayhead_settings
from planb.status.report import KUEUE
from tests.support.e2e.jobs import (
    install_job,
    job_logs,
    payload_processes,
    planb_status,
    requeue_as_status_says,
    wait_jobs,
    workload_of,
)
from tests.support.e2e.topologies import Run
from tests.support.e2e.waits import wait_until

pytestmark = [pytest.mark.slow]

JOB = "job-3"
RAYJOB = f"/apis/ray.io/v1/namespaces/default/rayjobs/{JOB}"
TEAM = paths.REPO / "examples" / "your-code" / "team"
COMMAND = ["python", "/workspace/regression.py", "--steps", "100000000", "--save-every", "100", "--report-every", "50"]


def ray_job(kube: Kube) -> str:
    st = (kube.get(RAYJOB) or {}).get("status") or {}
    if st.get("jobDeploymentStatus") == "Failed":
        raise AssertionError(f"{JOB} failed: {st.get('message')}")
    return str(st.get("jobStatus", ""))


def saved(ckpt: Path) -> list[int]:
    return sorted(int(p.stem.split("-")[1]) for p in ckpt.glob("step-*.npz"))


def test_your_own_program_runs_with_job_command_is_stopped_resumes_and_status_shows_its_goodput(
    site: Path, helm: Run, tmp_path: Path
) -> None:
    kube = Kube(site)
    since = time.time()
    root = tmp_path / "checkpoints"
    ckpt = root / "default" / JOB
    payload = rayhead_settings.Payload(mode="run", image={"/workspace": str(TEAM)})
    rayhead_settings.set_payload(f"default/{JOB}", payload)
    install_job(
        helm, JOB,
        "--set-json", f"job.command={json.dumps(COMMAND)}",
        "--set-json", "job.pip=[]",
        "--set", f"job.training.checkpointDir={root}",
    )  # fmt: skip
    # No script ConfigMap: the code is the image's.
    cms = kube.items("/api/v1/namespaces/default/configmaps", {"labelSelector": f"app.kubernetes.io/instance={JOB}"})
    assert not cms, [c["metadata"]["name"] for c in cms]
    wait_jobs(kube, {JOB: "on-demand"})
    wait_until(lambda: ray_job(kube) == "RUNNING" and len(saved(ckpt)) >= 1, "the program's first checkpoint", 120)

    # Kueue evicts the job: the Workload deactivated (the job suspended, its Ray cluster deleted, its pods stopped).
    wl = workload_of(kube, JOB)["metadata"]["name"]
    kube.merge_patch(f"{KUEUE}/namespaces/default/workloads/{wl}", {"spec": {"active": False}})
    work = f"{rayhead_settings.work_dir('default', JOB)}/"
    wait_until(lambda: not payload_processes(work), "the program to end after its stop notice", 60)
    [first_log] = job_logs(JOB, since)
    first = first_log.read_text(errors="replace")
    stopped = re.search(r"stop notice at step (\d+): checkpoint step (\d+) saved; stopping", first)
    assert stopped and stopped.group(1) == stopped.group(2), first[-2000:]
    at = int(stopped.group(1))
    assert saved(ckpt)[-1] == at

    # Re-queued as `planb status` says; the new run resumes at the step saved on the notice.
    requeue_as_status_says(site, JOB)
    wait_jobs(kube, {JOB: "on-demand"}, timeout=120)
    wait_until(lambda: len(job_logs(JOB, since)) == 2 and "planb-progress" in job_logs(JOB, since)[-1].read_text(),
               "the resumed run's first progress record", 120)  # fmt: skip
    resumed = job_logs(JOB, since)[-1].read_text(errors="replace")
    lost = re.search(r"resumed from checkpoint step (\d+); (\d+) step\(s\) lost", resumed)
    assert lost and int(lost.group(1)) == at and int(lost.group(2)) <= 1, resumed[-2000:]

    # planb status: the goodput from the program's records (not train.py's lines), both runs, the lost steps.
    def goodput() -> str:
        out = planb_status(site, JOB)
        return out if "the program's latest record at step" in out and "goodput unknown" not in out else ""

    wait_until(lambda: bool(goodput()), "planb status to show the program's goodput", 60)
    out = goodput()
    assert re.search(r"  goodput \d+\.\d%: training kept ", out), out
    # Two runs, each one admission (the earlier one's flavor is in Kueue's Events only when they name it).
    runs = [x for x in out.splitlines() if re.match(r"    run \d ", x)]
    assert len(runs) == 2 and runs[1].startswith("    run 2 on on-demand,"), out
    assert f"(steps 0-{at + int(lost.group(2))})" in runs[0] and f"steps lost {lost.group(2)}" in runs[0], out
    assert re.search(rf"\(steps {at}-\d+\)", runs[1]), out
    assert re.search(r"; \d+ tokens\)|\(\d+ tokens\)", out), out
