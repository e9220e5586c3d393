"""Node pool fields GKE can update in place (container v1 UpdateNodePoolRequest) that planb does not.

GKE's nodePools.update takes machineType, accelerators, flexStart, queuedProvisioning and maxRunDuration.
gke_node_pool sends maxRunDuration (tests/integration/gke_emulator/test_modules.py, test_update_in_place); the
other four are refused before any write as planb's policy, each saying why, since a planb pool's shape and plan
come from its profile and its plan's Kueue flavor. The emulator answers an update of those four that it does not apply
with an error instead of ignoring it.
"""

from __future__ import annotations

from typing import Any

import pytest

from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.gke_api import call
from tests.support.integration.gke.modules import CLUSTER, CLUSTER_ARGS, DWS_ARGS, LOCATION, PROJECT, ModuleRunner

CPU_POOL: dict[str, Any] = {
    "name": "cpu-pool",
    "cluster": CLUSTER,
    "machine_type": "e2-standard-4",
    "autoscaling": {"min_node_count": 0, "max_node_count": 2},
}
GPU_POOL: dict[str, Any] = {
    "name": "gpu-pool",
    "cluster": CLUSTER,
    "machine_type": "a3-highgpu-8g",
    "accelerator_type": "nvidia-h100-80gb",
    "accelerator_count": 8,
    "autoscaling": {"min_node_count": 0, "max_node_count": 2},
}


@pytest.mark.parametrize(
    ("pool", "change", "option", "why"),
    [
        (CPU_POOL, {"machine_type": "e2-standard-8"}, "machine_type", "comes from its profile"),
        (GPU_POOL, {"gpu_driver_version": "LATEST"}, "accelerator_type / accelerator_count", "from its profile"),
        (DWS_ARGS, {"queued_provisioning": False}, "queued_provisioning", "ProvisioningRequests"),
        (
            {**DWS_ARGS, "queued_provisioning": False, "name": "flex-pool"},
            {"flex_start": False},
            "flex_start",
            "provisioning model",
        ),
    ],
    ids=["machine type", "accelerators", "queued provisioning", "flex-start"],
)
def test_fields_gke_updates_in_place_are_refused_as_planbs_policy(
    modules: ModuleRunner,
    emulator: RunningEmulator,
    pool: dict[str, Any],
    change: dict[str, Any],
    option: str,
    why: str,
) -> None:
    modules.run("gke_cluster", CLUSTER_ARGS)
    modules.run("gke_node_pool", pool)
    writes = len(emulator.writes())
    message = modules.fail("gke_node_pool", {**pool, **change})["msg"]
    assert message.startswith(f"planb's policy: {option}"), message
    assert "is not changed in place" in message and "because" in message and why in message, message
    assert "delete the node pool and re-run" in message, message
    assert len(emulator.writes()) == writes


def test_the_emulator_refuses_an_update_it_does_not_apply(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    modules.run("gke_cluster", CLUSTER_ARGS)
    modules.run("gke_node_pool", CPU_POOL)
    path = f"/v1/projects/{PROJECT}/locations/{LOCATION}/clusters/{CLUSTER}/nodePools/cpu-pool"
    status, answer = call(emulator, "PUT", path, {"machineType": "e2-standard-8", "flexStart": True})
    assert status == 501 and answer["error"]["status"] == "UNIMPLEMENTED", answer
    assert answer["error"]["message"] == (
        "nodePools.update of flexStart, machineType is not implemented by the emulator"
    ), answer
    status, pool = call(emulator, "GET", path)
    assert status == 200 and pool["config"]["machineType"] == "e2-standard-4"
