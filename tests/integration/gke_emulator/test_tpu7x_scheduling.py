"""A TPU7x job's workers can land on a TPU7x slice placed by a workload policy, without the local stack.

The chain a stack run walks, one link at a time: the gke_node_pool module creates the multi-host pool with
``placement_policy`` against the emulator, which labels it with the policy's topology as GKE does; the capacity
simulator reads that body (``planb.local.capacity.pools.from_gke``) and makes nodes with those labels; the job
chart's worker nodeSelector for the ``tpu7x-2x2x2`` profile must match them, or the workers never schedule.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import yaml

from planb import paths
from planb.build import golden
from planb.catalog import tpu
from planb.local.capacity.pools import from_gke
from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.gke_api import call, workload_policy
from tests.support.integration.gke.modules import CLUSTER_ARGS, PROJECT, ModuleRunner

ZONE = "us-central1-c"  # a TPU7x zone (https://cloud.google.com/tpu/docs/regions-zones)
POOL_ARGS = {
    "location": ZONE,
    "name": "ironwood-pool",
    "cluster": CLUSTER_ARGS["name"],
    "machine_type": "tpu7x-standard-4t",
    "placement_policy": "wp-2x2x2",
    "autoscaling": {"min_node_count": 0, "max_node_count": 2},
    "reservation_affinity": "NO_RESERVATION",
}


def _worker_node_selector() -> dict[str, str]:
    helm = paths.tool("helm")
    if not helm.exists():
        pytest.skip(f"pinned helm not built at {helm}: run `make tools`")
    values = golden.CHART_DIR / "values" / "tpu7x-2x2x2.yaml"
    done = subprocess.run(
        [str(helm), "template", golden.RELEASE, str(golden.CHART_DIR), "-f", str(values)],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (job,) = [doc for doc in yaml.safe_load_all(done.stdout) if doc and doc["kind"] == "RayJob"]
    (group,) = job["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    assert group["numOfHosts"] == 2
    selector: dict[str, str] = group["template"]["spec"]["nodeSelector"]
    return selector


def test_tpu7x_workers_select_the_nodes_of_a_policy_placed_slice(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    selector = _worker_node_selector()
    assert selector == {tpu.ACCELERATOR_LABEL: "tpu7x", tpu.TOPOLOGY_LABEL: "2x2x2"}
    modules.run("gke_cluster", {**CLUSTER_ARGS, "location": ZONE})
    workload_policy(emulator, PROJECT, "us-central1", "wp-2x2x2", "2x2x2")
    modules.run("gke_node_pool", POOL_ARGS)
    status, body = call(
        emulator,
        "GET",
        f"/v1/projects/{PROJECT}/locations/{ZONE}/clusters/{CLUSTER_ARGS['name']}/nodePools/ironwood-pool",
    )
    assert status == 200, body
    pool = from_gke(body)
    assert (pool.tpu_topology, pool.hosts_per_slice) == ("2x2x2", 2)
    labels = pool.node_labels()
    assert {key: labels.get(key) for key in selector} == selector
    assert pool.matches(selector)


def test_the_cli_creates_a_workload_policy_in_the_running_emulator(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PLANB_STATE_DIR": str(tmp_path), "PLANB_GKE_EMULATOR_PORT": str(port)}

    def planb(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "planb.cli", "local", "gke-emulator", *args]
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)

    create = ["workload-policy", "create", "wp-2x2x2", "--region", "us-central1", "--accelerator-topology", "2x2x2"]
    try:
        started = planb("start", "--op-seconds", "0")
        assert started.returncode == 0, started.stderr
        made = planb(*create, "--project", PROJECT)
        assert made.returncode == 0, made.stderr
        assert made.stdout.strip() == (
            "workload policy projects/planb-test/regions/us-central1/resourcePolicies/wp-2x2x2: HIGH_THROUGHPUT, "
            "accelerator topology 2x2x2"
        )
        url = f"http://127.0.0.1:{port}/compute/v1/projects/{PROJECT}/regions/us-central1/resourcePolicies/wp-2x2x2"
        with urllib.request.urlopen(url) as response:
            policy = json.loads(response.read())
        assert policy["workloadPolicy"] == {"type": "HIGH_THROUGHPUT", "acceleratorTopology": "2x2x2"}
        assert policy["status"] == "READY"
        again = planb(*create, "--project", PROJECT)
        assert again.returncode != 0 and "refused the workload policy" in again.stderr, again.stderr
        assert "already exists" in again.stderr, again.stderr
    finally:
        planb("stop", "--purge")
