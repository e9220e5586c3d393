"""The concurrent ladder on the real Kueue v0.19.2: start now on Spot, move up later, lose no more than the
steps since the newest checkpoint.

The reservation, on-demand and DWS have no quota, so of the job's four variants only Spot's is admitted.
When DWS has room again (its quota back), Kueue migrates the job to dws (the Spot variant evicted with reason
FlavorMigration, then the dws variant admitted once its ProvisioningRequest is provisioned); when the
reservation frees (its quota comes back), the job migrates again, to the reservation. The payload is the real
train.py (run on this machine's CPU by the Ray head stand-in), which resumes each time from the newest
checkpoint and reports the steps lost; the job then succeeds.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from planb import paths
from planb.kube import Kube
from planb.local.capacity import settings as capacity_settings
from planb.local.rayhead import settings as rayhead_settings
from planb.status.report import collect
from tests.support.e2e.jobs import (
    install_job,
    job_logs,
    ladder_without_quota,
    planb_status,
    release_ladder,
    run_env,
    steps,
)
from tests.support.e2e.topologies import FOUR, Run, ansible_playbook
from tests.support.e2e.waits import wait_until

pytestmark = [pytest.mark.slow]


RAYJOBS = "/apis/ray.io/v1/namespaces/default/rayjobs"
QUEUES_CHART = str(paths.REPO / "charts" / "planb")


def _running_on(kube: Kube) -> str:
    jobs = collect(kube, "default", "job-9")
    found = jobs[0].concurrent if jobs else None
    return found.running_on if found is not None else "-"


def test_a_job_starts_on_spot_and_migrates_up_to_dws_then_the_reservation(
    concurrent: Path, helm: Run, tmp_path: Path
) -> None:
    kube = Kube(concurrent)
    since = time.time()
    root = tmp_path / "checkpoints"
    ckpt = root / "default" / "job-9"  # the chart scopes checkpoints per release: <root>/<namespace>/<release>
    full = release_ladder(helm)

    def only_quota_off(plans: set[str]) -> None:
        """The queues release with no accelerator quota on `plans`, every other rung's as converged."""
        ladder = ladder_without_quota(full, plans)
        helm(
            "upgrade",
            "planb-queues",
            QUEUES_CHART,
            "--reuse-values",
            "--set-json",
            f"queues.ladder={json.dumps(ladder)}",
        )

    env = run_env()
    rayhead_settings.set_payload("default/job-9", rayhead_settings.Payload(mode="run", env=env))
    # Only Spot has quota at first. Kueue v0.19.2 evicts the running variant as soon as a more preferred one
    # fits its quota, before that one's admission check (scheduler.go issueMigration), so a DWS rung with quota
    # would stop the Spot run until its request is provisioned, or not, by which variant the scheduler took
    # first; DWS gets its quota back once the job has trained on Spot, and delivers 2 s after the request.
    capacity_settings.update(provisioning_delay_seconds=2.0)
    only_quota_off({"reserved", "on-demand", "dws"})

    started = time.time()
    install_job(
        helm,
        "job-9",
        "--set",
        "job.ladderMode=concurrent",
        "--set",
        f"job.training.checkpointDir={root}",
        "--set",
        "job.training.checkpointEvery=200",
        "--set",
        "job.training.epochs=100000000",
    )
    wait_until(lambda: _running_on(kube) == "spot", "job 9 to start on spot", 60)
    assert time.time() - started < 30, "the job did not start on Spot within seconds"
    wait_until(
        lambda: len(steps(ckpt)) >= 1,
        "a checkpoint on spot",
        180,
        explain=lambda: (
            planb_status(concurrent, "job-9"),
            [p.read_text(errors="replace")[-1500:] for p in job_logs("job-9", since)],
        ),
    )
    assert _running_on(kube) == "spot" and len(job_logs("job-9", since)) == 1  # the one run so far, on Spot

    # DWS can deliver: its quota is back (the reservation's and on-demand's stay at 0).
    only_quota_off({"reserved", "on-demand"})

    wait_until(lambda: _running_on(kube) == "dws", "Kueue to migrate job 9 to dws when DWS delivers", 180)
    wait_until(
        lambda: len(job_logs("job-9", since)) >= 2,
        "the run on dws",
        120,
        explain=lambda: (planb_status(concurrent, "job-9"), kube.items("/api/v1/namespaces/default/pods")),
    )
    before = steps(ckpt)[-1]
    wait_until(lambda: steps(ckpt)[-1] > before, "a checkpoint on dws", 180)

    # The run on the reservation ends 400 steps past the newest checkpoint (the stand-in's next submission).
    latest = steps(ckpt)[-1]
    rayhead_settings.set_payload(
        "default/job-9", rayhead_settings.Payload(mode="run", env={**env, "PLANB_EPOCHS": str(latest + 400)})
    )
    # The reservation frees: its quota is back (on-demand's stays at 0), its variant is admitted and the job
    # migrates again.
    only_quota_off({"on-demand"})
    wait_until(lambda: _running_on(kube) == "reserved", "Kueue to migrate job 9 to the reservation", 180)

    # `planb status` while the job runs on the reservation: one migration per move (each change of the admitted
    # variant), each with the steps train.py reported lost on the resume after it, read from the newest
    # submitter pod's log as on GKE (KubeRay removes the submitter once the job is done).
    def migrations() -> list[str]:
        text = planb_status(concurrent, "job-9")
        return [line.strip() for line in text.splitlines() if line.strip().startswith("migrated at ")]

    def both_with_steps_lost(moves: list[str]) -> bool:
        return len(moves) == 2 and all("step(s) lost)" in m and "unknown" not in m for m in moves)

    wait_until(
        lambda: both_with_steps_lost(migrations()),
        "planb status to show both migrations with their steps lost",
        120,
        explain=lambda: planb_status(concurrent, "job-9"),
    )
    moves = migrations()
    assert [m.split(": ", 1)[1].split(" (")[0] for m in moves] == ["spot -> dws", "dws -> reserved"], moves
    assert "2 migration(s)" in planb_status(concurrent, "job-9")

    wait_until(
        lambda: ((kube.get(f"{RAYJOBS}/job-9") or {}).get("status") or {}).get("jobStatus") == "SUCCEEDED",
        "job 9 to succeed on the reservation",
        300,
    )
    logs = [p.read_text(errors="replace") for p in job_logs("job-9", since)]
    assert len(logs) >= 3, logs
    for resumed in logs[1:]:
        assert "resumed from checkpoint step" in resumed.lower(), resumed[-3000:]
        assert "step(s) lost" in resumed, resumed[-3000:]
    # The steps lost status shows are train.py's own: under one checkpoint interval (200), plus the steps run
    # while a checkpoint was still being written when the old run was killed (Orbax saves asynchronously).
    lost = [int(re.findall(r"\((\d+) step\(s\) lost\)", m)[0]) for m in moves]
    assert all(0 <= n < 2 * 200 for n in lost), moves


