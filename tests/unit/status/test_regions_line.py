"""`planb status`'s REGION line on a MultiKueue manager (planb.status.regions.Dispatch.line), and which Workloads'
regions it reads (planb.status.gather.is_dispatched)."""

from __future__ import annotations

from planb.status.gather import is_dispatched
from planb.status.regions import Dispatch, RegionCopy

WAITING = "Waiting for resources. Currently there are not enough resources available to fulfill the request."


def test_a_won_job_names_its_region_and_why_every_other_region_lost() -> None:
    won = Dispatch(
        "asia-northeast1",
        [RegionCopy("asia-northeast1", "admitted", ["dws-prov=Ready"]), RegionCopy("us-east5", "lost"),
         RegionCopy("europe-west4", "lost")],
    )  # fmt: skip
    assert won.line() == (
        "runs in asia-northeast1 (admitted there first); us-east5, europe-west4 lost: "
        "not granted before asia-northeast1 was"
    )


def test_a_racing_job_says_how_each_region_stands_with_its_first_check() -> None:
    racing = Dispatch(
        "",
        [RegionCopy("us-east5", "waiting", [f"dws-prov=Pending: {WAITING}"]), RegionCopy("europe-west4", "no copy"),
         RegionCopy("asia-northeast1", "unreadable: connection refused")],
    )  # fmt: skip
    assert racing.line() == (
        f"waits in every region: us-east5 waiting (dws-prov=Pending: {WAITING}); europe-west4 no copy; "
        "asia-northeast1 unreadable: connection refused"
    )


def test_only_a_workload_multikueue_nominated_or_placed_is_dispatched() -> None:
    assert is_dispatched({"status": {"nominatedClusterNames": ["us-east5"]}})
    assert is_dispatched({"status": {"clusterName": "us-east5"}})
    assert not is_dispatched({"status": {"admissionChecks": [{"name": "dws-prov", "state": "Pending"}]}})
    assert not is_dispatched({})


def test_a_won_job_names_the_rung_its_region_admitted_it_on() -> None:
    won = Dispatch(
        "us-east5", [RegionCopy("us-east5", "admitted", ["dws-prov=Ready"], "dws"), RegionCopy("eu", "lost")]
    )
    assert won.line() == "runs in us-east5 on rung dws (admitted there first); eu lost: not granted before us-east5 was"
