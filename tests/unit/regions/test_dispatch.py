"""Advice-ordered dispatch's decisions as Kueue's External dispatcher (planb.regions.dispatcher.nomination): the
pure functions over the API's JSON of each step (reads, decide, writes), no server."""

from __future__ import annotations

import math
from typing import Any

from planb.regions.dispatcher import decide, reads, writes
from planb.regions.dispatcher import nomination as dp
from planb.regions.dispatcher.google_advice import Advice
from planb.regions.dispatcher.job_dispatch import Seen
from planb.regions.dispatcher.ledger import FAILED, Key, Ledger
from planb.regions.dispatcher.offer_order import Attempt, Candidate, Job, Policy, plan

Obj = dict[str, Any]
SHAPE = "ct6e-standard-4t:4"
EAST, WEST, ASIA = (Key(r, "dws", SHAPE) for r in ("us-east5", "europe-west4", "asia-northeast1"))
JOB = Job(checkpoint_interval_s=2700.0, restore_s=600.0)
T0 = 1_800_000_000.0
CHECK = "planb-regions"


def workload(**status: Any) -> Obj:
    checks = status.pop("checks", [{"name": CHECK, "state": "Pending", "lastTransitionTime": "t"}])
    base: Obj = {
        "conditions": [
            {
                "type": "QuotaReserved",
                "status": "True",
                "reason": "QuotaReserved",
                "message": "",
                "lastTransitionTime": "t",
            },
            {"type": "Custom", "status": "True", "reason": "Other", "message": "", "lastTransitionTime": "t"},
        ],
        "admission": {"clusterQueue": "user-cq", "podSetAssignments": [{"name": "workers"}]},
        "admissionChecks": checks,
    }
    return {
        "metadata": {
            "name": "job-1",
            "namespace": "default",
            "uid": "u1",
            "generation": 1,
            "resourceVersion": "42",
            "labels": {"kueue.x-k8s.io/job-uid": "j"},
            "managedFields": [{"manager": "kueue-admission"}],
        },
        "spec": {
            "queueName": "user-queue",
            "podSets": [
                {"name": "head", "count": 1, "template": {"spec": {}}},
                {
                    "name": "workers",
                    "count": 4,
                    "template": {
                        "spec": {
                            "nodeSelector": {
                                "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
                                "cloud.google.com/gke-tpu-topology": "4x4",
                            }
                        }
                    },
                },
            ],
        },
        "status": base | status,
    }


def offer(scores: dict[Key, float | None]) -> Any:
    candidates = [
        Candidate(k, Advice(s) if s is not None else Advice.absent("403 PERMISSION_DENIED")) for k, s in scores.items()
    ]
    return plan(candidates, JOB, Ledger(), T0, Policy())


def test_kueue_nominates_only_a_pending_check_with_quota_and_every_other_check_ready() -> None:
    assert reads.awaits_nomination(workload(), CHECK)
    assert not reads.awaits_nomination(workload(clusterName="us-east5"), CHECK)
    assert not reads.awaits_nomination(workload(checks=[{"name": CHECK, "state": "Ready"}]), CHECK)
    other = [{"name": CHECK, "state": "Pending"}, {"name": "dws-prov", "state": "Pending"}]
    assert not reads.awaits_nomination(workload(checks=other), CHECK)
    no_quota = workload()
    no_quota["status"]["conditions"][0]["status"] = "False"
    assert not reads.awaits_nomination(no_quota, CHECK)


def test_the_jobs_shape_is_its_workers_machine_type_and_count() -> None:
    assert reads.job_shape(workload()) == SHAPE
    assert reads.job_shape({"spec": {"podSets": [{"name": "cpu", "template": {"spec": {}}}]}}) == ""
    assert dp.advice_zones(EAST) and all(z.startswith("us-east5-") for z in dp.advice_zones(EAST))


def test_a_regions_rungs_are_its_clusterqueues_flavors_that_hold_the_accelerator_in_order() -> None:
    def flavor(name: str, tpu: object) -> Obj:
        return {
            "name": name,
            "resources": [{"name": "cpu", "nominalQuota": 8}, {"name": "google.com/tpu", "nominalQuota": tpu}],
        }

    group = {"coveredResources": ["cpu", "memory", "google.com/tpu"]}
    cq = {
        "spec": {
            "resourceGroups": [
                group | {"flavors": [flavor("default-cpu", 0), flavor("reservation", "16"), flavor("dws", 16)]}
            ]
        }
    }
    assert reads.ladder_rungs(cq) == ["reservation", "dws"]
    assert reads.ladder_rungs({}) == []


