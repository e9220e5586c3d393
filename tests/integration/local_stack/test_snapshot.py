"""The etcd snapshot: keyed by what it holds, made once, and a control plane started from it serves its CRDs."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from planb import paths
from planb.kube import Kube
from planb.local.stack import crds, kwokctl_config
from planb.local.stack.control_plane import ControlPlane
from planb.local.stack.errors import LocalStackError
from planb.local.stack.kwokctl_config import SINGLE_INSTANCE
from planb.local.stack.snapshot import DATABASE, EtcdSnapshot, snapshot_key, switched_off

PROVISIONING_REQUESTS = "provisioningrequests.autoscaling.x-k8s.io"


def test_the_snapshot_key_follows_the_crd_files_their_names_and_the_toolchain(tmp_path: Path) -> None:
    one, two = tmp_path / "a" / "one.yaml", tmp_path / "a" / "two.yaml"
    one.parent.mkdir()
    one.write_text("kind: CustomResourceDefinition\n")
    two.write_text("kind: CustomResourceDefinition\n")
    versions = b"KUBERNETES_VERSION=v1.34.12\nETCD_VERSION=v3.6.16\n"
    key = snapshot_key([one], versions)
    assert key == snapshot_key([one], bytes(versions))  # the same inputs, the same snapshot
    assert snapshot_key([two], versions) != key  # the same bytes under another name
    assert snapshot_key([one, two], versions) != key  # one more CRD
    assert snapshot_key([one], versions.replace(b"v1.34.12", b"v1.34.13")) != key  # another toolchain
    one.write_text("kind: CustomResourceDefinition\nspec: {}\n")
    assert snapshot_key([one], versions) != key  # the file changed


def test_the_snapshot_key_follows_the_throwaway_control_planes_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    crd = tmp_path / "one.yaml"
    crd.write_text("kind: CustomResourceDefinition\n")
    key = snapshot_key([crd], b"")
    monkeypatch.setitem(kwokctl_config.API_SERVER_ARGS, "watch-cache-sizes", "")  # another API server flag
    assert snapshot_key([crd], b"") != key


@pytest.mark.parametrize(
    ("environ", "off"),
    [
        ({}, None),
        ({"PLANB_ETCD_SNAPSHOT": "on"}, None),
        ({"PLANB_ETCD_SNAPSHOT": "off"}, "PLANB_ETCD_SNAPSHOT"),
        ({"PLANB_ETCD_SEED": "off"}, "PLANB_ETCD_SEED"),  # the name before the rename still works
        ({"PLANB_ETCD_SEED": "on"}, None),
        ({"PLANB_ETCD_SNAPSHOT": "on", "PLANB_ETCD_SEED": "off"}, None),  # the new name wins
        ({"PLANB_ETCD_SNAPSHOT": "off", "PLANB_ETCD_SEED": "on"}, "PLANB_ETCD_SNAPSHOT"),
    ],
)
def test_snapshots_are_switched_off_by_the_new_name_or_the_old(environ: dict[str, str], off: str | None) -> None:
    assert switched_off(environ) == off


def test_an_interrupted_making_is_cleared_before_the_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANB_TOOLS_DIR", str(tmp_path / "no-tools"))
    snapshot = EtcdSnapshot((), tmp_path / "snapshots")
    left = snapshot.root / ".making-1234"
    (left / "state").mkdir(parents=True)
    (left / "state" / "admin.key").write_text("a key an interrupted making left")
    partial = snapshot.directory / "etcd"
    partial.mkdir(parents=True)  # no database, no names: not a snapshot
    assert not snapshot.exists()
    with pytest.raises(LocalStackError, match="the pinned binary"):  # no toolchain here: this making fails at once
        snapshot.make()
    assert not left.exists() and not snapshot.directory.exists()
    assert not list(snapshot.root.glob(".making-*"))


def test_the_stacks_snapshot_holds_every_crd_it_installs() -> None:
    if not paths.manifests_dir().is_dir():
        pytest.skip("needs the toolchain's manifests (make tools)")
    snapshot = EtcdSnapshot.for_stack()
    assert snapshot.manifests == tuple(crds.files())
    assert not any(path.name in crds.SKIPPED_CRDS for path in snapshot.manifests)
    assert snapshot.directory.parent == paths.tools_dir().resolve() / "etcd-snapshots"


@pytest.mark.tools
@pytest.mark.slow
def test_a_control_plane_started_from_a_snapshot_serves_its_crds_before_anything_is_applied(tmp_path: Path) -> None:
    manifest = paths.manifests_dir() / "provisioningrequest"
    snapshot = EtcdSnapshot(tuple(sorted(manifest.glob("*.yaml"))), tmp_path / "snapshots")
    assert not snapshot.exists()
    assert snapshot.make() is True
    assert (snapshot.data_dir / DATABASE).is_file()
    assert snapshot.crd_names() == {PROVISIONING_REQUESTS}
    assert snapshot.make() is False  # made once
    assert [p.name for p in snapshot.root.iterdir() if not p.name.startswith(".")] == [snapshot.directory.name]
    assert not list(snapshot.root.glob(".making-*"))  # the throwaway control plane is gone
    plane = ControlPlane.throwaway(tmp_path / "local")
    kubeconfig = tmp_path / "local" / "kubeconfig"
    try:
        plane.create(kubeconfig, etcd_from=snapshot.data_dir)
        kube = Kube(kubeconfig)
        deadline = time.monotonic() + 30
        while not crds.served(kube, {PROVISIONING_REQUESTS}) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert crds.served(kube, {PROVISIONING_REQUESTS}) == {PROVISIONING_REQUESTS}
        crd = kube.get(f"{crds.CRDS}/{PROVISIONING_REQUESTS}")
        assert crd is not None
        established = [c for c in crd["status"]["conditions"] if c["type"] == "Established"]
        assert established and established[0]["status"] == "True", crd["status"]
        # The snapshot's throwaway control plane ran no controller-manager or scheduler, and this one's elect no leader
        # (planb.local.stack.kwokctl_config.SINGLE_INSTANCE): once the controller-manager has made the default
        # namespace's service account, no leader lease exists, neither one carried in the snapshot nor a new one.
        account = "/api/v1/namespaces/default/serviceaccounts/default"
        deadline = time.monotonic() + 60
        while kube.get(account) is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert kube.get(account) is not None
        for name in SINGLE_INSTANCE:
            assert kube.get(f"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{name}") is None, name
        # A snapshot goes only into a new cluster's etcd.
        with pytest.raises(LocalStackError, match="a snapshot goes only into a new cluster"):
            plane.create(kubeconfig, etcd_from=snapshot.data_dir)
    finally:
        plane.delete()
    assert not plane.component_pids()
