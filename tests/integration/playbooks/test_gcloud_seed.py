"""The seed's own gcloud commands, run by the real Google Cloud SDK against the emulator, as a new user runs them.

The seed (Google's tutorial https://cloud.google.com/kubernetes-engine/docs/tutorials/ray-kueue-dws) runs, in
this order: ``clusters create``, ``clusters get-credentials``, ``node-pools create`` for plan A and for plan B,
``node-pools describe --format="get(config.flexStart)"`` and, to clean up, ``clusters delete``. Here gcloud
reaches the emulator through its documented endpoint overrides (the properties
``api_endpoint_overrides/container`` and ``api_endpoint_overrides/serviceusage``, set as ``CLOUDSDK_*``
environment variables, both at the emulator's root URL), with a throwaway configuration folder and an access
token file, so nothing of the user's own gcloud is read or written.

Each command must exit 0 and warn of nothing: not of a missing endpoint or certificate authority (a RUNNING
cluster has both), nor of a failed check of the Container File System API (image streaming's Service Usage
check). The local stack is down here, so the cluster reads the local API server's address and the emulator's
own CA. Only gcloud's absence skips it.
"""

from __future__ import annotations

import base64
import os
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb.local.gke_emulator.access import LOCAL_APISERVER
from planb.local.gke_emulator.emulator import RunningEmulator
from planb.local.gke_emulator.store import list_clusters, list_node_pools

pytestmark = [
    pytest.mark.skipif(
        shutil.which("gcloud") is None,
        reason="the Google Cloud SDK's gcloud is not installed: this test runs the seed's commands with the real CLI",
    ),
]

# The seed's variables, filled in.
PROJECT_ID, ZONE, CLUSTER_NAME = "planb-seed", "us-east5-b", "tpu-cluster"
GKE_VERSION, ONDEMAND_NODEPOOL, DWS_NODEPOOL = "1.34", "on-demand-pool", "dws-pool"
CLUSTER = f"projects/{PROJECT_ID}/locations/{ZONE}/clusters/{CLUSTER_NAME}"

#: What gcloud must never say here: the three warnings a user met before the emulator gave a RUNNING cluster
#: its endpoint and CA and served Service Usage at its root (gcloud's lib/googlecloudsdk/api_lib/container/util.py:
#: MissingEndpointError, ClusterConfig.Persist, CheckForContainerFileSystemApiEnablementWithPrompt).
FORBIDDEN = (
    "is missing endpoint",
    "missing certificate authority data",
    "Failed to check if Container File System API",
)


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[RunningEmulator]:
    """The emulator with operations done at once: gcloud polls an unfinished operation only every 5 s."""
    running = RunningEmulator(tmp_path / "state", port=0, op_seconds=0.0, kubeconfig=tmp_path / "no-local-stack")
    yield running
    running.stop()


@pytest.fixture
def gcloud_env(tmp_path: Path, emulator: RunningEmulator) -> dict[str, str]:
    """gcloud's environment: a throwaway configuration, both APIs at the emulator, no prompts or phoning home."""
    token = tmp_path / "access-token"
    token.write_text("planb-local-token\n")
    env = {key: value for key, value in os.environ.items() if not key.startswith("CLOUDSDK_")}
    env.update(
        CLOUDSDK_CONFIG=str(tmp_path / "gcloud-config"),
        CLOUDSDK_CORE_DISABLE_PROMPTS="1",
        CLOUDSDK_CORE_DISABLE_USAGE_REPORTING="1",
        CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK="1",
        CLOUDSDK_CORE_CHECK_GCE_METADATA="false",
        CLOUDSDK_AUTH_ACCESS_TOKEN_FILE=str(token),
        CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER=f"{emulator.url}/",
        CLOUDSDK_API_ENDPOINT_OVERRIDES_SERVICEUSAGE=f"{emulator.url}/",
        # The seed reads PROJECT_ID from `gcloud config get project`: the same property, core/project.
        CLOUDSDK_CORE_PROJECT=PROJECT_ID,
        KUBECONFIG=str(tmp_path / "kubeconfig"),
    )
    return env


#: The seed's commands, verbatim with its variables filled in (the flags of both pool commands as the seed has them).
CREATE_CLUSTER = f"""gcloud container clusters create {CLUSTER_NAME} --cluster-version={GKE_VERSION}
    --machine-type=n2-standard-16 --location={ZONE} --enable-image-streaming --addons=RayOperator
    --project={PROJECT_ID}"""
GET_CREDENTIALS = f"gcloud container clusters get-credentials {CLUSTER_NAME} --location={ZONE} --project={PROJECT_ID}"
CREATE_ONDEMAND_POOL = f"""gcloud container node-pools create {ONDEMAND_NODEPOOL} --cluster={CLUSTER_NAME}
    --location={ZONE} --machine-type=ct6e-standard-4t --tpu-topology=4x4 --reservation-affinity=none
    --enable-autoscaling --num-nodes=0 --min-nodes=0 --max-nodes=4"""
