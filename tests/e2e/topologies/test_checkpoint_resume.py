"""A checkpointing job resumes from its last step after DWS revokes its capacity.

The job's payload is the real training/train.py (the chart's ConfigMap, run on this machine's CPU
by the Ray head stand-in, `planb local rayhead set --run`), checkpointing with Orbax to a local
directory. DWS (the capacity simulator) revokes the slice while it trains; Kueue deactivates the
workload, KubeRay tears the Ray cluster down and the training process dies with its head. The
command `planb status` prints re-queues it; on the next provisioned slice train.py restores the
newest checkpoint, and the test asserts the resumed run starts at exactly that step, and that train.py, told to
stop by SIGTERM, saved at the step it had reached (0 or 1 step lost). The chart
gives the release its own directory under the checkpoint root (<root>/default/job-2), and the
re-queued run, the same release, is the owner train.py finds recorded there.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from planb import paths
from planb.kube import Kube
from planb.kube_objects import conditions
from planb.local.capacity import settings as capacity_settings
from planb.local.capacity.settings import Lifecycle
from planb.local.rayhead import settings as rayhead_settings
from tests.support.e2e.jobs import (
    install_job,
    job_logs,
    no_quota,
    payload_processes,
    requeue_as_status_says,
    run_env,
    steps,
    wait_jobs,
    workload_of,
)
from tests.support.e2e.topologies import Run
from tests.support.e2e.waits import wait_until

pytestmark = [pytest.mark.slow]

RAYJOBS = "/apis/ray.io/v1/namespaces/default/rayjobs"


def rayjob_status(kube: Kube) -> tuple[str, str]:
    st = (kube.get(f"{RAYJOBS}/job-2") or {}).get("status") or {}
    return str(st.get("jobDeploymentStatus", "")), str(st.get("jobStatus", ""))


def training(kube: Kube) -> bool:
    """True while job 2's Ray job runs; a failed one stops the test with the payload's own error."""
    st = (kube.get(f"{RAYJOBS}/job-2") or {}).get("status") or {}
    if st.get("jobDeploymentStatus") == "Failed":
        raise AssertionError(f"job 2 failed: {st.get('message')}")
    return st.get("jobStatus") == "RUNNING"


def deactivated(kube: Kube) -> bool:
    try:
        wl = workload_of(kube, "job-2")
    except AssertionError:
        return False
    return wl["spec"].get("active") is False


def test_a_checkpointing_job_resumes_from_its_last_step_after_capacity_revoked(
    site: Path, helm: Run, tmp_path: Path
) -> None:
    kube = Kube(site)
    since = time.time()
    root = tmp_path / "checkpoints"
    # The chart scopes the root per release; a KubeRay retry or a re-queued run keeps the directory.
    ckpt = root / "default" / "job-2"
    plain = run_env()
    rayhead_settings.set_payload("default/job-2", rayhead_settings.Payload(mode="run", env=plain))
    capacity_settings.update(provisioning_delay_seconds=1.0)
    # No plan A quota: job 2 goes to plan B (DWS), now and when it is queued again.
    helm(
        "upgrade", "planb-queues", str(paths.REPO / "charts" / "planb"), "--reuse-values", *no_quota(helm, "on-demand")
    )
    install_job(
        helm,
        "job-2",
        "--set",
        f"job.training.checkpointDir={root}",
        "--set",
        "job.training.checkpointEvery=500",
        "--set",
        "job.training.epochs=100000000",
    )
    jobs = wait_jobs(kube, {"job-2": "dws"})
    [request] = [r.name for r in jobs["job-2"].requests]
    wait_until(lambda: rayjob_status(kube) == ("Running", "RUNNING"), "job 2's training to run", 120)
    wait_until(lambda: training(kube) and len(steps(ckpt)) >= 2, "two checkpoints", 180)

    # DWS takes the slice back while the job trains.
    capacity_settings.update(requests={f"default/{request}": Lifecycle(max_run_seconds=0)})
    wait_until(lambda: deactivated(kube), "Kueue to deactivate job 2 when its capacity is revoked", 90)
    [first_log] = job_logs("job-2", since)
    # The payload runs its ConfigMap file from the RayJob's work directory (one for all its submissions).
    marker = f"{rayhead_settings.work_dir('default', 'job-2')}/"
    wait_until(lambda: not payload_processes(marker), "the training process to die with its Ray head", 60)
    saved = steps(ckpt)
    assert saved, "no checkpoint survived"
    latest = saved[-1]
    first = first_log.read_text(errors="replace")
    assert f"No checkpoint in {ckpt}; starting at step 0" in first, first[-3000:]

    # Capacity is back; the resumed run trains 1000 more steps and ends.
    capacity_settings.update(requests={})
    rayhead_settings.set_payload(
        "default/job-2", rayhead_settings.Payload(mode="run", env={**plain, "PLANB_EPOCHS": str(latest + 1000)})
    )
    requeue_as_status_says(site, "job-2")
    wait_jobs(kube, {"job-2": "dws"}, timeout=180)
    wait_until(lambda: rayjob_status(kube) == ("Complete", "SUCCEEDED"), "the resumed run to finish", 240)
    logs = job_logs("job-2", since)
    assert len(logs) == 2, logs
    resumed = logs[-1].read_text(errors="replace")
    assert f"Resumed from checkpoint step {latest} in {ckpt}" in resumed, resumed[-3000:]
    # No step lost (DWS): the run's end (its request's max run duration, here set to now) takes the nodes,
    # their pods are stopped with SIGTERM (the stand-in stops the payload so), and train.py saves at the next step
    # boundary before it exits; only the step in flight may be lost. train.py's own resume line says how many.
    lost = re.search(r"resumed from checkpoint step (\d+); (\d+) step\(s\) lost", resumed)
    assert lost and int(lost.group(1)) == latest and int(lost.group(2)) <= 1, resumed[-3000:]
    # Kueue marks the Workload Finished from the RayJob's end, a moment after KubeRay wrote it.
    wait_until(
        lambda: conditions(workload_of(kube, "job-2")).get("Finished", {}).get("status") == "True",
        "Kueue to mark job-2's Workload Finished",
        30,
    )
    assert steps(ckpt)[-1] == latest + 1000
    # The resumed run was the same release's: the record train.py keeps there still names it.
    assert json.loads((ckpt / "planb-run.json").read_text())["run"] == "default/job-2"
