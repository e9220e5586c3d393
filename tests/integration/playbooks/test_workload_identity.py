"""Checkpoints that can really be written: Workload Identity Federation for GKE on the cluster,
the GKE metadata server on the pools, and GPU pools with GKE's driver installation setting."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from planb.local.gke_emulator.emulator import RunningEmulator
from planb.local.gke_emulator.store import list_clusters, list_node_pools
from tests.support.integration.gke.modules import CLUSTER, PROJECT, ModuleRunner, ansible_playbook

POOL: dict[str, Any] = {
    "name": "tpu-pool",
    "cluster": CLUSTER,
    "machine_type": "ct6e-standard-4t",
    "tpu_topology": "4x4",
    "autoscaling": {"min_node_count": 0, "max_node_count": 4},
    "reservation_affinity": "NO_RESERVATION",
}
GPU_POOL: dict[str, Any] = {
    "name": "gpu-pool",
    "cluster": CLUSTER,
    "machine_type": "a3-highgpu-8g",
    "accelerator_type": "nvidia-h100-80gb",
    "accelerator_count": 8,
    "autoscaling": {"min_node_count": 0, "max_node_count": 2},
}


def test_cluster_gets_the_project_workload_pool_in_place(modules: ModuleRunner) -> None:
    modules.run("gke_cluster", {"name": CLUSTER, "version": "1.34"})
    turned_on = modules.run("gke_cluster", {"name": CLUSTER, "version": "1.34", "workload_identity": True})
    assert turned_on["actions"] == ["desiredWorkloadIdentityConfig"]
    assert turned_on["cluster"]["workloadIdentityConfig"] == {"workloadPool": f"{PROJECT}.svc.id.goog"}
    assert (
        modules.run("gke_cluster", {"name": CLUSTER, "version": "1.34", "workload_identity": True})["changed"] is False
    )
    off = modules.run("gke_cluster", {"name": CLUSTER, "version": "1.34", "workload_identity": False})
    assert off["cluster"]["workloadIdentityConfig"] == {"workloadPool": ""}


def test_created_with_workload_identity_the_default_pool_runs_the_metadata_server(modules: ModuleRunner) -> None:
    created = modules.run("gke_cluster", {"name": CLUSTER, "version": "1.34", "workload_identity": True})
    default_pool = created["cluster"]["nodePools"][0]
    assert default_pool["config"]["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}


def test_gke_metadata_needs_a_workload_pool(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    modules.run("gke_cluster", {"name": CLUSTER, "version": "1.34"})
    refused = modules.fail("gke_node_pool", {**POOL, "workload_metadata_mode": "GKE_METADATA"})
    assert "needs Workload Identity Federation on cluster" in refused["msg"] and "Nothing was sent" in refused["msg"]
    # The emulator refuses it as GKE documents, whoever sends it.
    body = {"nodePool": {"name": "direct", "config": {"workloadMetadataConfig": {"mode": "GKE_METADATA"}}}}
    url = f"{emulator.url}/v1/projects/{PROJECT}/locations/us-east5-b/clusters/{CLUSTER}/nodePools"
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"}
    )
    try:
        urllib.request.urlopen(request)
        raise AssertionError("the emulator accepted GKE_METADATA on a cluster without a workload pool")
    except urllib.error.HTTPError as exc:
        error = json.loads(exc.read())["error"]
    assert error["code"] == 400 and "can only be enabled if Workload Identity is enabled" in error["message"]
    assert "https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodeConfig" in error["message"]


def test_pool_gets_the_metadata_server_in_place(modules: ModuleRunner) -> None:
    modules.run("gke_cluster", {"name": CLUSTER, "version": "1.34", "workload_identity": True})
    modules.run("gke_node_pool", POOL)
    updated = modules.run("gke_node_pool", {**POOL, "workload_metadata_mode": "GKE_METADATA"})
    assert updated["actions"] == ["update"]
    assert updated["node_pool"]["config"]["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
    assert modules.run("gke_node_pool", {**POOL, "workload_metadata_mode": "GKE_METADATA"})["changed"] is False


def test_gpu_pool_sends_accelerators_with_the_driver_setting(modules: ModuleRunner) -> None:
    modules.run("gke_cluster", {"name": CLUSTER, "version": "1.34"})
    created = modules.run("gke_node_pool", GPU_POOL)
    assert created["node_pool"]["config"]["accelerators"] == [
        {
            "acceleratorType": "nvidia-h100-80gb",
            "acceleratorCount": "8",
            "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"},
        }
    ]
    assert modules.run("gke_node_pool", GPU_POOL)["changed"] is False
    latest = modules.fail("gke_node_pool", {**GPU_POOL, "gpu_driver_version": "LATEST"})
    assert (
        "planb's policy: accelerator_type / accelerator_count / gpu_driver_version of node pool gpu-pool is not "
        "changed in place" in latest["msg"]
    )


def test_accelerator_inputs_are_checked_before_any_request(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    wrong_count = modules.fail("gke_node_pool", {**GPU_POOL, "accelerator_count": 4})
    assert (
        "accelerator_count 4 does not match machine type a3-highgpu-8g, which comes with 8 GPUs" in wrong_count["msg"]
    )
    on_tpu = modules.fail("gke_node_pool", {**POOL, "accelerator_type": "nvidia-h100-80gb", "accelerator_count": 1})
    assert "cannot be attached to TPU machine type ct6e-standard-4t" in on_tpu["msg"]
    assert emulator.store.request_log() == []


def test_playbook_turns_on_workload_identity_and_fills_gpu_accelerators(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    env = {"GKE_API_ENDPOINT": emulator.url, "PLANB_STATE_DIR": str(tmp_path / "state")}
    done = ansible_playbook(
        "playbooks/cluster.yml", "-i", "inventories/local", "-e", "planb_profile=gpu-a3-h100-8", env=env
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    state = emulator.store.root.parent
    (cluster,) = list_clusters(state)
    assert cluster["workloadIdentityConfig"] == {"workloadPool": "planb-local.svc.id.goog"}
    pools = [p for p in list_node_pools(state) if p["name"] != "default-pool"]
    assert len(pools) == 2
    for pool in pools:
        assert pool["config"]["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
        assert pool["config"]["accelerators"] == [
            {
                "acceleratorType": "nvidia-h100-80gb",
                "acceleratorCount": "8",
                "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"},
            }
        ]
