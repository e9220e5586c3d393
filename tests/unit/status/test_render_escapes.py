"""`planb status`'s table and detail view escape the terminal control characters of the cluster's text:
a Workload's condition message, a check's message, a ProvisioningRequest's reason, KubeRay's message, an
object's name or label, written by whoever may write those objects, could otherwise clear the operator's screen
(CSI 2J), write their clipboard (OSC 52) or overwrite a line (CR). ``-o json`` and ``-o yaml`` escape them already."""

from __future__ import annotations

import argparse
import json
from typing import Any

import pytest
import yaml

from planb.kube import Kube, KubeError
from planb.status import cli as status_cli
from planb.status import expect as expect_mod
from planb.status import serialize
from planb.status.regions import Dispatch, RegionCopy
from planb.status.render import explain, table
from planb.status.report import CheckInfo, JobStatus, PodSetInfo, RequestInfo, collect
from tests.support.shared.status_fakes import FakeKube

Obj = dict[str, Any]

CLEAR = "\x1b[2J"
OSC52 = "\x1b]52;c;ZXZpbA==\x07"
CR = "\r"
HOSTILE = f"a{CLEAR}b{OSC52}c{CR}d"
#: What `printable` shows for HOSTILE.
SHOWN = "a\\u001b[2Jb\\u001b]52;c;ZXZpbA==\\u0007c\\u000dd"


def assert_inert(text: str) -> None:
    """No ESC, BEL or CR (bare or not) reaches the terminal, nor any other C0/C1 control but newline and tab."""
    assert not any(ch in text for ch in "\x1b\x07\r\x9b")
    assert all(ch in "\n\t" or not (ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F) for ch in text)


def _condition(kind: str, status: str, message: str) -> Obj:
    return {"type": kind, "status": status, "reason": f"R{HOSTILE}", "message": message}


def _kube(active: bool = True, finished: bool = False) -> FakeKube:
    rayjob = {
        "metadata": {
            "namespace": "default",
            "name": "job-1",
            "labels": {"kueue.x-k8s.io/queue-name": f"q{HOSTILE}"},
            "annotations": {"planb.dev/off-dws": f"off{HOSTILE}"},
        },
        "spec": {"suspend": False},
        "status": {"jobDeploymentStatus": f"Failed{HOSTILE}", "jobStatus": "FAILED", "message": f"boom{HOSTILE}"},
    }
    conds = [_condition("QuotaReserved", "False", f"pending{HOSTILE}")]
    if finished:
        conds.append(_condition("Finished", "True", f"finished{HOSTILE}"))
    if not active:
        conds.append(_condition("Evicted", "True", f"evicted{HOSTILE}"))
    workload = {
        "metadata": {"namespace": "default", "name": "wl-1", "ownerReferences": [{"kind": "RayJob", "name": "job-1"}]},
        "spec": {"active": active},
        "status": {
            "conditions": conds,
            "admission": {"podSetAssignments": [{"name": "w", "count": 1, "flavors": {"google.com/tpu": HOSTILE}}]},
            "admissionChecks": [{"name": "dws", "state": f"Retry{HOSTILE}", "message": f"check{HOSTILE}"}],
        },
    }
    request = {
        "metadata": {
            "namespace": "default",
            "name": "wl-1-dws-1",
            "ownerReferences": [{"kind": "Workload", "name": "wl-1"}],
        },
        "status": {"conditions": [_condition("Failed", "True", f"request{HOSTILE}")]},
    }
    return FakeKube(
        {
            "/namespaces/default/rayjobs": [rayjob],
            "/namespaces/default/workloads": [workload],
            "/namespaces/default/provisioningrequests": [request],
        }
    )


@pytest.mark.parametrize(("active", "finished"), [(True, False), (False, False), (True, True)])
def test_the_table_and_the_detail_escape_what_the_cluster_wrote(active: bool, finished: bool) -> None:
    (job,) = collect(_kube(active, finished), "default")  # type: ignore[arg-type]
    assert CLEAR in job.reason  # the report keeps the cluster's text as it is: -o json shows it exactly
    for shown in (table([job]), explain(job)):
        assert_inert(shown)
        assert SHOWN in shown


