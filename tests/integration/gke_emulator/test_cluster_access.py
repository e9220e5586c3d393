"""A RUNNING cluster's endpoint and CA (planb.local.gke_emulator.access).

GKE's Cluster carries ``endpoint`` and ``masterAuth.clusterCaCertificate`` (base64 PEM) once it runs
(container.v1.json); gcloud's ``clusters create`` and ``get-credentials`` refuse or warn without them. The
emulator gives the local stack's API server and CA while its kubeconfig exists, and otherwise the local API
server's address and a CA of its own kept in its state folder.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from planb.local.gke_emulator import access
from planb.local.gke_emulator.access import LOCAL_APISERVER
from planb.local.gke_emulator.emulator import RunningEmulator
from planb.local.stack.kwokctl_config import APISERVER_PORT, BIND_ADDRESS
from planb.local.tls import ensure_serving_cert
from tests.support.integration.gke.gke_api import call, create

PROJECT, ZONE, CLUSTER = "planb-access", "us-east5-b", "tpu-cluster"
LOCATION = f"projects/{PROJECT}/locations/{ZONE}"
CLUSTER_PATH = f"/v1/{LOCATION}/clusters/{CLUSTER}"


def _serve(state: Path, kubeconfig: Path) -> RunningEmulator:
    return RunningEmulator(state, port=0, op_seconds=0.0, kubeconfig=kubeconfig)


@pytest.fixture
def running(tmp_path: Path) -> Iterator[RunningEmulator]:
    emulator = _serve(tmp_path / "state", tmp_path / "local" / "kubeconfig")
    create(emulator, LOCATION, f"{LOCATION}/clusters", {"cluster": {"name": CLUSTER, "initialClusterVersion": "1.34"}})
    yield emulator
    emulator.stop()


def _access(emulator: RunningEmulator) -> tuple[str, bytes]:
    status, cluster = call(emulator, "GET", CLUSTER_PATH)
    assert status == 200 and cluster["status"] == "RUNNING", cluster
    return cluster["endpoint"], base64.b64decode(cluster["masterAuth"]["clusterCaCertificate"])


def test_the_local_api_server_address_is_the_local_stacks() -> None:
    assert f"{BIND_ADDRESS}:{APISERVER_PORT}" == LOCAL_APISERVER


def test_without_the_local_stack_a_cluster_reads_the_local_address_and_the_emulators_own_ca(
    tmp_path: Path, running: RunningEmulator
) -> None:
    endpoint, ca = _access(running)
    assert endpoint == LOCAL_APISERVER
    kept = tmp_path / "state" / "gke-emulator" / "cluster-ca" / "ca.crt"
    assert ca == kept.read_bytes() and ca.startswith(b"-----BEGIN CERTIFICATE-----")
    # The same CA after the emulator restarts on its state: it is kept, not made anew per request or start.
    running.stop()
    again = _serve(tmp_path / "state", tmp_path / "local" / "kubeconfig")
    try:
        assert _access(again) == (LOCAL_APISERVER, ca)
    finally:
        again.stop()


@pytest.mark.parametrize("form", ["file, absolute", "file, relative", "data"])
def test_with_the_local_stack_a_cluster_reads_its_server_and_ca(
    tmp_path: Path, running: RunningEmulator, form: str
) -> None:
    local = tmp_path / "local"
    stack_ca = ensure_serving_cert(local / "pki", common_name="stack").ca_crt
    if form == "data":
        ca_entry = {"certificate-authority-data": base64.b64encode(stack_ca.read_bytes()).decode()}
    else:
        ca_entry = {"certificate-authority": str(stack_ca if form == "file, absolute" else "pki/ca.crt")}
    kubeconfig = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "other", "cluster": {"server": "https://127.0.0.1:1"}},
            {"name": "planb", "cluster": {"server": "https://127.0.0.1:27443", **ca_entry}},
        ],
        "contexts": [{"name": "planb", "context": {"cluster": "planb", "user": "admin"}}],
        "current-context": "planb",
    }
    (local / "kubeconfig").write_text(yaml.safe_dump(kubeconfig))
    assert _access(running) == ("127.0.0.1:27443", stack_ca.read_bytes())


def test_the_kubeconfig_is_read_again_only_when_it_or_its_ca_file_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = tmp_path / "local"
    stack_ca = ensure_serving_cert(local / "pki", common_name="stack").ca_crt
    kubeconfig = local / "kubeconfig"

    def write(port: int) -> None:
        cluster = {"server": f"https://127.0.0.1:{port}", "certificate-authority": "pki/ca.crt"}
        kubeconfig.write_text(yaml.safe_dump({"clusters": [{"name": "planb", "cluster": cluster}]}))

    parsed: list[str] = []
    load = yaml.safe_load
    monkeypatch.setattr(access.yaml, "safe_load", lambda text: parsed.append(text) or load(text))
    write(27443)
    first = access.from_kubeconfig(kubeconfig)
    assert (
        first
        == access.from_kubeconfig(kubeconfig)
        == access.ClusterAccess("127.0.0.1:27443", base64.b64encode(stack_ca.read_bytes()).decode())
    )
    assert len(parsed) == 1  # the second call read neither file
    write(28443)  # the stack came up again on another port
    assert first is not None
    assert access.from_kubeconfig(kubeconfig) == access.ClusterAccess("127.0.0.1:28443", first.ca_data)
    stack_ca.write_bytes(b"another CA\n")
    assert access.from_kubeconfig(kubeconfig) == access.ClusterAccess(
        "127.0.0.1:28443", base64.b64encode(b"another CA\n").decode()
    )
    kubeconfig.unlink()
    assert access.from_kubeconfig(kubeconfig) is None
    assert len(parsed) == 3