def test_a_copy_says_no_by_its_check_its_deactivation_a_new_copy_or_an_eviction() -> None:
    copy: Obj = {"metadata": {"uid": "c1"}, "spec": {}, "status": {}}
    assert decide.copy_outcome(None, Seen()) == ("", "")
    assert decide.copy_outcome(copy, Seen("c1", 0)) == ("", "")
    retry = copy | {"status": {"admissionChecks": [{"name": "dws-prov", "state": "Retry", "message": "no capacity"}]}}
    assert decide.copy_outcome(retry, Seen()) == (FAILED, "check dws-prov Retry: no capacity")
    assert decide.copy_outcome(copy | {"spec": {"active": False}}, Seen())[0] == FAILED
    assert decide.copy_outcome(copy, Seen("c0", 0))[0] == FAILED
    evicted = copy | {"status": {"schedulingStats": {"evictions": [{"reason": "AdmissionCheck", "count": 1}]}}}
    assert decide.copy_outcome(evicted, Seen("c1", 0))[0] == FAILED
    assert decide.copy_outcome(evicted, Seen("c1", 1)) == ("", "")


def test_the_best_region_is_nominated_alone_and_the_next_joins_at_its_bound_the_first_staying() -> None:
    best = offer({ASIA: 0.2, WEST: 0.5, EAST: 0.9})
    attempts, regions, wake = decide.nominate(best, 0.0, [])
    assert regions == ["us-east5"] and [a.key for a in attempts] == [EAST]
    bound = best.order[0].bound_s
    assert wake == bound
    same, regions, _ = decide.nominate(best, bound / 2, attempts)
    assert same == attempts and regions == ["us-east5"]
    attempts, regions, _ = decide.nominate(best, bound, attempts)
    assert regions == ["us-east5", "europe-west4"]


def test_a_failure_drops_the_region_and_the_next_joins_at_once() -> None:
    best = offer({ASIA: 0.2, WEST: 0.5, EAST: 0.9})
    attempts, _, _ = decide.nominate(best, 0.0, [])
    attempts, ended = decide.failed(attempts, "us-east5", "dws", 30.0)
    assert ended == [Attempt(EAST, 0.0, 30.0)]
    attempts, regions, _ = decide.nominate(best, 30.0, attempts)
    assert regions == ["europe-west4"]


def test_missing_advice_everywhere_nominates_every_region_at_once_and_asks_a_failed_one_again() -> None:
    race = offer({EAST: None, WEST: None, ASIA: None})
    assert race.race
    attempts, regions, wake = decide.nominate(race, 0.0, [])
    assert set(regions) == {"us-east5", "europe-west4", "asia-northeast1"} and wake == math.inf
    attempts, _ = decide.failed(attempts, "europe-west4", "", 10.0)
    attempts, regions, _ = decide.nominate(race, 10.0, attempts)
    assert "europe-west4" in regions and len(attempts) == 4


def test_a_grant_goes_to_the_pair_of_the_rung_the_copy_was_admitted_on() -> None:
    reservation = Key("us-east5", "reservation", SHAPE)
    attempts = [Attempt(reservation, 0.0), Attempt(EAST, 0.0)]
    assert decide.granted_key(attempts, "us-east5", "dws", SHAPE) == EAST
    assert decide.granted_key(attempts, "us-east5", "", SHAPE) == reservation
    assert decide.granted_key([], "us-east5", "dws", SHAPE) == EAST
    copy = {"status": {"admission": {"podSetAssignments": [{"flavors": {"cpu": "cpu", "google.com/tpu": "dws"}}]}}}
    assert reads.admitted_rung(copy) == "dws" and reads.admitted_rung(None) == ""


def test_the_apply_is_kueues_admission_patch_with_the_nomination_and_takes_nothing_away() -> None:
    wl = workload(requeueState={}, schedulingStats={"evictions": [{"reason": "Preempted", "count": 1}]})
    body = writes.admission_apply(wl, ["us-east5"])
    assert body["apiVersion"] == "kueue.x-k8s.io/v1beta2" and body["kind"] == "Workload"
    meta = body["metadata"]
    assert meta["resourceVersion"] == "42" and meta["uid"] == "u1" and meta["labels"] == wl["metadata"]["labels"]
    assert "managedFields" not in meta and "spec" not in body
    status = body["status"]
    assert status["nominatedClusterNames"] == ["us-east5"]
    assert (
        status["admission"] == wl["status"]["admission"]
        and status["admissionChecks"] == wl["status"]["admissionChecks"]
    )
    assert [c["type"] for c in status["conditions"]] == ["QuotaReserved"]  # another writer's condition stays its own
    assert "requeueState" not in status and status["schedulingStats"] == wl["status"]["schedulingStats"]
    assert "nominatedClusterNames" not in writes.admission_apply(wl, [])["status"]


def test_a_nomination_rewritten_by_another_writer_is_told_from_kueues_own_clearing() -> None:
    assert not decide.rewritten(None, ["us-east5"])  # nothing written yet
    assert not decide.rewritten(["us-east5"], ["us-east5"])
    assert not decide.rewritten(["us-east5"], [])  # Kueue cleared it (admission, eviction)
    assert decide.rewritten(["us-east5"], ["us-east5", "europe-west4", "asia-northeast1"])  # AllAtOnce
