"""`planb status --capacity`: the obtainability ledger and the last advice used, read from the manager's ConfigMap
(planb.regions.dispatcher.ledger_store), as text and as one JSON document (planb.status.obtainability)."""

from __future__ import annotations

import argparse
import json
from typing import Any

import jsonschema
import pytest

from planb import paths
from planb.errors import UsageError
from planb.kube import KubeError
from planb.regions.dispatcher import ledger_store as cs
from planb.regions.dispatcher import offer_order as ao
from planb.regions.dispatcher.ledger import FAILED, GRANTED, WITHDRAWN, Key, Ledger
from planb.status import cli as status_cli
from planb.status import obtainability

NOW = 1_800_000_000.0
SHAPE = "ct6e-standard-4t:4"
EAST, WEST = Key("us-east5", "dws", SHAPE), Key("europe-west4", "dws", SHAPE)
SPOT = Key("us-east5", "spot", SHAPE)
JOB = ao.Job(checkpoint_interval_s=45 * 60, restore_s=10 * 60)
PATH = f"/api/v1/namespaces/kueue-system/configmaps/{cs.CONFIGMAP}"


class ConfigMapKube:
    """The manager's API as status reads the ConfigMap: one GET, None when it is not there, or an error."""

    def __init__(self, objects: dict[str, Any], error: KubeError | None = None) -> None:
        self.objects, self.error = objects, error

    def get(self, path: str, query: dict[str, str] | None = None) -> dict[str, Any] | None:
        if self.error is not None:
            raise self.error
        return self.objects.get(path)

    def items(self, path: str, query: dict[str, str] | None = None) -> list[dict[str, Any]]:
        """No MultiKueueClusters listed (the region tokens' warnings: test_region_token_warning.py)."""
        if self.error is not None:
            raise self.error
        return []


def _ledger() -> Ledger:
    ledger = Ledger()
    ledger.record(EAST, NOW - 3600, GRANTED, NOW - 3540)
    ledger.record(EAST, NOW - 1200, FAILED, NOW - 1180)
    ledger.record(WEST, NOW - 1180, GRANTED, NOW - 1000)
    ledger.record(EAST, NOW - 1180, WITHDRAWN, NOW - 1000)
    ledger.ask(WEST, NOW - 60)
    return ledger


def _advised(ledger: Ledger) -> cs.LastAdvice:
    candidates = [
        ao.Candidate(EAST, ao.Advice(0.9)),
        ao.Candidate(WEST, ao.Advice.absent("404 NOT_FOUND")),
        ao.Candidate(SPOT, ao.Advice(0.99, estimated_uptime_s=40 * 60)),
    ]
    offer = ao.plan(candidates, JOB, ledger, NOW - 120)
    return cs.last_advice(offer, candidates, "default/job-1", NOW - 120)


def _kube(ledger: Ledger, advice: cs.LastAdvice | None) -> ConfigMapKube:
    return ConfigMapKube({PATH: cs.configmap(ledger, advice)})


def _args(**over: Any) -> argparse.Namespace:
    base = {"all_namespaces": False, "namespace": "default", "job": None, "output": None, "timeline": None}
    return argparse.Namespace(**{**base, "capacity": True, "expect": None, "watch": False, **over})


def test_the_text_shows_the_ledger_per_region_rung_and_shape_with_counts_and_times() -> None:
    ledger = _ledger()
    out = obtainability.text(obtainability.of_ledger(cs.read(_kube(ledger, None)), NOW))  # type: ignore[arg-type]
    lines = out.splitlines()
    assert lines[0] == f"Obtainability ledger (ConfigMap kueue-system/{cs.CONFIGMAP}, 2027-01-15T08:00:00Z):"
    header = lines[1].split()
    assert header[:8] == ["REGION", "RUNG", "SHAPE", "ASKED", "GRANTED", "STOCKOUTS", "WITHDRAWN", "PENDING"]
    west, east = lines[2].split(), lines[3].split()  # sorted by region
    assert west[:8] == ["europe-west4", "dws", SHAPE, "2", "1", "0", "0", "1"]
    assert east[:8] == ["us-east5", "dws", SHAPE, "3", "1", "1", "1", "0"]
    # last asked 20 min ago, last granted 59 min ago, last stockout 20 min ago (1180 s), the ledger's rate.
    assert " ".join(east[8:]) == "20 min ago 59 min ago 20 min ago " + f"{ledger.score(EAST, NOW, 600.0).rate:.2f}"
    assert "Last advice used: none recorded" in out