CREATE_DWS_POOL = f"""gcloud container node-pools create {DWS_NODEPOOL} --cluster={CLUSTER_NAME}
    --location={ZONE} --machine-type=ct6e-standard-4t --tpu-topology=4x4 --reservation-affinity=none
    --enable-autoscaling --enable-queued-provisioning --flex-start --num-nodes=0 --min-nodes=0 --max-nodes=4"""
DESCRIBE_DWS_POOL = f"""gcloud container node-pools describe {DWS_NODEPOOL} --cluster={CLUSTER_NAME}
    --location={ZONE} --format='get(config.flexStart)'"""
DELETE_CLUSTER = f"gcloud container clusters delete {CLUSTER_NAME} --location={ZONE} --project={PROJECT_ID} --quiet"


def gcloud(env: dict[str, str], command: str) -> str:
    """Run one seed command (split as a shell splits it); assert it exited 0 and warned of nothing; its stdout."""
    proc = subprocess.run(shlex.split(command), env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{command} exited {proc.returncode}:\n{proc.stderr}"
    for phrase in FORBIDDEN:
        assert phrase not in proc.stderr, proc.stderr
    complaints = [line for line in proc.stderr.splitlines() if line.startswith(("WARNING:", "ERROR:", "CRITICAL:"))]
    assert not complaints, proc.stderr
    return proc.stdout


def _stored_pool(state: Path, name: str) -> dict[str, Any]:
    (pool,) = [p for p in list_node_pools(state, cluster=CLUSTER) if p["name"] == name]
    return pool


def test_the_seeds_gcloud_sequence_runs_against_the_emulator(
    tmp_path: Path, emulator: RunningEmulator, gcloud_env: dict[str, str]
) -> None:
    state = tmp_path / "state"
    gcloud(gcloud_env, CREATE_CLUSTER)
    (cluster,) = list_clusters(state)
    assert cluster["status"] == "RUNNING"
    assert cluster["addonsConfig"]["rayOperatorConfig"] == {"enabled": True}
    assert cluster["nodePoolDefaults"]["nodeConfigDefaults"]["gcfsConfig"] == {"enabled": True}
    # Image streaming's check asked Service Usage at the API's own path, under the emulator's root URL.
    checked = {(r["path"], r["status"]) for r in emulator.store.request_log()}
    assert (f"/v1/projects/{PROJECT_ID}/services/containerfilesystem.googleapis.com", 200) in checked

    gcloud(gcloud_env, GET_CREDENTIALS)
    kubeconfig = yaml.safe_load(Path(gcloud_env["KUBECONFIG"]).read_text())
    (entry,) = kubeconfig["clusters"]
    assert entry["name"] == f"gke_{PROJECT_ID}_{ZONE}_{CLUSTER_NAME}"
    assert entry["cluster"]["server"] == f"https://{LOCAL_APISERVER}"
    # The CA gcloud wrote is the one the emulator keeps in its state folder while the local stack is down.
    ca_pem = base64.b64decode(entry["cluster"]["certificate-authority-data"])
    assert ca_pem == (state / "gke-emulator" / "cluster-ca" / "ca.crt").read_bytes()
    assert ca_pem.startswith(b"-----BEGIN CERTIFICATE-----")
    # What cannot work locally: the user authenticates through Google's plugin (docs/local-mode.md).
    assert kubeconfig["users"][0]["user"]["exec"]["command"] == "gke-gcloud-auth-plugin"

    gcloud(gcloud_env, CREATE_ONDEMAND_POOL)
    gcloud(gcloud_env, CREATE_DWS_POOL)
    on_demand, dws = _stored_pool(state, ONDEMAND_NODEPOOL), _stored_pool(state, DWS_NODEPOOL)
    for pool in (on_demand, dws):
        assert pool["status"] == "RUNNING"
        assert pool["config"]["machineType"] == "ct6e-standard-4t"
        assert pool["placementPolicy"] == {"tpuTopology": "4x4"}
        assert pool["config"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
        assert pool["autoscaling"]["minNodeCount"] == 0 and pool["autoscaling"]["maxNodeCount"] == 4
    assert "flexStart" not in on_demand["config"] and "queuedProvisioning" not in on_demand
    assert dws["config"]["flexStart"] is True and dws["queuedProvisioning"] == {"enabled": True}

    assert gcloud(gcloud_env, DESCRIBE_DWS_POOL).strip() == "True"

    gcloud(gcloud_env, DELETE_CLUSTER)
    assert list_clusters(state) == [] and list_node_pools(state) == []
    assert yaml.safe_load(Path(gcloud_env["KUBECONFIG"]).read_text())["clusters"] == []
    assert all(r["status"] == 200 for r in emulator.store.request_log()), emulator.store.request_log()
