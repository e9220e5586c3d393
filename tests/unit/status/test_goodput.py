"""`planb status JOB`'s goodput: per run the flavor, the wait for admission, the provisioning, the training kept and
the steps lost, and in total the training kept over the wall time since submission. The objects are shaped as
Kueue v0.19.2, GKE's ProvisioningRequests and the kubelet's log API give them (planb.status.goodput cites where);
the logs are train.py's own lines (training/planb_train/progress.py)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from planb.kube import KubeError
from planb.kube_objects import parse_time
from planb.status import admissions, gather, goodput, trainlog
from planb.status.render import explain, table
from planb.status.report import KUEUE, collect
from tests.support.shared.status_fakes import FakeKube
from tests.support.shared.workload_objects import admitted, condition, event, reserved, variant

Obj = dict[str, Any]
NOW = "2026-11-29T10:05:00Z"
PARENT = "rayjob-job-c-parent"

# The second run's submitter log, as `kubectl logs --timestamps` gives it: the run on dws resumed from step 120
# after the spot run had reached 121 (1 step lost), then trained to step 200.
LOG = """\
2026-11-29T10:02:20.000000000Z Job submission server address: http://job-c-head-svc:8265
2026-11-29T10:02:24.000000000Z Resumed from checkpoint step 120 in /ckpt
2026-11-29T10:02:24.100000000Z resumed from checkpoint step 120; 1 step(s) lost
2026-11-29T10:02:24.100000000Z training time up to step 120: 100.0 s kept; the 1 lost step(s) took 0.8 s
2026-11-29T10:02:30.000000000Z Epoch 120: Loss 0.0123
2026-11-29T10:02:30.000000000Z training time up to step 121: 101.2 s kept
2026-11-29T10:03:50.000000000Z Epoch 200: Loss 0.0101
2026-11-29T10:03:50.000000000Z training time up to step 201: 180.4 s kept
"""


def _variant(flavor: str, conds: list[Obj], active: bool = True) -> Obj:
    return variant(f"rayjob-job-c-{flavor}", flavor, PARENT, conds, active)


RAYJOB = {
    "metadata": {
        "namespace": "default",
        "name": "job-c",
        "creationTimestamp": "2026-11-29T10:00:00Z",
        "labels": {"kueue.x-k8s.io/queue-name": "user-queue"},
    },
    "spec": {"suspend": False},
    "status": {"rayClusterName": "job-c-raycluster"},
}
PARENT_WL = {
    "metadata": {
        "namespace": "default",
        "name": PARENT,
        "creationTimestamp": "2026-11-29T10:00:00Z",
        "labels": {gather.PARENT_LABEL: "true"},
        "ownerReferences": [{"kind": "RayJob", "name": "job-c"}],
    },
    "spec": {"active": True},
    "status": {
        "conditions": [condition("Admitted", "True", "2026-11-29T10:02:15Z")],
        "admission": {
            "clusterQueue": "cluster-queue",
            "podSetAssignments": [{"name": "workers", "count": 1, "flavors": {"google.com/tpu": "dws"}}],
        },
    },
}
# Spot admitted within 3 s, then evicted for the migration and deactivated; dws waited for its quota, then for
# its ProvisioningRequest (2 s), and runs now. Kueue's conditions keep only the latest transitions: spot's
# admission is in its Events alone.
SPOT = _variant(
    "spot",
    [
        condition("QuotaReserved", "False", "2026-11-29T10:02:08Z"),
        condition("Admitted", "False", "2026-11-29T10:02:08Z"),
    ],
    active=False,
)
DWS = _variant(
    "dws",
    [condition("QuotaReserved", "True", "2026-11-29T10:02:13Z"), condition("Admitted", "True", "2026-11-29T10:02:15Z")],
)
EVENTS = [
    reserved("rayjob-job-c-spot", "2026-11-29T10:00:03.100000Z", 2),
    admitted("rayjob-job-c-spot", "2026-11-29T10:00:03.200000Z", 0),
    event("EvictedDueToFlavorMigration", "rayjob-job-c-spot", "2026-11-29T10:02:08.000000Z", "Evicted"),
    reserved("rayjob-job-c-dws", "2026-11-29T10:02:13.500000Z", 132),
    admitted("rayjob-job-c-dws", "2026-11-29T10:02:15.300000Z", 2),
]
REQUEST = {
    "metadata": {
        "namespace": "default",
        "name": "rayjob-job-c-dws-dws-prov-1",
        "creationTimestamp": "2026-11-29T10:02:13Z",
        "ownerReferences": [{"kind": "Workload", "name": "rayjob-job-c-dws"}],
    },
    "status": {
        "conditions": [
            condition("Accepted", "True", "2026-11-29T10:02:13Z"),
            condition("Provisioned", "True", "2026-11-29T10:02:15Z"),
        ]
    },
}
SUBMITTER = {
    "metadata": {
        "namespace": "default",
        "name": "job-c-abcde",
        "creationTimestamp": "2026-11-29T10:02:18Z",
        "labels": {"job-name": "job-c"},
    },
    "spec": {},
    "status": {"phase": "Running"},
}
FLAVORS = [
    {"metadata": {"name": flavor}, "spec": {"nodeLabels": {"planb.dev/plan": plan}}}
    for flavor, plan in (("spot", "spot"), ("dws", "dws"))
]


class _Kube(FakeKube):
    def __init__(self, objects: dict[str, list[Obj]], logs: dict[str, str]) -> None:
        super().__init__(objects)
        self.logs = logs

    def get(self, path: str, query: dict[str, str] | None = None) -> Obj | None:
        if path == f"{KUEUE}/clusterqueues/cluster-queue":
            return {"spec": {"resourceGroups": [{"flavors": [{"name": "dws"}, {"name": "spot"}]}]}}
        return None

    def text(self, path: str, query: dict[str, str] | None = None) -> str:
        for pod, log in self.logs.items():
            if path == f"/api/v1/namespaces/default/pods/{pod}/log":
                assert query is not None and query.pop("timestamps") == "true"
                if "limitBytes" in query:  # the kubelet cuts at the byte, mid-line
                    return log.encode()[: int(query["limitBytes"])].decode(errors="ignore")
                return "".join(log.splitlines(keepends=True)[-int(query["tailLines"]) :])
        raise KubeError(404, "Not Found", "{}")


def _job_c(logs: dict[str, str], monkeypatch: pytest.MonkeyPatch, pods: list[Obj] | None = None) -> Any:
    monkeypatch.setattr(time, "time", lambda: parse_time(NOW))  # "now" for the wall time and the phases
    kube = _Kube(
        {
            "/rayjobs": [RAYJOB],
            "/workloads": [PARENT_WL, SPOT, DWS],
            "/events": EVENTS,
            "/provisioningrequests": [REQUEST],
            "/pods": [SUBMITTER] if pods is None else pods,
            "/resourceflavors": FLAVORS,
        },
        logs,
    )
    [job] = collect(kube, "default", "job-c", goodput=True)  # type: ignore[arg-type]
    return job


def _block(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  goodput"))
    return lines[start:]


def test_two_runs_one_move_one_step_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    job = _job_c({"job-c-abcde": LOG}, monkeypatch)
    assert _block(explain(job)) == [
        "  goodput 60.1%: training kept 3m00s / wall 5m00s since submission at 2026-11-29T10:00:00Z (running)",
        "    run 1 on spot, admitted 2026-11-29T10:00:03Z: waited for admission 2.0s (quota 2.0s, admission checks "
        "0.0s); provisioning none; training 1m40s kept (steps 0-121); steps lost 1 (0.8s)",
        "    run 2 on dws, admitted 2026-11-29T10:02:15Z: waited for admission 2m14s (quota 2m12s, admission checks "
        "2.0s); provisioning rayjob-job-c-dws-dws-prov-1 2.0s (created -> Provisioned); training 1m20s kept so far "
        "(steps 120-201); steps lost none yet",
        "    total: wall 5m00s; training 3m00s kept, train.py's latest record at step 201; 1 step(s) lost (0.8s); "
        "goodput 60.1%",
    ]
    header, row = table([job]).splitlines()[:2]
    assert header.split()[-1] == "GOODPUT" and row.split()[-1] == "60.1%"
    # The concurrent view reads the same log: the move and its one lost step.
    assert "  migrated at 2026-11-29T10:02:15.300000Z: spot -> dws (1 step(s) lost)" in explain(job)


def test_no_log_yet_names_what_is_missing_instead_of_a_figure(monkeypatch: pytest.MonkeyPatch) -> None:
    starting = "2026-11-29T10:02:20.000000000Z Job submission server address: http://job-c-head-svc:8265\n"
    job = _job_c({"job-c-abcde": starting}, monkeypatch)
    block = _block(explain(job))
    assert block[0] == (
        "  goodput unknown: missing the training time (no 'training time up to step' line (train.py) or "
        "'planb-progress' record in the submitter log yet)"
    )
    assert block[1].startswith("    run 1 on spot, admitted 2026-11-29T10:00:03Z: waited for admission 2.0s")
    assert block[1].endswith("; training: no train.py run in its log; steps lost ?")
    assert block[-1] == "    total: wall 5m00s; training ? kept; ? step(s) lost; goodput -"
    assert table([job]).splitlines()[1].split()[-1] == "-"
    # No submitter pod at all: the same, with the other reason.
    gone = _job_c({}, monkeypatch, pods=[])
    assert _block(explain(gone))[0].endswith("(no submitter pod, or its log is not readable)")


def test_a_sequential_job_earlier_run_from_kueues_events_the_latest_from_its_conditions() -> None:
    """One Workload admitted twice (on-demand, then dws after its eviction): the conditions hold the second
    admission only; the first is in the Events. A repeat folded into an Event's series has its time but not its
    wait figures."""
    wl = {
        "metadata": {"namespace": "default", "name": "rayjob-job-1", "creationTimestamp": "2026-11-29T10:00:00Z"},
        "status": {
            "conditions": [
                condition("Requeued", "True", "2026-11-29T10:10:00Z"),
                condition("QuotaReserved", "True", "2026-11-29T10:10:30Z"),
                condition("Admitted", "True", "2026-11-29T10:11:00Z"),
            ],
            "admission": {"podSetAssignments": [{"name": "workers", "flavors": {"google.com/tpu": "dws"}}]},
        },
    }
    events = [
        reserved("rayjob-job-1", "2026-11-29T10:00:05.000000Z", 5),
        admitted("rayjob-job-1", "2026-11-29T10:00:05.100000Z", 0),
    ]
    found, hidden = admissions.admissions([wl], events)
    assert found == [
        admissions.Admission("rayjob-job-1", "", parse_time("2026-11-29T10:00:05.1Z") or 0, 5.0, 0.0),
        admissions.Admission("rayjob-job-1", "dws", parse_time("2026-11-29T10:11:00Z") or 0, 30.0, 30.0),
    ]
    assert hidden == 0
    # Three admissions folded into the first one's series (count 3): the latest is the conditions' (its time from
    # the series, Kueue's figures from the conditions), the middle one is counted without a time.
    folded = [
        events[0],
        {**events[1], "series": {"count": 3, "lastObservedTime": "2026-11-29T10:11:00.400000Z"}},
    ]
    found, hidden = admissions.admissions([wl], folded)
    assert [(a.flavor, a.waited_s, a.checks_s) for a in found] == [("", 5.0, 0.0), ("dws", 30.0, 30.0)]
    assert found[1].at == parse_time("2026-11-29T10:11:00.4Z")
    assert hidden == 1


def test_train_py_lines_make_one_run_per_resume_and_unknown_stays_unknown() -> None:
    record = trainlog.parse_log(
        "earlier: resumed from checkpoint step 10; 3 step(s) lost\n"
        "earlier: training time up to step 10: unknown kept; the 3 lost step(s) took unknown\n"
        "resumed from checkpoint step 20; 0 step(s) lost\n"
        "training time up to step 20: unknown kept; the 0 lost step(s) took 0.0 s\n"
        "(RayTrainWorker pid=7) training time up to step 25: unknown kept\n"
    )
    assert record is not None and record.started is None and (record.step, record.kept_s) == (25, None)
    assert trainlog.train_runs(record) == [
        trainlog.TrainRun(0, 13, None, 3, None),
        trainlog.TrainRun(10, 20, None, 0, 0.0),
        trainlog.TrainRun(20, 25, None),
    ]
    assert trainlog.parse_log("Epoch 0: Loss 3.1\nTraining Complete!\n") is None


def test_the_newest_train_py_run_pairs_with_the_admission_before_its_log_began() -> None:
    """Admitted again after the log's run began (the new submitter has not started yet): that admission has no run
    of train.py, and the run in the log stays with the admission it ran under."""
    at = parse_time
    first = admissions.Admission("w", "spot", at("2026-11-29T10:00:00Z") or 0, 1.0, 0.0)
    second = admissions.Admission("w", "dws", at("2026-11-29T10:05:00Z") or 0, 1.0, 2.0)
    run = trainlog.TrainRun(0, 50, 40.0)
    assert goodput.pair([first, second], [run], at("2026-11-29T10:00:10Z")) == [(first, run), (second, None)]
    assert goodput.pair([first, second], [run], None) == [(first, None), (second, run)]


def test_a_long_log_is_read_by_its_head_and_its_tail(monkeypatch: pytest.MonkeyPatch) -> None:
    """The resumes from the log's first bytes, the latest figure from its last lines: a long run's log is never read
    whole, and a resume line the two reads both hold counts once."""
    filler = "".join(f"2026-11-29T10:03:{i % 60:02d}.000000000Z Epoch {121 + i}: Loss 0.0110\n" for i in range(60))
    monkeypatch.setattr(gather, "HEAD_BYTES", len(LOG) - 100)  # cut inside the last line of train.py's record
    monkeypatch.setattr(gather, "TAIL_LINES", 65)  # back into the resume's training-time line
    job = _job_c({"job-c-abcde": LOG + filler}, monkeypatch)
    assert job.goodput is not None and job.goodput.record is not None
    assert (job.goodput.percent, job.goodput.record.step) == ("60.1%", 201)
    assert [r.lost for r in job.goodput.record.resumes] == [1]