def test_a_job_whose_every_string_is_hostile_is_shown_inert() -> None:
    job = JobStatus(
        namespace=f"ns{HOSTILE}",
        name=f"job{HOSTILE}",
        queue=HOSTILE,
        suspended=False,
        workload=f"wl{HOSTILE}",
        state=f"Pending{HOSTILE}",
        reason=f"why{HOSTILE}",
        podsets=[PodSetInfo(f"ps{HOSTILE}", 1, {"google.com/tpu": f"flavor{HOSTILE}"})],
        checks=[CheckInfo(f"check{HOSTILE}", f"Retry{HOSTILE}", f"msg{HOSTILE}", 1, 5)],
        requests=[RequestInfo(f"pr{HOSTILE}", f"Failed{HOSTILE}", f"reason{HOSTILE}", f"msg{HOSTILE}", 1, "5m", 2)],
        pods=[(f"pod{HOSTILE}", f"Running{HOSTILE}", f"node{HOSTILE}")],
        nodes={f"node{HOSTILE}": f"pool{HOSTILE}"},
        node_plans={f"node{HOSTILE}": f"plan{HOSTILE}"},
        ray_status=f"Running{HOSTILE}",
        moved=f"moved{HOSTILE}",
        deactivated=f"deactivated{HOSTILE}",
        flavor_plans={f"flavor{HOSTILE}": f"plan{HOSTILE}"},
        off_dws=f"off{HOSTILE}",
        regions=Dispatch("", [RegionCopy(f"region{HOSTILE}", f"waiting{HOSTILE}", [f"c{HOSTILE}"])]),
    )
    shown_table, shown_detail = table([job]), explain(job)
    for shown in (shown_table, shown_detail):
        assert_inert(shown)
        assert f"job{SHOWN}" in shown
    for field in ("why", "msg", "reason", "pod", "node", "pool", "moved", "deactivated", "off", "Running"):
        assert f"{field}{SHOWN}" in shown_detail, field
    # The table's columns are measured as shown: each row's cells start where the header's do.
    header, row = shown_table.splitlines()[:2]
    assert row.index(f"Pending{SHOWN}") == header.index("STATE")


def test_json_and_yaml_documents_escape_control_characters_themselves() -> None:
    (job,) = collect(_kube(False, False), "default")  # type: ignore[arg-type]
    document = serialize.document([job])
    as_json = serialize.dump(document, "json")
    assert_inert(as_json)
    assert "\\u001b[2J" in as_json and "\\u0007" in as_json and "\\r" in as_json
    assert json.loads(as_json) == json.loads(json.dumps(document))  # exactly the cluster's text, once decoded
    as_yaml = serialize.dump(document, "yaml")
    assert_inert(as_yaml)
    assert yaml.safe_load(as_yaml) == json.loads(as_json)


@pytest.mark.parametrize("timeout", [600.0, 0.0])
def test_expect_escapes_why_a_job_cannot_land_or_has_not(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], timeout: float
) -> None:
    """--expect's lines name each job's state and flavor and why it cannot run (a deactivated Workload's message)."""
    (job,) = collect(_kube(active=timeout == 0), "default")  # type: ignore[arg-type]
    monkeypatch.setattr(expect_mod, "collect", lambda _kube, _namespace: [job])
    args = argparse.Namespace(expect=["job-1=on-demand"], timeout=timeout, namespace="default")
    assert expect_mod.expect(Kube.__new__(Kube), args) == 1
    out = capsys.readouterr().out
    assert "not as expected" in out
    assert_inert(out)


def test_watch_escapes_an_api_error(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def fail(_kube: Kube, _args: argparse.Namespace) -> int:
        raise KubeError(500, "Internal Server Error", json.dumps({"message": f"boom{HOSTILE}"}))

    monkeypatch.setattr(status_cli, "_once", fail)
    monkeypatch.setattr(status_cli, "watch_sleep", lambda _s: None)
    args = argparse.Namespace(count=1, interval=1.0)
    status_cli._watch(Kube.__new__(Kube), args)
    out = capsys.readouterr().out
    assert f"boom{SHOWN}" in out
    assert_inert(out)
