"""`planb regions keep --in-cluster`: the keeper's Deployment reaches the manager as its pod's
ServiceAccount, as client-go's rest.InClusterConfig does (kubernetes/client-go@v0.34.2 rest/config.go#L543-L571),
and reads no kubeconfig: one in a ConfigMap of Kueue's namespace, as the role wrote before, let whoever writes
ConfigMaps there name a command for the keeper to run (exec), a file for it to send (tokenFile) and the server it
goes to."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from planb import cli
from planb.build.collection import COLLECTION_DIR
from planb.kubeconfig import KubeconfigError, in_cluster
from planb.regions import cli as regions_cli

ENV = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}


def _mounted(folder: Path, namespace: str | None = "kueue-system") -> Path:
    """The files the kubelet mounts for a pod's ServiceAccount."""
    folder.mkdir()
    (folder / "token").write_text("first-token\n")
    (folder / "ca.crt").write_text("-----BEGIN CERTIFICATE-----\n")
    if namespace is not None:
        (folder / "namespace").write_text(namespace)
    return folder


def test_in_cluster_is_the_pods_service_account_as_client_go_reads_it(tmp_path: Path) -> None:
    folder = _mounted(tmp_path / "sa")
    conn = in_cluster(ENV, folder)
    assert (conn.server, conn.namespace) == ("https://10.96.0.1:443", "kueue-system")
    assert conn.ca_file == str(folder / "ca.crt")
    assert (conn.exec_plugin, conn.insecure, conn.cert_file) == (None, False, None)
    assert conn.bearer() == "first-token"
    (folder / "token").write_text("rotated-token\n")  # the kubelet rotates it: read again at every request
    assert conn.bearer() == "rotated-token"
    assert in_cluster({**ENV, "KUBERNETES_SERVICE_HOST": "fd00::1"}, folder).server == "https://[fd00::1]:443"
    assert in_cluster(ENV, _mounted(tmp_path / "bare", namespace=None)).namespace == "default"


def test_in_cluster_outside_a_pod_names_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(KubeconfigError, match="KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset"):
        in_cluster({}, _mounted(tmp_path / "sa"))
    with pytest.raises(KubeconfigError, match="token is missing"):
        in_cluster(ENV, tmp_path / "none")


def test_keep_takes_in_cluster_and_never_with_a_kubeconfig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A kubeconfig that would run a command, in $KUBECONFIG: --in-cluster reads none of it.
    marker = tmp_path / "ran"
    config = {
        "current-context": "c",
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "clusters": [{"name": "c", "cluster": {"server": "https://attacker.example"}}],
        "users": [{"name": "u", "user": {"exec": {"command": "touch", "args": [str(marker)]}}}],
    }
    (tmp_path / "kubeconfig").write_text(yaml.safe_dump(config))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "kubeconfig"))
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    args = cli.build_parser().parse_args(["regions", "keep", "--in-cluster"])
    assert args.in_cluster is True
    monkeypatch.setattr(regions_cli, "in_cluster", lambda: in_cluster(ENV, _mounted(tmp_path / "sa")))
    manager = regions_cli._manager(args)
    assert manager.conn.server == "https://10.96.0.1:443" and manager.conn.exec_plugin is None
    assert manager._headers(None)["Authorization"] == "Bearer first-token"
    assert not marker.exists()
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["regions", "keep", "--in-cluster", "--kubeconfig", "x"])


def test_the_roles_deployment_runs_in_cluster_with_no_kubeconfig_mounted() -> None:
    tasks = yaml.safe_load((COLLECTION_DIR / "roles" / "regions_keeper" / "tasks" / "deployment.yml").read_text())
    [deploy] = [t for t in tasks if (t["kubernetes.core.k8s"].get("definition") or {}).get("kind") == "Deployment"]
    pod = deploy["kubernetes.core.k8s"]["definition"]["spec"]["template"]["spec"]
    assert [v for v in pod["volumes"] if "configMap" in v or "secret" in v] == [], pod["volumes"]
    args = deploy["vars"]["regions_keeper_args"]
    assert "'--in-cluster'" in args and "--kubeconfig" not in args, args
    # The ConfigMap an earlier role wrote is deleted, never written.
    kinds = {(t["kubernetes.core.k8s"].get("kind"), t["kubernetes.core.k8s"].get("state")) for t in tasks}
    assert ("ConfigMap", "absent") in kinds, kinds
    assert not any("ConfigMap" in str(t["kubernetes.core.k8s"].get("definition") or "") for t in tasks)
