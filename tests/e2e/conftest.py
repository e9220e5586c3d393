"""End-to-end fixtures: the local stack after `ansible-playbook site.yml`, and Helm against it."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from planb import paths
from planb.capacity import settings as capacity_settings
from planb.kube import Kube
from planb.status.report import JobStatus, admitted_on, collect, provisioned

Run = Callable[..., subprocess.CompletedProcess[str]]
PROFILE = "tpu-v6e-4x4"


def run(
    *argv: str, check: bool = True, timeout: float = 600, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        list(argv), capture_output=True, text=True, timeout=timeout, check=False, cwd=paths.REPO, env=env
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
        )
    return proc


def ansible_playbook(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run(str(Path(sys.executable).parent / "ansible-playbook"), *args, check=check)


@pytest.fixture()
def site(local_stack: Path) -> Path:
    """The cluster, pools, Kueue and queues of site.yml on the local inventory; returns the kubeconfig."""
    capacity_settings.save(capacity_settings.Settings(provisioning_delay_seconds=2.0, scale_down_after_seconds=5.0))
    ansible_playbook("site.yml")
    return local_stack


@pytest.fixture()
def helm(site: Path) -> Iterator[Run]:
    """Helm against the local stack; every job release a test made is uninstalled afterwards."""

    def helm_run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return run(str(paths.tool("helm")), f"--kubeconfig={site}", *args, check=check)

    yield helm_run
    releases = helm_run("list", "-q", "-n", "default").stdout.split()
    for release in releases:
        if release.startswith("job-"):
            helm_run("uninstall", release, "--wait", check=False)
    capacity_settings.save(capacity_settings.Settings())


def install_job(helm: Run, name: str, *extra: str) -> None:
    chart = paths.REPO / "charts" / "planb"
    helm("install", name, str(chart), "-f", str(chart / "values" / f"{PROFILE}.yaml"), *extra)


def no_quota(helm: Run, plan: str) -> tuple[str, ...]:
    """Arguments of `helm upgrade planb-queues --reuse-values` that leave `plan` no accelerator quota.

    site.yml renders the inventory's plans as `queues.ladder` (issue 15); Helm replaces a list given
    with --set whole, so the release's own ladder is sent back with the one quota changed. A release
    without a ladder (the seed's two plans) has the flat `queues.quotas`."""
    values = json.loads(helm("get", "values", "planb-queues", "-o", "json").stdout or "{}")
    ladder = copy.deepcopy(((values or {}).get("queues") or {}).get("ladder") or [])
    for rung in ladder:
        if rung.get("name") == plan:
            rung.setdefault("quota", {})["accelerator"] = 0
            return ("--set-json", f"queues.ladder={json.dumps(ladder)}")
    if ladder:
        raise AssertionError(f"no plan {plan} in the queues release's ladder {[r.get('name') for r in ladder]}")
    return ("--set", f"queues.quotas.{ {'on-demand': 'onDemand'}.get(plan, plan) }.accelerator=0")


def wait_jobs(kube: Kube, want: dict[str, str], timeout: float = 180) -> dict[str, JobStatus]:
    """Wait until each job is admitted on its flavor (and, if it has requests, provisioned)."""
    deadline = time.monotonic() + timeout
    jobs: dict[str, JobStatus] = {}
    while time.monotonic() < deadline:
        jobs = {j.name: j for j in collect(kube, "default")}
        if all(
            n in jobs and admitted_on(jobs[n], f) and (not jobs[n].requests or provisioned(jobs[n]))
            for n, f in want.items()
        ):
            return jobs
        time.sleep(1)
    states = {n: (j.state, j.accelerator_flavor, [r.state for r in j.requests]) for n, j in jobs.items()}
    raise AssertionError(f"jobs not admitted as {want} within {timeout:.0f} s: {states}")


def submit_two_jobs(helm: Run, kube: Kube) -> dict[str, JobStatus]:
    """The seed's step 12: job 1 takes plan A's quota, then job 2 falls over to plan B."""
    install_job(helm, "job-1")
    wait_jobs(kube, {"job-1": "on-demand"})
    install_job(helm, "job-2")
    return wait_jobs(kube, {"job-1": "on-demand", "job-2": "dws"})
