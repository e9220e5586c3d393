"""The etcd seed: keyed by what it holds, made once, and a control plane started from it serves its CRDs."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from planb import paths
from planb.kube import Kube
from planb.local.stack import control_plane, crds
from planb.local.stack.control_plane import ControlPlane
from planb.local.stack.errors import LocalStackError
from planb.local.stack.seed import DATABASE, EtcdSeed, free_port, seed_key

PROVISIONING_REQUESTS = "provisioningrequests.autoscaling.x-k8s.io"


def test_the_seed_key_follows_the_crd_files_their_names_and_the_toolchain(tmp_path: Path) -> None:
    one, two = tmp_path / "a" / "one.yaml", tmp_path / "a" / "two.yaml"
    one.parent.mkdir()
    one.write_text("kind: CustomResourceDefinition\n")
    two.write_text("kind: CustomResourceDefinition\n")
    versions = b"KUBERNETES_VERSION=v1.34.12\nETCD_VERSION=v3.6.16\n"
    key = seed_key([one], versions)
    assert key == seed_key([one], bytes(versions))  # the same inputs, the same seed
    assert seed_key([two], versions) != key  # the same bytes under another name
    assert seed_key([one, two], versions) != key  # one more CRD
    assert seed_key([one], versions.replace(b"v1.34.12", b"v1.34.13")) != key  # another toolchain
    one.write_text("kind: CustomResourceDefinition\nspec: {}\n")
    assert seed_key([one], versions) != key  # the file changed


def test_the_seed_key_follows_the_throwaway_control_planes_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    crd = tmp_path / "one.yaml"
    crd.write_text("kind: CustomResourceDefinition\n")
    key = seed_key([crd], b"")
    monkeypatch.setitem(control_plane.API_SERVER_ARGS, "watch-cache-sizes", "")  # another API server flag
    assert seed_key([crd], b"") != key


def test_an_interrupted_making_is_cleared_before_the_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANB_TOOLS_DIR", str(tmp_path / "no-tools"))
    seed = EtcdSeed((), tmp_path / "seeds")
    left = seed.root / ".making-1234"
    (left / "state").mkdir(parents=True)
    (left / "state" / "admin.key").write_text("a key an interrupted making left")
    partial = seed.directory / "etcd"
    partial.mkdir(parents=True)  # no database, no names: not a seed
    assert not seed.exists()
    with pytest.raises(LocalStackError, match="the pinned binary"):  # no toolchain here: this making fails at once
        seed.make()
    assert not left.exists() and not seed.directory.exists()
    assert not list(seed.root.glob(".making-*"))


def test_the_stack_seeds_from_every_crd_it_installs() -> None:
    if not paths.manifests_dir().is_dir():
        pytest.skip("needs the toolchain's manifests (make tools)")
    seed = EtcdSeed.for_stack()
    assert seed.manifests == tuple(crds.files())
    assert not any(path.name in crds.SKIPPED_CRDS for path in seed.manifests)
    assert seed.directory.parent == paths.tools_dir().resolve() / "etcd-seeds"


@pytest.mark.tools
@pytest.mark.slow
def test_a_control_plane_started_from_a_seed_serves_its_crds_before_anything_is_applied(tmp_path: Path) -> None:
    manifest = paths.manifests_dir() / "provisioningrequest"
    seed = EtcdSeed(tuple(sorted(manifest.glob("*.yaml"))), tmp_path / "seeds")
    assert not seed.exists()
    assert seed.make() is True
    assert (seed.data_dir / DATABASE).is_file()
    assert seed.crd_names() == {PROVISIONING_REQUESTS}
    assert seed.make() is False  # made once
    assert [p.name for p in seed.root.iterdir() if not p.name.startswith(".")] == [seed.directory.name]
    assert not list(seed.root.glob(".making-*"))  # the throwaway control plane is gone
    plane = ControlPlane(tmp_path / "local", apiserver_port=free_port())
    kubeconfig = tmp_path / "local" / "kubeconfig"
    try:
        plane.create(kubeconfig, etcd_from=seed.data_dir)
        kube = Kube(kubeconfig)
        deadline = time.monotonic() + 30
        while not crds.served(kube, {PROVISIONING_REQUESTS}) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert crds.served(kube, {PROVISIONING_REQUESTS}) == {PROVISIONING_REQUESTS}
        crd = kube.get(f"{crds.CRDS}/{PROVISIONING_REQUESTS}")
        assert crd is not None
        established = [c for c in crd["status"]["conditions"] if c["type"] == "Established"]
        assert established and established[0]["status"] == "True", crd["status"]
        # The seed's throwaway control plane ran no controller-manager or scheduler: this one's take their leader
        # leases new (a lease left by a holder of the seed's would be taken over, a transition, after it expired).
        for name in ("kube-controller-manager", "kube-scheduler"):
            path = f"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{name}"
            deadline = time.monotonic() + 60
            while kube.get(path) is None and time.monotonic() < deadline:
                time.sleep(0.2)
            lease = kube.get(path)
            assert lease is not None, name
            assert lease["spec"].get("leaseTransitions", 0) == 0, lease
        # A seed goes only into a new cluster's etcd.
        with pytest.raises(LocalStackError, match="a seed goes only into a new cluster"):
            plane.create(kubeconfig, etcd_from=seed.data_dir)
    finally:
        plane.delete()
    assert not plane.component_pids()
