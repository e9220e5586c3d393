"""The regions folder's API-server tests (test_dispatch_apply.py, test_keeper_rejoin_api.py,
test_status_preconditions.py) share one throwaway API server (tests/support/integration/api_server.py), started once
for the folder: starting one costs about 20 s of CPU beside the e2e tier. Each module's `kube` fixture
(`module_kube`) hands it over as the module found it after the one before: with no Workload, RayJob or RayCluster in
`default`, where they all make theirs."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from planb.kube import Kube, KubeError
from tests.support.integration.api_server import stack_api_server

#: What the modules make in `default`; each goes when its module ends (finalizers a test left are dropped first).
MADE = (
    "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads",
    "/apis/ray.io/v1/namespaces/default/rayjobs",
    "/apis/ray.io/v1/namespaces/default/rayclusters",
)


@pytest.fixture(scope="package")
def regions_api_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A throwaway etcd and kube-apiserver from the stack's snapshot (KubeRay's and Kueue's CRDs in it); its
    kubeconfig."""
    with stack_api_server(tmp_path_factory.mktemp("regions-api-server")) as kubeconfig:
        _wait_listable(Kube(kubeconfig))
        yield kubeconfig


def _wait_listable(kube: Kube, seconds: float = 60) -> None:
    """Until each of MADE lists: the API server answers 429 "storage is (re)initializing" while a resource's watch
    cache fills (k8s.io/apiserver pkg/storage/cacher, ready.go), which a CRD's may still do once it is served."""
    deadline = time.monotonic() + seconds
    for path in MADE:
        while True:
            try:
                kube.items(path)
                break
            except KubeError as exc:
                if exc.status != 429 or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)


def leave_clean(kube: Kube) -> None:
    """Remove every Workload, RayJob and RayCluster in `default`, finalizers and all, and wait until they are gone."""
    for path in MADE:
        for item in kube.items(path):
            name = item["metadata"]["name"]
            if item["metadata"].get("finalizers"):
                kube.merge_patch(f"{path}/{name}", {"metadata": {"finalizers": None}})
            kube.delete(f"{path}/{name}")
    left = [item["metadata"]["name"] for path in MADE for item in kube.items(path)]
    assert left == [], f"still in default after the module: {left}"


@pytest.fixture(scope="module")
def module_kube(regions_api_server: Path) -> Iterator[Kube]:
    """The shared API server for one module; what the module made in `default` goes when it ends."""
    kube = Kube(regions_api_server)
    yield kube
    leave_clean(kube)
