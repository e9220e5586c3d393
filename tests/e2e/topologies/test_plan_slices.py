"""Two slices per plan on the real Kueue: each plan is two pools, one flavor per plan covers both.

A multi-host TPU slice pool holds one slice, so `planb_ondemand_slices=2 planb_dws_slices=2` makes
on-demand-pool, on-demand-pool-2, dws-pool and dws-pool-2. The flavors select the plan label every
pool carries, so two on-demand jobs run at once on the two plan A pools, and two DWS jobs are
provisioned at once, one request per plan B pool.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planb.kube import Kube
from tests.support.e2e.jobs import install_job, wait_jobs
from tests.support.e2e.topologies import Run
from tests.support.e2e.waits import wait_until

pytestmark = [pytest.mark.slow]


def _pools_of(kube: Kube, plan: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for node in kube.items("/api/v1/nodes", {"labelSelector": f"planb.dev/plan={plan}"}):
        pool = node["metadata"]["labels"]["cloud.google.com/gke-nodepool"]
        out[pool] = out.get(pool, 0) + 1
    return out


def test_two_slices_per_plan_run_two_jobs_on_each_plan(two_slices: Path, helm: Run) -> None:
    kube = Kube(two_slices)
    for job in ("job-1", "job-2"):
        install_job(helm, job)
        wait_jobs(kube, {job: "on-demand"})
    for job in ("job-3", "job-4"):
        install_job(helm, job)
    jobs = wait_jobs(kube, {"job-1": "on-demand", "job-2": "on-demand", "job-3": "dws", "job-4": "dws"})
    # Both DWS requests were provisioned: one per DWS pool, each pool one slice of 4 nodes.
    assert all(r.state == "Provisioned" for j in ("job-3", "job-4") for r in jobs[j].requests)
    assert _pools_of(kube, "dws") == {"dws-pool": 4, "dws-pool-2": 4}
    # Plan A's two slices on its two pools (scaled up for the pending workers).
    wait = {"on-demand-pool": 4, "on-demand-pool-2": 4}
    wait_until(lambda: _pools_of(kube, "on-demand") == wait, "a slice in each of plan A's two pools")
