"""What a merge patch to a custom resource's ``/status`` takes as a precondition on a real kube-apiserver:
the keeper's release patch (planb.regions.keeper.release.release_patch) suspends the manager RayJob through
its status subresource, and must not suspend a RayJob recreated under the name meanwhile.

The API server replaces the patched object's metadata with the stored one on a custom resource's status update
(``kubernetes/apiextensions-apiserver@v0.34.2 pkg/registry/customresource/status_strategy.go#L66-L90``), so a
``metadata.uid`` in the patch is dropped, not checked; the ``metadata.resourceVersion`` is compared before that
(``kubernetes/apiserver@v0.34.2 pkg/registry/generic/registry/store.go#L735-L736``): 409 when it differs. Shown here
on RayJob (KubeRay v1.6.2's CRD) and Workload (Kueue v0.19.2's), as the stack's snapshot holds them.

One throwaway etcd and kube-apiserver from the stack's snapshot (the CRDs in it), as
tests/integration/regions/test_dispatch_apply.py starts them; run it under ``flock /tmp/planb-e2e.lock``.
"""

from __future__ import annotations

from typing import Any

import pytest

from planb.kube import Kube, KubeError
from planb.regions.keeper import release

pytestmark = [pytest.mark.tools]

Obj = dict[str, Any]
RAYJOBS = "/apis/ray.io/v1/namespaces/default/rayjobs"
WORKLOADS = "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads"
MERGE = "application/merge-patch+json"
WRONG_UID = "00000000-0000-0000-0000-000000000000"


@pytest.fixture(scope="module")
def kube(module_kube: Kube) -> Kube:
    """The folder's shared API server (tests/integration/regions/conftest.py)."""
    return module_kube


def rayjob(kube: Kube, name: str, state: str = "Running") -> Obj:
    """A manager RayJob as Kueue leaves it after an eviction: suspended, its status still reading ``state``."""
    body = {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": name}, "spec": {"suspend": True}}
    kube.create(RAYJOBS, body)
    kube.merge_patch(f"{RAYJOBS}/{name}/status", {"status": {"jobDeploymentStatus": state}})
    return kube.get(f"{RAYJOBS}/{name}") or {}


def deployment(kube: Kube, name: str) -> str:
    return str(((kube.get(f"{RAYJOBS}/{name}") or {}).get("status") or {}).get("jobDeploymentStatus", ""))


def patch_status(kube: Kube, path: str, body: Obj) -> Obj:
    return kube.request("PATCH", f"{path}/status", body, content_type=MERGE)


def test_a_wrong_uid_in_a_status_merge_patch_is_no_precondition(kube: Kube) -> None:
    """Why the keeper no longer preconditions its release on the uid: the wrong uid is dropped and the status
    written anyway (no 409), the object's uid unchanged; on a Workload's /status alike."""
    before = rayjob(kube, "job-uid")
    patched = patch_status(
        kube, f"{RAYJOBS}/job-uid", {"metadata": {"uid": WRONG_UID}, "status": {"jobDeploymentStatus": "Suspended"}}
    )
    assert patched["metadata"]["uid"] == before["metadata"]["uid"] != WRONG_UID
    assert deployment(kube, "job-uid") == "Suspended"
    template = {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    spec = {"queueName": "user-queue", "podSets": [{"name": "main", "count": 1, "template": template}]}
    kube.create(WORKLOADS, {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
                            "metadata": {"name": "wl-uid"}, "spec": spec})  # fmt: skip
    patched = patch_status(
        kube, f"{WORKLOADS}/wl-uid", {"metadata": {"uid": WRONG_UID}, "status": {"nominatedClusterNames": ["a"]}}
    )
    assert patched["metadata"]["uid"] != WRONG_UID
    assert patched["status"]["nominatedClusterNames"] == ["a"]


def test_a_stale_resource_version_in_a_status_merge_patch_is_refused_and_changes_nothing(kube: Kube) -> None:
    read = rayjob(kube, "job-rv")
    kube.merge_patch(f"{RAYJOBS}/job-rv/status", {"status": {"message": "changed after the keeper read it"}})
    with pytest.raises(KubeError) as refused:
        patch_status(kube, f"{RAYJOBS}/job-rv", release.release_patch(read) or {})
    assert refused.value.status == 409
    assert deployment(kube, "job-rv") == "Running"
    now = kube.get(f"{RAYJOBS}/job-rv") or {}
    patch_status(kube, f"{RAYJOBS}/job-rv", release.release_patch(now) or {})
    assert deployment(kube, "job-rv") == "Suspended"


def test_the_keepers_release_patch_does_not_suspend_a_rayjob_recreated_under_the_name(kube: Kube) -> None:
    """The case the precondition is for: the keeper read the RayJob, it was deleted and another made under the
    name before the patch: 409, and the new one still reads what it read."""
    read = rayjob(kube, "job-new")
    assert kube.delete(f"{RAYJOBS}/job-new")
    again = rayjob(kube, "job-new")
    assert again["metadata"]["uid"] != read["metadata"]["uid"]
    with pytest.raises(KubeError) as refused:
        patch_status(kube, f"{RAYJOBS}/job-new", release.release_patch(read) or {})
    assert refused.value.status == 409
    assert deployment(kube, "job-new") == "Running"