def test_the_text_shows_the_last_advice_with_scores_uptime_and_where_each_order_came_from() -> None:
    ledger = _ledger()
    out = obtainability.text(obtainability.of_ledger(cs.read(_kube(ledger, _advised(ledger))), NOW))  # type: ignore[arg-type]
    assert "Last advice used: job default/job-1, 2027-01-15T07:58:00Z (2 min ago), advice-ordered" in out
    rows = {line.split()[0] + "/" + line.split()[1]: line for line in out.splitlines() if line.startswith("  us-")}
    rows |= {line.split()[0] + "/" + line.split()[1]: line for line in out.splitlines() if line.startswith("  euro")}
    assert rows["us-east5/dws"].split()[3] == "0.90" and rows["us-east5/dws"].endswith("Google's advice")
    assert rows["europe-west4/dws"].endswith("planb's ledger (no advice: 404 NOT_FOUND)")
    spot = rows["us-east5/spot"].split()
    assert spot[3:7] == ["0.99", "40", "min", "-"] and "skipped" in spot
    assert (
        f"  {SPOT}: Spot skipped: estimatedUptime 40 min < checkpoint interval + restore 55 min "
        "(planb's policy: a job preempted before its next checkpoint makes no progress)"
    ) in out.splitlines()


def test_missing_advice_shows_the_race_and_why() -> None:
    candidates = [ao.Candidate(k, ao.Advice.absent("403 PERMISSION_DENIED: no right")) for k in (EAST, WEST)]
    offer = ao.plan(candidates, JOB, Ledger(), NOW)
    advice = cs.last_advice(offer, candidates, "default/job-2", NOW)
    out = obtainability.text(obtainability.of_ledger(cs.read(_kube(Ledger(), advice)), NOW))  # type: ignore[arg-type]
    assert "job default/job-2, 2027-01-15T08:00:00Z (0 s ago), AllAtOnce (no advice)" in out
    assert "advice missing for every pair (403 PERMISSION_DENIED: no right): AllAtOnce" in out
    race = [line for line in out.splitlines() if "at once (race)" in line]
    assert len(race) == 2
    assert all(
        line.endswith("missing: fell back to the race, because 403 PERMISSION_DENIED: no right") for line in race
    )
    assert "  empty: no request recorded" in out