def test_going_back_to_sequential_is_refused_before_anything_changes(concurrent: Path, helm: Run) -> None:
    """Kueue keeps a ClusterQueue's concurrentAdmissionPolicy immutable: the role refuses the mode change, with
    the fix, before its chart upgrade (which Kueue's webhook would refuse half-way)."""
    kube = Kube(concurrent)
    revision = json.loads(helm("history", "planb-queues", "-o", "json").stdout)[-1]["revision"]
    done = ansible_playbook("playbooks/kueue.yml", "-e", json.dumps({"planb_plans": FOUR}), check=False)
    assert done.returncode != 0, done.stdout[-3000:]
    assert "planb_ladder_mode=sequential (concurrentAdmissionPolicy null) but ClusterQueue cluster-queue was made" in (
        done.stdout
    ), done.stdout[-3000:]
    assert "Fix: keep the ClusterQueue's mode" in done.stdout and "kubectl delete clusterqueue cluster-queue" in (
        done.stdout
    ), done.stdout[-3000:]
    cq = kube.get("/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cluster-queue") or {}
    assert (cq.get("spec") or {}).get("concurrentAdmissionPolicy") == {"migration": {"mode": "TryPreferredFlavors"}}
    assert json.loads(helm("history", "planb-queues", "-o", "json").stdout)[-1]["revision"] == revision
