"""The keeper's nomination against a real kube-apiserver with Kueue v0.19.2's Workload CRD: why it
applies as ``kueue-admission`` (planb.regions.dispatcher.writes, docs/regions.md "Advice-ordered dispatch in a
cluster").

Kueue's page says an External dispatcher that writes ``nominatedClusterNames`` under another field manager leaves
Kueue unable to admit (``kubernetes-sigs/kueue@v0.19.2 site/content/en/docs/concepts/multikueue.md#L160-L174``).
Here the API server itself shows it, with no Kueue running: Kueue's own admission apply (``clusterName`` set, the
nomination left out, field manager ``kueue-admission``, as ``kubernetes-sigs/kueue@v0.19.2
pkg/controller/admissionchecks/multikueue/workload.go#L1229-L1251`` sends it) is refused by the CRD's CEL rule after a
merge patch by another manager, and accepted after planb's apply; planb's apply keeps what Kueue wrote.

One throwaway etcd and kube-apiserver from the stack's snapshot (the CRDs in it), as the packaged chart's test starts
them; run it under ``flock /tmp/planb-e2e.lock`` beside other work.
"""

from __future__ import annotations

from typing import Any

import pytest

from planb.kube import Kube, KubeError
from planb.regions.dispatcher import writes

pytestmark = [pytest.mark.tools]

Obj = dict[str, Any]
WORKLOADS = "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads"
APPLY = "application/apply-patch+yaml"
CHECK = "planb-regions"
T = "2026-12-05T08:00:00Z"


@pytest.fixture(scope="module")
def kube(module_kube: Kube) -> Kube:
    """The folder's shared API server (tests/integration/regions/conftest.py)."""
    return module_kube


def apply_status(kube: Kube, name: str, body: Obj, manager: str) -> Obj:
    query = {"fieldManager": manager, "force": "true"}
    return kube.request("PATCH", f"{WORKLOADS}/{name}/status", body, query, content_type=APPLY)


def kueue_apply(workload: Obj, **status: Any) -> Obj:
    """What Kueue's PatchAdmissionStatus sends: the admission part of the status as it holds it (planb's copy of that
    body, with no nomination), changed as ``status`` says."""
    body = writes.admission_apply(workload, [])
    body["status"] |= status
    return body


def reserved(kube: Kube, name: str) -> Obj:
    """A manager Workload as Kueue leaves it before nominating: quota reserved, its MultiKueue check Pending."""
    template = {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    spec = {"queueName": "user-queue", "podSets": [{"name": "main", "count": 1, "template": template}]}
    kube.create(WORKLOADS, {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "metadata": {"name": name},
                            "spec": spec})  # fmt: skip
    workload = kube.get(f"{WORKLOADS}/{name}") or {}
    quota = {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "reserved",
             "lastTransitionTime": T}  # fmt: skip
    admission = {"clusterQueue": "user-cq", "podSetAssignments": [{"name": "main", "count": 1}]}
    check = {"name": CHECK, "state": "Pending", "message": "", "lastTransitionTime": T}
    body = kueue_apply(workload, conditions=[quota], admission=admission, admissionChecks=[check])
    return apply_status(kube, name, body, writes.FIELD_MANAGER)


def admit(kube: Kube, name: str, region: str) -> Obj:
    """Kueue's apply when a region's copy is admitted: the check Ready, clusterName set, the nomination cleared."""
    workload = kube.get(f"{WORKLOADS}/{name}") or {}
    check = {"name": CHECK, "state": "Ready", "message": f'The workload was admitted on "{region}"',
             "lastTransitionTime": T}  # fmt: skip
    return apply_status(
        kube, name, kueue_apply(workload, admissionChecks=[check], clusterName=region), writes.FIELD_MANAGER
    )


def test_planbs_apply_keeps_kueues_status_and_kueue_can_admit_after_it(kube: Kube) -> None:
    before = reserved(kube, "job-1")
    applied = apply_status(
        kube, "job-1", writes.admission_apply(before, ["us-east5", "europe-west4"]), writes.FIELD_MANAGER
    )
    status = applied["status"]
    assert status["nominatedClusterNames"] == ["us-east5", "europe-west4"]
    assert status["admission"] == before["status"]["admission"]
    assert [c["type"] for c in status["conditions"]] == ["QuotaReserved"]
    assert status["admissionChecks"][0]["state"] == "Pending"
    narrowed = apply_status(kube, "job-1", writes.admission_apply(applied, ["europe-west4"]), writes.FIELD_MANAGER)
    assert narrowed["status"]["nominatedClusterNames"] == ["europe-west4"]
    admitted = admit(kube, "job-1", "europe-west4")["status"]
    assert admitted["clusterName"] == "europe-west4" and "nominatedClusterNames" not in admitted
    assert admitted["admission"] == before["status"]["admission"]


def test_a_stale_resource_version_is_a_conflict_not_a_lost_write(kube: Kube) -> None:
    before = reserved(kube, "job-2")
    apply_status(kube, "job-2", writes.admission_apply(before, ["us-east5"]), writes.FIELD_MANAGER)
    with pytest.raises(KubeError) as refused:
        apply_status(kube, "job-2", writes.admission_apply(before, ["europe-west4"]), writes.FIELD_MANAGER)
    assert refused.value.status == 409


def test_a_nomination_written_by_another_field_manager_leaves_kueue_unable_to_admit(kube: Kube) -> None:
    reserved(kube, "job-3")
    kube.request(
        "PATCH",
        f"{WORKLOADS}/job-3/status",
        {"status": {"nominatedClusterNames": ["us-east5"]}},
        {"fieldManager": "someone-else"},
        content_type="application/merge-patch+json",
    )
    with pytest.raises(KubeError) as refused:
        admit(kube, "job-3", "us-east5")
    assert refused.value.status == 422
    assert "clusterName and nominatedClusterNames are mutually exclusive" in str(refused.value)
