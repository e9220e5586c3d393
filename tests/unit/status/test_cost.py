"""`planb status --cost`: chip-hours per job and per team from Kueue's admissions (the goodput's runs) and the
catalog's chips per host, and the cost at the operator's rate; the usage refusals name the option and the fix."""

from __future__ import annotations

import argparse
import re
from typing import Any

import pytest

from planb.errors import UsageError
from planb.status import cli as status_cli
from planb.status import cost
from planb.status.admissions import Admission
from planb.status.goodput import Goodput, Run
from planb.status.report import ConditionInfo, JobStatus, PodSetInfo

T0 = 1_800_000_000.0


def _job(
    name: str,
    namespace: str,
    runs: list[Admission],
    *,
    count: int | None = 4,
    finished: float | None = None,
    now: float = T0 + 7200,
    conditions: list[ConditionInfo] | None = None,
) -> JobStatus:
    job = JobStatus(namespace=namespace, name=name, queue="user-queue", suspended=False, profile="tpu-v6e-4x4")
    if count is not None:
        job.podsets = [PodSetInfo("workers", count, {"google.com/tpu": "dws"}), PodSetInfo("head", 1, {"cpu": "c"})]
    job.conditions = conditions or []
    job.goodput = Goodput(submitted=T0, finished=finished, now=now, runs=[Run(a, [], None) for a in runs])
    return job


def _adm(at: float, waited: float | None = 0.0, checks: float | None = 0.0) -> Admission:
    return Admission(workload="wl", flavor="dws", at=at, waited_s=waited, checks_s=checks)


def test_a_running_job_holds_its_slices_chips_from_admission_to_now() -> None:
    # tpu-v6e-4x4: 4 worker pods (hosts) of 4 chips each, admitted an hour before now.
    found = cost.of_job(_job("job-1", "team-a", [_adm(T0 + 3600)]))
    assert (found.chips, found.runs, found.admitted_s, found.chip_hours) == (16, 1, 3600.0, 16.0)


def test_an_earlier_run_ends_at_its_requeue_and_a_finished_one_at_finished() -> None:
    # Run 1 from T0 to the requeue 600 s before run 2's admission (queued 500 s, provisioning 100 s); run 2 until
    # the Workload's Finished condition, 1800 s later.
    runs = [_adm(T0), _adm(T0 + 2400, waited=500.0, checks=100.0)]
    found = cost.of_job(_job("job-2", "team-a", runs, finished=T0 + 4200))
    assert found.admitted_s == 1800.0 + 1800.0 and not found.upper_bound
    # Without the second run's wait (its Event folded), the first run ends at the second admission: an upper bound.
    bound = cost.of_job(_job("job-2", "team-a", [_adm(T0), _adm(T0 + 2400, waited=None)], finished=T0 + 4200))
    assert bound.admitted_s == 2400.0 + 1800.0 and bound.upper_bound


def test_an_evicted_job_stops_counting_at_its_eviction_and_one_never_admitted_counts_nothing() -> None:
    evicted = [ConditionInfo("Admitted", "False", "Preempted", T0 + 900)]
    assert cost.of_job(_job("job-3", "team-b", [_adm(T0)], conditions=evicted, count=None)).admitted_s == 900.0
    waiting = cost.of_job(_job("job-4", "team-b", [], count=None))
    assert (waiting.runs, waiting.admitted_s, waiting.chips) == (0, 0.0, None)


def test_the_text_and_document_give_chip_hours_per_job_and_team_and_the_cost_at_the_rate() -> None:
    costs = [
        cost.of_job(_job("job-1", "team-a", [_adm(T0 + 3600)])),
        cost.of_job(_job("job-2", "team-a", [_adm(T0 + 5400)])),
        cost.of_job(_job("job-5", "team-b", [_adm(T0)], count=8)),
    ]
    assert cost.teams(costs) == {"team-a": 16.0 + 8.0, "team-b": 64.0}
    out = cost.text(costs, 1.5)
    lines = out.splitlines()
    assert lines[0].split() == ["NAMESPACE", "JOB", "PROFILE", "CHIPS", "RUNS", "ADMITTED", "CHIP-HOURS", "COST"]
    assert lines[1].split() == ["team-a", "job-1", "tpu-v6e-4x4", "16", "1", "1.00h", "16.00", "24.00"]
    assert ["team-a", "24.00", "36.00"] in [line.split() for line in lines]
    assert ["team-b", "64.00", "96.00"] in [line.split() for line in lines]
    assert "--rate-per-chip-hour" in cost.text(costs, None)
    doc = cost.document(costs, 1.5)
    assert doc["teams"] == [
        {"team": "team-a", "chipHours": 24.0, "cost": 36.0},
        {"team": "team-b", "chipHours": 64.0, "cost": 96.0},
    ]


def _args(**over: Any) -> argparse.Namespace:
    base = {"job": None, "output": None, "timeline": None, "capacity": False, "expect": None, "watch": False}
    return argparse.Namespace(**{**base, "cost": True, "rate_per_chip_hour": None, **over})


def test_the_usage_refusals_name_the_option_and_the_fix() -> None:
    with pytest.raises(
        UsageError, match=re.escape("--rate-per-chip-hour prices the chip-hours --cost adds up. Fix: add --cost")
    ):
        status_cli._check_usage(_args(cost=False, rate_per_chip_hour=2.0))
    with pytest.raises(UsageError, match=re.escape("--rate-per-chip-hour -1.0 is negative. Fix: give your price")):
        status_cli._check_usage(_args(rate_per_chip_hour=-1.0))
    with pytest.raises(UsageError, match=re.escape("not with --capacity. Fix: drop one")):
        status_cli._check_usage(_args(capacity=True))
