"""`planb status` on each state of the DWS lifecycle, from objects shaped as Kueue v0.19.2 writes them."""

from __future__ import annotations

import datetime
import time
from types import SimpleNamespace
from typing import Any

import pytest

from planb.status import lifecycle
from planb.status.detail import request_hint
from planb.status.durations import duration
from planb.status.render import explain, table
from planb.status.report import collect
from tests.support.shared.status_fakes import FakeKube

Obj = dict[str, Any]
NOW = float(int(time.time()))
WL = "rayjob-job-2-abcde"


@pytest.fixture(autouse=True)
def _clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """`planb status` reads the time once per use: pin it, so the expected durations are exact."""
    monkeypatch.setattr(lifecycle, "time", SimpleNamespace(time=lambda: NOW))


def ts(offset: float) -> str:
    return datetime.datetime.fromtimestamp(NOW + offset, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def cond(kind: str, status: str, reason: str, message: str, at: float) -> Obj:
    return {"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": ts(at)}


def rayjob() -> Obj:
    return {
        "metadata": {
            "namespace": "default",
            "name": "job-2",
            "labels": {"kueue.x-k8s.io/queue-name": "user-queue"},
            "annotations": {"provreq.kueue.x-k8s.io/maxRunDurationSeconds": "20"},
        },
        "spec": {"suspend": True},
    }


def workload(conditions: list[Obj], checks: list[Obj], active: bool = True) -> Obj:
    return {
        "metadata": {
            "namespace": "default",
            "name": WL,
            "creationTimestamp": ts(-60),
            "ownerReferences": [{"kind": "RayJob", "name": "job-2"}],
        },
        "spec": {"active": active},
        "status": {"conditions": conditions, "admissionChecks": checks},
    }


def request(attempt: int, conditions: list[Obj]) -> Obj:
    return {
        "metadata": {
            "namespace": "default",
            "name": f"{WL}-dws-prov-{attempt}",
            "ownerReferences": [{"kind": "Workload", "name": WL}],
        },
        "spec": {"provisioningClassName": "queued-provisioning.gke.io"},
        "status": {"conditions": conditions},
    }


ADMISSION_CHECK = {
    "metadata": {"name": "dws-prov"},
    "spec": {
        "controllerName": "kueue.x-k8s.io/provisioning-request",
        "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "dws-config"},
    },
}


def config(limit: int) -> Obj:
    return {"metadata": {"name": "dws-config"}, "spec": {"retryStrategy": {"backoffLimitCount": limit}}}


def kube(wl: Obj, requests: list[Obj], limit: int = 3, forbidden: bool = False) -> FakeKube:
    return FakeKube(
        {
            "/namespaces/default/rayjobs": [rayjob()],
            "/namespaces/default/workloads": [wl],
            "/namespaces/default/provisioningrequests": requests,
            "/admissionchecks": [ADMISSION_CHECK],
            "/provisioningrequestconfigs": [config(limit)],
        },
        forbidden,
    )


def test_a_queued_request_shows_how_long_it_waited_not_an_eta_retries_and_phases() -> None:
    message = (
        "Waiting for resources. Currently there are not enough resources available to fulfill the request. "
        "Expected time is indefinite."
    )
    wl = workload(
        [cond("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue cluster-queue", -58)],
        [{"name": "dws-prov", "state": "Pending", "message": message}],
    )
    pr = request(
        1,
        [
            cond("Accepted", "True", "SuccessfullyQueued", "Provisioning Request was successfully queued.", -57),
            cond("Provisioned", "False", "ResourcePoolExhausted", message, -57),
        ],
    )
    job = collect(kube(wl, [pr]), "default")[0]  # type: ignore[arg-type]
    text = explain(job)
    assert (
        f"ProvisioningRequest {WL}-dws-prov-1: Queued [queued 57s so far (planb's count)] — ResourcePoolExhausted"
        in text
    )
    assert "ETA " not in text
    assert "admission check dws-prov: Pending (attempt 1 of 4, 3 retries left)" in text
    assert "phases: queued 2s → provisioning 58s (so far)" in text
    assert f"{WL}-dws-prov-1=Queued" in table([job])


def test_a_request_gke_has_not_accepted_shows_gke_s_reason() -> None:
    wl = workload([cond("QuotaReserved", "True", "QuotaReserved", "", -58)], [{"name": "dws-prov", "state": "Pending"}])
    pr = request(1, [cond("Accepted", "False", "NotAccepted", "Provisioning Request wasn't accepted.", -57)])
    text = explain(collect(kube(wl, [pr]), "default")[0])  # type: ignore[arg-type]
    assert f"ProvisioningRequest {WL}-dws-prov-1: Pending — NotAccepted Provisioning Request wasn't accepted." in text


def test_a_two_slice_request_gke_cannot_place_is_explained() -> None:
    """GKE fails a request that fits no one node pool; the status says why a multi-slice job never fits DWS."""
    message = "Max nodepool size reached, affected nodepools: dws-pool, dws-pool-2"
    wl = workload(
        [cond("QuotaReserved", "True", "QuotaReserved", "", -200)],
        [{"name": "dws-prov", "state": "Retry", "message": f"Retrying after failure: {message}"}],
    )
    pr = request(1, [cond("Failed", "True", "NodepoolSizeReached", message, -60)])
    pr["spec"]["podSets"] = [{"podTemplateRef": {"name": "ppt"}, "count": 8}]
    text = explain(collect(kube(wl, [pr]), "default")[0])  # type: ignore[arg-type]
    assert f"ProvisioningRequest {WL}-dws-prov-1: Failed — NodepoolSizeReached {message}" in text
    assert "planb: GKE provisions a request only in one node pool that holds all its 8 pods" in text
    assert "a job of two or more slices never fits a DWS pool" in text


def test_a_request_gke_holds_back_for_a_pool_in_backoff_names_nodepoolinbackoff() -> None:
    """After a failed scale-up GKE backs the pool off; the next request is NodepoolInBackoff, then fails with it."""
    message = "Nodepool in backoff after failed scale-up, affected nodepools: dws-pool"
    failure = "Could not enqueue the Provisioning Request due to insufficient capacity in zone us-east5-b."
    wl = workload(
        [cond("QuotaReserved", "True", "QuotaReserved", "", -200)],
        [{"name": "dws-prov", "state": "Pending", "retryCount": 1}],
    )
    first = request(
        1,
        [
            cond("Accepted", "False", "NotAccepted", "Provisioning Request wasn't accepted.", -199),
            cond("Failed", "True", "QueuingInfeasibleNoCapacity", failure, -199),
        ],
    )
    second = request(2, [cond("Accepted", "False", "NodepoolInBackoff", message, -60)])
    job = collect(kube(wl, [second, first]), "default")[0]  # type: ignore[arg-type]
    text = explain(job)
    assert f"ProvisioningRequest {WL}-dws-prov-1: Failed — QueuingInfeasibleNoCapacity {failure}" in text
    assert f"ProvisioningRequest {WL}-dws-prov-2: Pending — NodepoolInBackoff {message}" in text
    assert "planb: GKE backs a node pool off after a failed scale-up in it" in text
    assert "GKE fails the request two minutes after its creation if no pool takes it by then" in text
    assert f"{WL}-dws-prov-2=Pending" in table([job])

    failed = request(2, [cond("Failed", "True", "NodepoolInBackoff", message, -1)])
    text = explain(collect(kube(wl, [failed]), "default")[0])  # type: ignore[arg-type]
    assert f"ProvisioningRequest {WL}-dws-prov-2: Failed — NodepoolInBackoff {message}" in text
    assert "Kueue retries the request after its own backoff (retryStrategy) while retries are left" in text
    assert request_hint("QueuingInfeasibleNoCapacity", "Failed", 4) == ""


def test_a_retried_request_counts_down_the_retries_and_shows_each_phase() -> None:
    wl = workload(
        [
            cond("QuotaReserved", "True", "QuotaReserved", "", -30),
            cond("Admitted", "True", "Admitted", "", -20),
        ],
        [{"name": "dws-prov", "state": "Ready", "message": "", "retryCount": 1}],
    )
    pr = request(
        2,
        [
            cond("Accepted", "True", "SuccessfullyQueued", "", -29),
            cond("Provisioned", "True", "Provisioned", "Provisioning Request was successfully provisioned.", -21),
        ],
    )
    job = collect(kube(wl, [pr]), "default")[0]  # type: ignore[arg-type]
    assert job.retries["dws-prov"] == lifecycle.Retries(attempt=2, limit=3)
    text = explain(job)
    assert "attempt 2 of 4, 2 retries left" in text
    assert "queued 8s before it was provisioned" in text
    assert "phases: queued 30s → provisioning 10s → admitted 20s (so far)" in text


def test_retries_exhausted_says_so_and_how_to_reactivate_in_one_line() -> None:
    failure = "Could not enqueue the Provisioning Request due to insufficient capacity. (simulated: --fail)"
    wl = workload(
        [
            cond(
                "Evicted",
                "True",
                "DeactivatedDueToAdmissionCheck",
                f'The workload is deactivated due to AdmissionCheck in Rejected state: "dws-prov" ({failure})',
                -5,
            )
        ],
        [],  # a deactivated Workload has released its quota: Kueue lists no admission checks
        active=False,
    )
    job = collect(kube(wl, [], limit=1), "default")[0]  # type: ignore[arg-type]
    assert job.state == "Deactivated"
    lines = [line for line in explain(job).splitlines() if "deactivated:" in line]
    assert len(lines) == 1
    assert "Kueue used up all 2 attempts (retryStrategy.backoffLimitCount=1)" in lines[0]
    assert f"last: {failure}. Once capacity is back" in lines[0]
    assert "phases:" not in explain(job)  # nothing runs: the one line says it all
    assert f"Once capacity is back, queue it again: kubectl delete workload {WL} -n default (" in lines[0]
    assert lines[0].endswith(f"{lifecycle.KUEUE_REACTIVATION_BUG})")


def test_capacity_revoked_says_why_with_the_next_step() -> None:
    revoked = (
        "Capacity provisioned for the Provisioning Request was reclaimed and is no longer available in the cluster."
    )
    wl = workload(
        [
            cond(
                "Evicted",
                "True",
                "DeactivatedDueToAdmissionCheck",
                f'The workload is deactivated due to AdmissionCheck in Rejected state: "dws-prov" ({revoked})',
                -5,
            )
        ],
        [],
        active=False,
    )
    job = collect(kube(wl, []), "default")[0]  # type: ignore[arg-type]
    line = next(line for line in explain(job).splitlines() if "deactivated:" in line)
    assert (
        "DWS revoked its capacity (CapacityRevoked) at the end of its run duration (maxRunDurationSeconds=20)" in line
    )
    assert "it resumes from its last checkpoint" in line and f"kubectl delete workload {WL} -n default" in line


def test_a_workload_someone_deactivated_gets_kueues_reactivation_command() -> None:
    wl = workload([cond("Evicted", "True", "Deactivated", "The workload is deactivated", -5)], [], active=False)
    job = collect(kube(wl, []), "default")[0]  # type: ignore[arg-type]
    line = next(line for line in explain(job).splitlines() if "deactivated:" in line)
    assert line.endswith(f'kubectl patch workload {WL} -n default --type=merge -p \'{{"spec":{{"active":true}}}}\'')


def test_status_without_permission_on_cluster_config_leaves_the_retries_out() -> None:
    wl = workload([], [{"name": "dws-prov", "state": "Pending", "message": ""}])
    job = collect(kube(wl, [], forbidden=True), "default")[0]  # type: ignore[arg-type]
    assert job.retries == {}
    assert "retries left" not in explain(job)


@pytest.mark.parametrize(
    ("attempt", "limit", "left"),
    [(1, 3, 3), (3, 3, 1), (4, 3, 0), (1, 0, 0), (2, 1, 0)],
)
def test_retries_left_follows_kueues_attempt_le_limit_rule(attempt: int, limit: int, left: int) -> None:
    assert lifecycle.Retries(attempt, limit).left == left


def test_attempt_is_read_from_kueues_request_name() -> None:
    assert lifecycle.attempt_of(f"{WL}-dws-prov-12", WL, "dws-prov") == 12
    assert lifecycle.attempt_of(f"{WL}-other-1", WL, "dws-prov") is None


def test_duration_formats() -> None:
    assert [duration(s) for s in (5, 65, 3700, 90000)] == ["5s", "1m05s", "1h01m", "1d01h"]


def test_request_names_sort_by_attempt() -> None:
    wl = workload([], [{"name": "dws-prov", "state": "Pending", "message": ""}])
    prs = [request(n, [cond("Failed", "True", "X", "m", -1)]) for n in (10, 2)]
    job = collect(kube(wl, prs), "default")[0]  # type: ignore[arg-type]
    assert [r.attempt for r in job.requests] == [2, 10]
    assert job.retries["dws-prov"].attempt == 10


def test_a_multi_slice_job_the_chart_kept_off_dws_says_why() -> None:
    reason = "planb's policy: this job of 2 slices x 4 hosts stays off DWS plan(s) dws because Kueue asks ..."
    fake = kube(workload([cond("QuotaReserved", "False", "Pending", "couldn't assign flavors", -58)], []), [])
    fake.objects["/namespaces/default/rayjobs"][0]["metadata"]["annotations"]["planb.dev/off-dws"] = reason
    text = explain(collect(fake, "default")[0])  # type: ignore[arg-type]
    assert text.splitlines()[1] == f"  {reason}"