def test_a_cluster_without_the_configmap_says_nothing_is_recorded_and_exits_0(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert status_cli._once(ConfigMapKube({}), _args()) == 0  # type: ignore[arg-type]
    out = capsys.readouterr().out
    assert f"none: no ConfigMap kueue-system/{cs.CONFIGMAP} on this cluster" in out
    # What is true since the keeper dispatches: either it runs without --dispatch, or it has planned no job yet.
    assert "the regions keeper runs without --dispatch" in out and "has not planned a job yet" in out
    assert "not wired in" not in out
    assert "Last advice used: none recorded" in out


def test_a_forbidden_configmap_or_an_unreadable_key_is_a_problem_line_not_a_crash() -> None:
    forbidden = ConfigMapKube({}, KubeError(403, "Forbidden", '{"message": "configmaps is forbidden"}'))
    out = obtainability.text(obtainability.of_ledger(cs.read(forbidden), NOW))  # type: ignore[arg-type]
    assert "problem: ConfigMap kueue-system/planb-regions-ledger cannot be read: 403 Forbidden" in out
    body = cs.configmap(Ledger(), None)
    body["data"]["advice"] = '{"version": 9}'
    out = obtainability.text(obtainability.of_ledger(cs.read(ConfigMapKube({PATH: body})), NOW))  # type: ignore[arg-type]
    assert "problem: ConfigMap kueue-system/planb-regions-ledger, key advice: advice version 9" in out
    with pytest.raises(KubeError):  # an API server that does not answer is exit 3, as for every status
        obtainability.of_ledger(cs.read(ConfigMapKube({}, KubeError(0, "API server unreachable", "x"))), NOW)  # type: ignore[arg-type]


def test_the_json_document_carries_the_ledger_s_asks_and_the_advice_used(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = _ledger()
    monkeypatch.setattr(obtainability, "clock", lambda: NOW)
    assert status_cli._once(_kube(ledger, _advised(ledger)), _args(output="json")) == 0  # type: ignore[arg-type]
    doc = json.loads(capsys.readouterr().out)
    _valid(doc)
    assert set(doc) == {"apiVersion", "kind", "configMap", "found", "now", "ledger", "lastAdvice", "problems"}
    assert (doc["kind"], doc["configMap"], doc["found"], doc["now"]) == (
        "CapacityStatus", f"kueue-system/{cs.CONFIGMAP}", True, "2027-01-15T08:00:00Z",
    )  # fmt: skip
    east = next(row for row in doc["ledger"] if row["region"] == "us-east5")
    assert {k: east[k] for k in ("rung", "shape", "asked", "granted", "stockouts", "withdrawn", "pending")} == {
        "rung": "dws", "shape": SHAPE, "asked": 3, "granted": 1, "stockouts": 1, "withdrawn": 1, "pending": 0,
    }  # fmt: skip
    assert (east["lastGranted"], east["lastStockout"]) == ("2027-01-15T07:01:00Z", "2027-01-15T07:40:20Z")
    assert east["asks"][1] == {
        "askedAt": "2027-01-15T07:40:00Z",
        "outcome": "FAILED",
        "endedAt": "2027-01-15T07:40:20Z",
    }
    west = next(row for row in doc["ledger"] if row["region"] == "europe-west4")
    assert west["asks"][-1] == {"askedAt": "2027-01-15T07:59:00Z", "outcome": "PENDING", "endedAt": None}
    advice = doc["lastAdvice"]
    assert (advice["job"], advice["at"], advice["race"]) == ("default/job-1", "2027-01-15T07:58:00Z", False)
    pairs = {(p["region"], p["rung"]): p for p in advice["pairs"]}
    assert set(pairs[("us-east5", "dws")]) == {
        "region", "rung", "shape", "obtainability", "estimatedUptimeSeconds", "score", "source", "offered", "reason",
    }  # fmt: skip
    assert pairs[("us-east5", "dws")]["obtainability"] == 0.9 and pairs[("us-east5", "dws")]["source"] == cs.GOOGLE
    assert 0.0 <= pairs[("us-east5", "dws")]["score"] <= 1.0
    assert pairs[("us-east5", "spot")]["estimatedUptimeSeconds"] == 2400.0
    assert (pairs[("us-east5", "spot")]["offered"], pairs[("us-east5", "spot")]["score"]) == ("skipped", None)
    assert pairs[("europe-west4", "dws")]["obtainability"] is None
    assert doc["problems"] == []


def _valid(doc: Any) -> None:
    """`doc` is valid against docs/status.schema.json, as CapacityStatus."""
    schema = json.loads((paths.REPO / "docs" / "status.schema.json").read_text())
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(doc)
    capacity_only = {**schema, "oneOf": [{"$ref": "#/$defs/capacity"}]}
    jsonschema.Draft202012Validator(capacity_only, format_checker=jsonschema.FormatChecker()).validate(doc)


def test_a_document_with_nothing_recorded_is_valid_too() -> None:
    _valid(
        obtainability.document(
            obtainability.Obtainability("kueue-system/x", found=False, now=NOW, problems=["forbidden"])
        )
    )


def test_capacity_is_not_a_job_s_view() -> None:
    with pytest.raises(
        UsageError, match="--capacity shows the manager's ledger and last advice, no job's: not with JOB"
    ):
        status_cli._check_usage(_args(job="job-1"))
    with pytest.raises(UsageError, match="not with --timeline"):
        status_cli._check_usage(_args(timeline="x.svg"))


def test_the_last_advice_reads_back_as_it_was_written() -> None:
    advice = _advised(_ledger())
    assert cs.LastAdvice.from_json(json.loads(json.dumps(advice.to_json()))) == advice
