"""A TPU7x job admitted and run on the local stack, on a slice a workload policy places.

GKE places a multi-host TPU7x slice by a Compute Engine workload policy (the pool's placementPolicy.policyName),
not by a topology on the pool, and labels the nodes with the policy's accelerator topology
(cloud.google.com/gke-tpu-topology), which the job chart's workers select. The seed's topology is tpu-v6e-4x4, so
this test adds one TPU7x pool beside it, as plan A (label planb.dev/plan=on-demand), through the emulator's REST API
as any GKE client would, and removes it again; no converge is added. The seed's flavors select the tpu-v6e-4x4 shape
as well as the plan, so a TPU7x job matches none of them: the test installs the queues chart a second time
for the tpu7x-2x2x2 profile, under names of its own (plan A only), and submits the job to that queue.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planb import paths
from planb.kube import Kube
from planb.kube_objects import conditions
from planb.local.gke_emulator.address import DEFAULT_PORT
from planb.local.rayhead import settings as rayhead_settings
from planb.status.report import collect
from tests.support.e2e.jobs import wait_jobs, workload_of
from tests.support.e2e.topologies import Run
from tests.support.e2e.uninstall import uninstall
from tests.support.e2e.waits import wait_until

PROJECT, REGION, ZONE, CLUSTER = "planb-local", "us-east5", "us-east5-b", "tpu-cluster"
POOL, POLICY = "ironwood-pool", "wp-2x2x2"
POOLS = f"/v1/projects/{PROJECT}/locations/{ZONE}/clusters/{CLUSTER}/nodePools"
#: The TPU7x queues' release, LocalQueue and plan A flavor: names apart from the seed's queues.
QUEUES, LOCAL_QUEUE, FLAVOR = "tpu7x-queues", "tpu7x-queue", "tpu7x-on-demand"
CHART = paths.REPO / "charts" / "planb"


def _gke(method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
    port = os.environ.get("PLANB_GKE_EMULATOR_PORT", str(DEFAULT_PORT))
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=json.dumps(body).encode() if body is not None else None,
        method=method,
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def _wait_operation(operation: dict[str, Any]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status, op = _gke("GET", f"/v1/projects/{PROJECT}/locations/{ZONE}/operations/{operation['name']}")
        assert status == 200, op
        if op["status"] == "DONE":
            assert "error" not in op, op
            return
        time.sleep(0.2)
    raise AssertionError(f"operation {operation['name']} not DONE within 30 s")


@pytest.fixture
def tpu7x_pool(site: Path) -> Iterator[str]:
    """A TPU7x 2x2x2 pool (two hosts of four chips) placed by a workload policy, labelled as plan A's."""
    made = subprocess.run(
        [str(Path(sys.executable).parent / "planb"), "local", "gke-emulator", "workload-policy", "create", POLICY,
         "--region", REGION, "--accelerator-topology", "2x2x2", "--project", PROJECT],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert made.returncode == 0 or "already exists" in made.stderr, made.stderr
    status, op = _gke(
        "POST",
        POOLS,
        {
            "nodePool": {
                "name": POOL,
                "config": {"machineType": "tpu7x-standard-4t", "labels": {"planb.dev/plan": "on-demand"}},
                "initialNodeCount": 0,
                "autoscaling": {"enabled": True, "minNodeCount": 0, "maxNodeCount": 2},
                "placementPolicy": {"policyName": POLICY},
                "management": {"autoRepair": True, "autoUpgrade": True},
            }
        },
    )
    assert status == 200, op
    _wait_operation(op)
    try:
        yield POOL
    finally:
        status, op = _gke("DELETE", f"{POOLS}/{POOL}")
        assert status == 200, op
        _wait_operation(op)


@pytest.fixture
def tpu7x_queues(site: Path, helm: Run) -> Iterator[str]:
    """The queues chart for the tpu7x-2x2x2 profile beside the seed's: plan A only (the pool above), every queue
    object named apart, removed on uninstall; its LocalQueue's name."""
    helm(
        "install", QUEUES, str(CHART), "-f", str(CHART / "values" / "tpu7x-2x2x2.yaml"),
        "--set", "mode=queues", "--set", "queues.keepOnUninstall=false", "--set", "dws.enabled=false",
        "--set", "queues.clusterQueue=tpu7x-cluster-queue", "--set", f"queues.localQueue.name={LOCAL_QUEUE}",
        "--set", "queues.flavors.cpu=tpu7x-default-cpu", "--set", f"queues.flavors.onDemand={FLAVOR}",
        # site.yml's queues release made the namespace's shared job account already: a second one makes none.
        "--set", "queues.jobServiceAccount=",
    )  # fmt: skip
    try:
        yield LOCAL_QUEUE
    finally:
        # The job first: Kueue keeps a ClusterQueue that a Workload still uses (its resource-in-use finalizer).
        uninstall(site, "job-7x", check=False)
        uninstall(site, QUEUES)


def test_a_tpu7x_job_is_admitted_and_runs_on_a_policy_placed_slice(
    tpu7x_pool: str, tpu7x_queues: str, site: Path, helm: Run
) -> None:
    status, pool = _gke("GET", f"{POOLS}/{tpu7x_pool}")
    assert status == 200 and pool["config"]["labels"]["cloud.google.com/gke-tpu-topology"] == "2x2x2", pool
    rayhead_settings.set_payload("job-7x", rayhead_settings.Payload(seconds=2))  # the run itself is not the point
    helm("install", "job-7x", str(CHART), "-f", str(CHART / "values" / "tpu7x-2x2x2.yaml"),
         "--set", f"job.queueName={tpu7x_queues}")  # fmt: skip
    kube = Kube(site)
    wait_jobs(kube, {"job-7x": FLAVOR}, timeout=120)
    pools: set[str] = set()

    def succeeded() -> bool:
        (job,) = collect(kube, "default", "job-7x")
        pools.update(job.node_pools)
        return job.ray_status.startswith("Complete") and "SUCCEEDED" in job.ray_status

    wait_until(succeeded, "the TPU7x job to run and succeed", 180, explain=lambda: collect(kube, "default", "job-7x"))
    # Its workers ran on the policy-placed slice (the head on the CPU pool).
    assert tpu7x_pool in pools, pools
    wait_until(
        lambda: conditions(workload_of(kube, "job-7x")).get("Finished", {}).get("status") == "True",
        "the TPU7x job's Workload to finish",
        60,
    )
