"""The first run on a real project, rehearsed (docs/first-run.md): an operator's fresh virtual environment with only
what the first-run page installs (`.operator-venv`: requirements.lock alone, made by `make setup` through
hack/operator-venv.sh), the collection's tarball, a copy of inventories/gke, and the tarball's cluster playbook, all
outside the checkout, against the GKE emulator set up as a locked-down project: the caller lacks a right it needs,
and the preemptible quota DWS flex-start pools consume is 0.

Preflight refuses first, naming the right and its role, with nothing written; once the emulator grants it, the play
converges the cluster and plan A and names plan B's pool, which waits for the preemptible quota (quota gates
the pools that draw on it, not the cluster); once that is granted too, the pool is created, and after GKE upgrades
the cluster on its release channel a further run changes nothing (GKE_VERSION is a floor). What the emulator does
not model of a locked-down project (an organisation policy that forbids the default network or external IPs) is
Google-only and written down in docs/first-run.md section 4; the inventory names a network, a subnetwork and private
nodes, as such a project needs, and the cluster body carries them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb import paths
from planb.build import collection_tarball
from planb.local.gke_emulator.emulator import RunningEmulator
from planb.local.gke_emulator.store import list_clusters, list_node_pools
from tests.support.integration.gke.gke_api import call

OPERATOR_BIN = paths.REPO / ".operator-venv" / "bin"
PROJECT = "rehearsal-project"
PLAYBOOK = "- name: planb's cluster and plans\n  ansible.builtin.import_playbook: planb.gke.cluster\n"
WITHHELD = "container.clusters.create"


#: The operations poll of these runs: the emulator finishes an operation in 0.05 s, where the inventory's Google pace
#: (planb_gke_poll_interval: 10) would only wait, about 30 s of this test.
POLL_SECONDS = 0.2


def _switch(emulator: RunningEmulator, path: str, body: dict[str, Any]) -> None:
    """Set one of the emulator's project switches (planb's own /planb/v1 paths)."""
    assert call(emulator, "POST", path, body)[0] == 200


@pytest.fixture
def controller(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """The operator's folder (tarball installed, inventory, playbook) and an environment that knows no checkout."""
    if not (OPERATOR_BIN / "ansible-playbook").is_file():
        pytest.fail(f"{OPERATOR_BIN.parent} is missing: `make setup` makes it (hack/operator-venv.sh)")
    home = tmp_path / "operator"
    home.mkdir()
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR")
    env = {key: value for key, value in os.environ.items() if key in keep}
    env.update(HOME=str(home), ANSIBLE_NOCOLOR="1", ANSIBLE_CONFIG=str(home / "ansible.cfg"))
    (home / "ansible.cfg").write_text(
        "[defaults]\ncollections_path = ./collections\ninterpreter_python = auto_silent\n"
    )
    tarball = collection_tarball.build(home / "dist")
    installed = subprocess.run(
        [str(OPERATOR_BIN / "ansible-galaxy"), "collection", "install", str(tarball), "-p", str(home / "collections")],
        cwd=home, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stdout + installed.stderr
    shutil.copytree(paths.REPO / "inventories" / "gke", home / "inventory")
    (home / "cluster.yml").write_text(PLAYBOOK)
    yield home, env


def test_a_locked_down_project_is_refused_before_any_write_then_converges_once_granted(
    controller: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    home, env = controller
    # Only requirements.lock is in the operator's environment: not planb, not the test tools.
    bare = subprocess.run([str(OPERATOR_BIN / "python"), "-c", "import planb"], capture_output=True, check=False)
    assert bare.returncode != 0
    emulator = RunningEmulator(tmp_path / "emulator", port=0, op_seconds=0.05, kubeconfig=tmp_path / "none")
    try:
        _switch(emulator, "/planb/v1/permissions", {"project": PROJECT, "permission": WITHHELD, "granted": False})
        quota = {
            "project": PROJECT,
            "region": "us-east5",
            "machineType": "ct6e-standard-4t",
            "quotaType": "preemptible",
        }
        _switch(emulator, "/planb/v1/quotas", {**quota, "value": 0})
        env.update(
            PROJECT_ID=PROJECT, ZONE="us-east5-b", GKE_API_ENDPOINT=emulator.url, GCP_AUTH_KIND="none",
            NETWORK="planb-net", SUBNETWORK="planb-subnet", MASTER_IPV4_CIDR="172.16.0.32/28",
        )  # fmt: skip

        def play(*extra: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [str(OPERATOR_BIN / "ansible-playbook"), "-i", "inventory", "cluster.yml",
                 "-e", "planb_private_nodes=true", "-e", f"planb_gke_poll_interval={POLL_SECONDS}", *extra],
                cwd=home, env=env, capture_output=True, text=True, timeout=300, check=False,
            )  # fmt: skip

        rights = play()
        out = " ".join((rights.stdout + rights.stderr).split())
        assert rights.returncode != 0, out[-3000:]
        assert f"Missing rights on project {PROJECT}" in out, out[-3000:]
        assert f"{WITHHELD} (role roles/container.admin or roles/container.clusterAdmin)" in out, out[-3000:]
        assert emulator.writes() == []

        _switch(emulator, "/planb/v1/permissions", {"project": PROJECT, "permission": WITHHELD, "granted": True})
        # Asked to create the cluster anyway (else the run stops before it, tests/integration/playbooks), the
        # preemptible quota gates plan B's pool, not the CPU cluster: the run converges the cluster and plan A, and
        # names the pool that waits for Google's approval with the request link.
        quota_short = play("-e", "planb_quota_create_anyway=true")
        out = " ".join((quota_short.stdout + quota_short.stderr).split())
        assert quota_short.returncode == 0, out[-3000:]
        assert "Quota too low for the preemptible plans" in out and "can take days" in out, out[-3000:]
        assert "Waiting for quota: pool dws-pool of plan dws (dws) was not created" in out, out[-3000:]
        state = emulator.store.root.parent
        assert sorted(p["name"] for p in list_node_pools(state)) == ["default-pool", "on-demand-pool"]

        _switch(emulator, "/planb/v1/quotas", {**quota, "value": 64})
        # The network's Cloud NAT made by the play this time: a router of planb-net with a NAT.
        _switch(emulator, "/planb/v1/networks", {"project": PROJECT, "name": "planb-net", "subnetworks": []})
        converged = play("-e", "planb_cloud_nat_create=true")
        assert converged.returncode == 0, converged.stdout[-4000:] + converged.stderr[-2000:]
        assert sorted(p["name"] for p in list_node_pools(state)) == ["default-pool", "dws-pool", "on-demand-pool"]
        clusters = list_clusters(emulator.store.root.parent)
        assert [c["name"] for c in clusters] == ["tpu-cluster"]
        cluster = clusters[0]
        assert (cluster["network"], cluster["subnetwork"]) == ("planb-net", "planb-subnet"), cluster
        network = cluster["networkConfig"]
        assert network["datapathProvider"] == "ADVANCED_DATAPATH"
        assert network.get("defaultEnablePrivateNodes") is True, network
        # inventories/gke's labels and cost allocation.
        assert cluster["resourceLabels"] == {"managed-by": "planb", "planb-cluster": "tpu-cluster"}, cluster
        assert cluster["costManagementConfig"] == {"enabled": True}, cluster
        status, router = call(
            emulator, "GET", f"/compute/v1/projects/{PROJECT}/regions/us-east5/routers/planb-nat-router"
        )
        assert status == 200 and router["network"].endswith("/networks/planb-net"), router
        assert [nat["name"] for nat in router["nats"]] == ["planb-nat"], router
        # docs/first-run.md, 6: the kubeconfig every later command reads, as `gcloud container clusters
        # get-credentials` writes it (the plugin's token exchange is Google-only).
        written = yaml.safe_load((home / ".kube" / "planb-tpu-cluster.yaml").read_text())
        where = f"/v1/projects/{PROJECT}/locations/{cluster['location']}/clusters/tpu-cluster"
        status, served = call(emulator, "GET", where)
        assert status == 200, served
        assert written["clusters"][0]["cluster"] == {
            "server": f"https://{served['endpoint']}",
            "certificate-authority-data": served["masterAuth"]["clusterCaCertificate"],
        }
        assert written["users"][0]["user"]["exec"]["command"] == "gke-gcloud-auth-plugin"
        # GKE upgrades the cluster on its release channel between two runs: GKE_VERSION is a floor,
        # so the next run changes nothing.
        _switch(emulator, "/planb/v1/upgrades", {"cluster": where.removeprefix("/v1/"), "version": "1.35"})
        writes = len(emulator.writes())
        again = play()
        assert again.returncode == 0, again.stdout[-4000:]
        assert "changed=0" in again.stdout, again.stdout[-3000:]
        assert len(emulator.writes()) == writes
    finally:
        emulator.stop()
