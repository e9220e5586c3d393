"""A throwaway etcd and kube-apiserver with the local stack's CRDs, for integration tests that need a real API server
but no stack: etcd starts from the stack's snapshot (made first if this toolchain has none, as `planb local up`
does), on free loopback ports, and is gone when the context ends. Like `planb local up`, it shows the KubeRay operator
in the stack's default layout (planb.local.stack.kuberay_layout: a Deployment in ray-system), which the chart's queues
release records for job releases."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from planb.kube import Kube
from planb.local.stack import crds, kuberay_layout
from planb.local.stack.control_plane import ControlPlane
from planb.local.stack.snapshot import WITHOUT, EtcdSnapshot


@contextlib.contextmanager
def stack_api_server(work: Path) -> Iterator[Path]:
    """The API server's kubeconfig (under `work`), once every CRD of the snapshot is served and the KubeRay operator
    shows in the stack's default layout."""
    snapshot = EtcdSnapshot.for_stack()
    snapshot.make()
    plane = ControlPlane.throwaway(work / "local")
    kubeconfig = work / "local" / "kubeconfig"
    try:
        with snapshot.in_use() as found:
            assert found, f"no etcd snapshot in {snapshot.directory}"
            plane.create(kubeconfig, without=WITHOUT, etcd_from=snapshot.data_dir)
        crds.wait_served(kubeconfig, expected=snapshot.crd_names())
        kuberay_layout.apply(Kube(kubeconfig), *kuberay_layout.from_env({}))
        yield kubeconfig
    finally:
        plane.delete()
