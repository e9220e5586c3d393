"""The CPU-only smoke job (job.smoke.enabled) on the converged tutorial topology, before any TPU job.

The operator's step before the first TPU job (docs/first-run.md, section 10): `helm install` of the smoke job with
the profile's values file, as the namespace's shared account (planb-job, which site.yml's queues release made).
Kueue admits every PodSet of it on the CPU flavor (default-cpu), with no ProvisioningRequest and no plan node; KubeRay
starts its Ray cluster; the Ray head stand-in runs its entrypoint, the chart's smoke.py, as a host process
(`planb local rayhead set --run`), which writes, reads back and deletes one object under the release's checkpoint
directory (a local path here; gs:// and Workload Identity's token exchange are Google-only), and the RayJob ends
SUCCEEDED with `planb smoke: PASS` in its log.
"""

from __future__ import annotations

import time
from pathlib import Path

from planb.kube import Kube
from planb.local.rayhead import settings as rayhead_settings
from tests.support.e2e.jobs import install_job, job_logs, workload_of
from tests.support.e2e.topologies import RAYJOBS, REQUESTS, Run
from tests.support.e2e.waits import wait_until

JOB = "job-smoke"


def rayjob_status(kube: Kube) -> tuple[str, str]:
    st = (kube.get(f"{RAYJOBS}/{JOB}") or {}).get("status") or {}
    if st.get("jobDeploymentStatus") == "Failed":
        raise AssertionError(f"the smoke job failed: {st.get('message')}")
    return str(st.get("jobDeploymentStatus", "")), str(st.get("jobStatus", ""))


def admission(kube: Kube) -> dict[str, dict[str, str]]:
    """Each PodSet's flavors in the smoke job's Workload ({} until Kueue admits it)."""
    try:
        wl = workload_of(kube, JOB)
    except AssertionError:
        return {}
    assignments = ((wl.get("status") or {}).get("admission") or {}).get("podSetAssignments") or []
    return {a["name"]: dict(a.get("flavors") or {}) for a in assignments}


def test_the_smoke_job_is_admitted_on_the_cpu_flavor_and_writes_reads_and_deletes_its_object(
    site: Path, helm: Run, tmp_path: Path
) -> None:
    kube = Kube(site)
    since = time.time()
    root = tmp_path / "checkpoints"
    rayhead_settings.set_payload(f"default/{JOB}", rayhead_settings.Payload(mode="run"))
    install_job(
        helm,
        JOB,
        "--set", "job.smoke.enabled=true",
        "--set", f"job.training.checkpointDir={root}",
        "--set", "job.serviceAccountName=planb-job",
    )  # fmt: skip

    wait_until(lambda: bool(admission(kube)), "Kueue to admit the smoke job", 90)
    flavors = admission(kube)
    assert sorted(flavors) == ["cpu-smoke", "head", "submitter"], flavors
    # CPU and memory only, every PodSet on the CPU flavor: no accelerator was asked for.
    assert all(f == {"cpu": "default-cpu", "memory": "default-cpu"} for f in flavors.values()), flavors

    wait_until(lambda: rayjob_status(kube) == ("Complete", "SUCCEEDED"), "the smoke job to succeed", 180)
    [log] = job_logs(JOB, since)
    out = log.read_text(errors="replace")
    directory = root / "default" / JOB
    assert f"planb smoke: PASS: wrote {directory}/planb-smoke-" in out, out[-3000:]
    # It deleted what it wrote, and nothing of a TPU was asked for while it ran.
    assert directory.is_dir() and list(directory.iterdir()) == []
    assert kube.items(REQUESTS) == []
    plan_nodes = [n for n in kube.items("/api/v1/nodes") if "planb.dev/plan" in n["metadata"].get("labels", {})]
    assert plan_nodes == [], [n["metadata"]["name"] for n in plan_nodes]
    pods = [
        p
        for p in kube.items("/api/v1/namespaces/default/pods")
        if p["metadata"].get("labels", {}).get("app.kubernetes.io/instance") == JOB
    ]
    assert all("google.com/tpu" not in str(p["spec"]) for p in pods)
