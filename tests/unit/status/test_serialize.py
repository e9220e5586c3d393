"""`planb status -o json|yaml`: the report's data as one document, valid against docs/status.schema.json, and the
same figures the text report prints."""

from __future__ import annotations

import argparse
import json
from typing import Any

import jsonschema
import pytest
import yaml

from planb import paths
from planb.status import cli as status_cli
from planb.status import serialize
from planb.status.render import explain, table
from tests.support.shared import status_job
from tests.support.shared.status_fakes import FakeKube

SCHEMA = json.loads((paths.REPO / "docs" / "status.schema.json").read_text())


def _validate(doc: Any) -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(doc)


def _args(**over: Any) -> argparse.Namespace:
    base = {"all_namespaces": False, "namespace": "default", "job": "job-m", "output": "json", "timeline": None}
    return argparse.Namespace(**{**base, **over})


def test_one_job_as_json_is_valid_and_says_what_the_text_report_says(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    job = status_job.job_m(monkeypatch)
    kube = status_job.JobKube(status_job.objects())
    assert status_cli._once(kube, _args()) == 0  # type: ignore[arg-type]
    doc = json.loads(capsys.readouterr().out)
    _validate(doc)
    assert (doc["kind"], doc["namespace"], doc["name"]) == ("JobStatus", "default", "job-m")
    text = explain(job)
    assert f"  Workload {doc['workload']}: {doc['state']}" in text
    assert f"    plan {doc['plan']} (flavor {doc['acceleratorFlavor']})" in text
    moves = [(m["fromFlavor"], m["toFlavor"], m["stepsLost"]) for m in doc["concurrent"]["migrations"]]
    assert moves == [("spot", "dws", 1), ("dws", "reserved", 12)]
    assert doc["goodput"]["percent"] == table([job]).splitlines()[1].split()[-1] == "71.1%"
    assert [r["admission"]["flavor"] for r in doc["goodput"]["runs"]] == ["spot", "dws", "reserved"]
    assert doc["goodput"]["submitted"] == "2026-11-29T10:00:00Z"
    assert doc["pods"] == [{"name": status_job.SUBMITTER, "phase": "Running", "node": "gke-reserved-node-1"}]
    assert doc["failed"] is False


def test_the_list_as_yaml_is_valid_and_a_job_without_a_workload_has_nulls(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    status_job.job_m(monkeypatch)  # the clock
    waiting = {"metadata": {"namespace": "default", "name": "job-w"}, "spec": {}, "status": {}}
    objects = status_job.objects()
    kube = status_job.JobKube({**objects, "/rayjobs": [*objects["/rayjobs"], waiting]})
    assert status_cli._once(kube, _args(job=None, output="yaml")) == 0  # type: ignore[arg-type]
    doc = yaml.safe_load(capsys.readouterr().out)
    _validate(doc)
    assert doc["kind"] == "JobStatusList"
    assert [(i["name"], i["workload"], i["state"]) for i in doc["items"]] == [
        ("job-m", "rayjob-job-m-parent", "Admitted"),
        ("job-w", None, "no Workload yet"),
    ]
    assert doc["items"][1]["goodput"]["submitted"] is None and doc["items"][1]["concurrent"] is None


def test_no_job_found_prints_an_empty_list_and_says_so_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert status_cli._once(FakeKube({}), _args(job=None)) == 1  # type: ignore[arg-type]
    out, err = capsys.readouterr()
    doc = json.loads(out)
    _validate(doc)
    assert doc["items"] == [] and "no RayJob found in namespace 'default'" in err


def test_every_field_of_the_output_is_in_the_schema_and_the_schema_asks_for_nothing_else(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    item = serialize.item(status_job.job_m(monkeypatch))
    # `warnings`: only on a job printed alone (the manager's region tokens, not the job's: serialize.document).
    assert set(item) | {"warnings"} == set(SCHEMA["$defs"]["job"]["properties"])
    assert set(item) == set(SCHEMA["$defs"]["job"]["required"])
    assert set(serialize.document([], warnings=[])) == set(SCHEMA["oneOf"][0]["properties"])
    assert set(item["goodput"]) == set(SCHEMA["$defs"]["goodput"]["properties"])
