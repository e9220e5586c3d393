"""`planb status --expect` stops at once when a job can no longer land where it is expected."""

from __future__ import annotations

import argparse
import time

import pytest

from planb.kube import Kube
from planb.status import expect as expect_mod
from planb.status.report import JobStatus, PodSetInfo, why_it_cannot_run


def job(name: str, state: str, flavor: str, active: bool = True, deactivated: str = "") -> JobStatus:
    return JobStatus(
        namespace="default",
        name=name,
        queue="planb-lq",
        suspended=False,
        state=state,
        podsets=[PodSetInfo(name="workers", count=4, flavors={"google.com/tpu": flavor})],
        active=active,
        deactivated=deactivated,
    )


def test_why_a_job_finished_on_another_plan_or_deactivated_cannot_run_there() -> None:
    assert (
        why_it_cannot_run(job("job-1", "Finished", "on-demand"), "reserved")
        == "job-1 finished on on-demand, not reserved"
    )
    assert why_it_cannot_run(job("job-2", "Pending", "-", active=False, deactivated="retries used up"), "dws") == (
        "job-2 was deactivated: retries used up"
    )
    # Still possible: admitted elsewhere for now (failover may move it), pending, finished where wanted.
    assert why_it_cannot_run(job("job-1", "Admitted", "on-demand"), "dws") == ""
    assert why_it_cannot_run(job("job-1", "Pending", "-"), "dws") == ""
    assert why_it_cannot_run(job("job-1", "Finished", "dws"), "dws") == ""


def test_expect_fails_within_seconds_when_waiting_cannot_help(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    looks: list[float] = []

    def collect(_kube: Kube, _namespace: str | None) -> list[JobStatus]:
        looks.append(time.monotonic())
        return [job("job-1", "Finished", "on-demand"), job("job-2", "Pending", "-")]

    monkeypatch.setattr(expect_mod, "collect", collect)
    args = argparse.Namespace(expect=["job-1=reserved", "job-2=on-demand"], timeout=600.0, namespace="default")
    start = time.monotonic()
    assert expect_mod.expect(Kube.__new__(Kube), args) == 1
    assert time.monotonic() - start < 5 and len(looks) == 1, "it waited for a job that had already finished"
    out = capsys.readouterr().out
    assert "not as expected, and waiting cannot change it: job-1 finished on on-demand, not reserved" in out
