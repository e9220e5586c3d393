"""Helpers the e2e test modules share about jobs: installing one with the chart and waiting until Kueue admits it
(``install_job``, ``wait_jobs``), the queues release's ladder and a plan left without quota, finding a job's
Workloads, `planb status`, and the payload's traces.

Test modules import these from here, never from one another. The topologies, their fixtures and ``run``:
tests/support/e2e/topologies.py.
"""

from __future__ import annotations

import copy
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from planb import paths
from planb.kube import Kube, Obj
from planb.local.rayhead import settings as rayhead_settings
from planb.status.report import KUEUE, JobStatus, admitted_on, collect, provisioned
from tests.support.e2e.topologies import PROFILE, Run, run
from tests.support.e2e.waits import wait_until
from tests.support.shared.training import jax_cache_dir


def run_env(**extra: str) -> dict[str, str]:
    """The Ray head stand-in's environment for a job whose entrypoint it runs (train.py on this host's CPU): its
    defaults, the plain runner, a log line per 1000 steps, JAX's compilation cache for the tier's payloads (what the
    chart's training.compilationCacheDir sets, PLANB_COMPILATION_CACHE_DIR: a resumed run, and the next test run,
    load what the first compiled), and `extra`."""
    cache = jax_cache_dir("e2e-payloads")
    cache.mkdir(parents=True, exist_ok=True)
    return {
        **rayhead_settings.DEFAULT_RUN_ENV,
        "PLANB_RUNNER": "plain",
        "PLANB_LOG_EVERY": "1000",
        "PLANB_COMPILATION_CACHE_DIR": str(cache),
        **extra,
    }


def workloads_by_job(kube: Kube) -> dict[str, list[str]]:
    """RayJob name -> the names of the Workloads in `default` that it owns."""
    out: dict[str, list[str]] = {}
    for wl in kube.items(f"{KUEUE}/namespaces/default/workloads"):
        for owner in wl["metadata"].get("ownerReferences", []):
            if owner["kind"] == "RayJob":
                out.setdefault(owner["name"], []).append(wl["metadata"]["name"])
    return out


def workload_of(kube: Kube, job: str) -> Obj:
    """The Workload the RayJob `job` owns; AssertionError while Kueue has made none."""
    for wl in kube.items(f"{KUEUE}/namespaces/default/workloads"):
        if any(o.get("kind") == "RayJob" and o.get("name") == job for o in wl["metadata"].get("ownerReferences", [])):
            return wl
    raise AssertionError(f"no Workload for {job}")


def planb_status(kubeconfig: Path, job: str) -> str:
    """What `planb status <job>` prints (its exit status unchecked)."""
    return run(
        str(Path(sys.executable).parent / "planb"), "status", job, "--kubeconfig", str(kubeconfig), check=False
    ).stdout


def requeue_as_status_says(kubeconfig: Path, job: str) -> None:
    """Re-queue a deactivated job with the command `planb status JOB` prints for it: ``kubectl patch workload ...``
    (spec.active back to true) for a user's deactivation, ``kubectl delete workload ...`` for one Kueue made itself.
    kubectl's own wait for a deletion can miss a Workload Kueue re-creates under the same name at once
    (tests/e2e/topologies/test_dws_lifecycle.py), so it is not asked to wait: the caller waits on the outcome."""
    line = next((x for x in planb_status(kubeconfig, job).splitlines() if "deactivated:" in x), "")
    assert "kubectl " in line, f"planb status {job} prints no re-queue command: {line!r}"
    command = shlex.split(line[line.index("kubectl ") :].split(" (")[0])
    subprocess.run(
        [*command, f"--kubeconfig={kubeconfig}", *(["--wait=false"] if command[1] == "delete" else [])],
        timeout=60,
        check=True,
        capture_output=True,
        env=dict(os.environ, PATH=f"{paths.tools_dir() / 'bin'}:{os.environ.get('PATH', '')}"),
    )


def steps(directory: Path) -> list[int]:
    """Orbax's committed checkpoints: directories named by their step (it renames a finished one into place)."""
    if not directory.is_dir():
        return []
    return sorted(int(p.name) for p in directory.iterdir() if p.is_dir() and p.name.isdigit())


def payload_processes(marker: str) -> list[int]:
    """Host processes running a payload from the stand-in's work directory `marker`."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            pids.append(int(proc.name))
    return pids


def job_logs(job: str, since: float) -> list[Path]:
    """The stand-in's output files of `job`'s submissions written since `since` (earlier tests' are older)."""
    found = [p for p in rayhead_settings.logs_dir().glob(f"default_{job}_*.log") if p.stat().st_mtime >= since]
    return sorted(found, key=lambda p: p.stat().st_mtime)


def install_job(helm: Run, name: str, *extra: str) -> None:
    chart = paths.REPO / "charts" / "planb"
    helm("install", name, str(chart), "-f", str(chart / "values" / f"{PROFILE}.yaml"), *extra)


def release_ladder(helm: Run) -> list[dict[str, Any]]:
    """The queues release's `queues.ladder` (site.yml renders the inventory's plans there); [] without one."""
    values = json.loads(helm("get", "values", "planb-queues", "-o", "json").stdout or "{}")
    return list(((values or {}).get("queues") or {}).get("ladder") or [])


def ladder_without_quota(ladder: list[dict[str, Any]], plans: set[str]) -> list[dict[str, Any]]:
    """`ladder` with no accelerator quota on `plans`, every other rung as it is (a copy)."""
    out = copy.deepcopy(ladder)
    for rung in out:
        if rung.get("name") in plans:
            rung.setdefault("quota", {})["accelerator"] = 0
    return out


def no_quota(helm: Run, plan: str) -> tuple[str, ...]:
    """Arguments of `helm upgrade planb-queues --reuse-values` that leave `plan` no accelerator quota.

    Helm replaces a list given with --set whole, so the release's own ladder is sent back with the one quota
    changed. A release without a ladder (the seed's two plans) has the flat `queues.quotas`."""
    ladder = release_ladder(helm)
    if ladder:
        if plan not in {rung.get("name") for rung in ladder}:
            raise AssertionError(f"no plan {plan} in the queues release's ladder {[r.get('name') for r in ladder]}")
        return ("--set-json", f"queues.ladder={json.dumps(ladder_without_quota(ladder, {plan}))}")
    return ("--set", f"queues.quotas.{ {'on-demand': 'onDemand'}.get(plan, plan) }.accelerator=0")


def wait_jobs(kube: Kube, want: dict[str, str], timeout: float = 180) -> dict[str, JobStatus]:
    """Wait until each job is admitted on its flavor (and, if it has requests, provisioned)."""
    jobs: dict[str, JobStatus] = {}

    def admitted() -> bool:
        jobs.clear()
        jobs.update((j.name, j) for j in collect(kube, "default"))
        return all(
            n in jobs and admitted_on(jobs[n], f) and (not jobs[n].requests or provisioned(jobs[n]))
            for n, f in want.items()
        )

    def states() -> dict[str, object]:
        return {n: (j.state, j.accelerator_flavor, [r.state for r in j.requests]) for n, j in jobs.items()}

    wait_until(admitted, f"jobs admitted as {want}", timeout, explain=states)
    return jobs


def submit_two_jobs(helm: Run, kube: Kube) -> dict[str, JobStatus]:
    """The seed's step 12: job 1 takes plan A's quota, then job 2 falls over to plan B."""
    install_job(helm, "job-1")
    wait_jobs(kube, {"job-1": "on-demand"})
    install_job(helm, "job-2")
    return wait_jobs(kube, {"job-1": "on-demand", "job-2": "dws"})
