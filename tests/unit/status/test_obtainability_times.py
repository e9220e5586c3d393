"""A ledger ConfigMap with a time or a score that is not a number planb can use (NaN, an infinity, 1e300): refused
as a problem line by `planb status --capacity`, not a crash (time.gmtime overflowed), and never read into the ledger
that orders dispatch."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from planb.regions.dispatcher import ledger_store as cs
from planb.regions.dispatcher.ledger import GRANTED, Ledger, LedgerError
from planb.status import obtainability

NOW = 1_800_000_000.0
PATH = f"/api/v1/namespaces/kueue-system/configmaps/{cs.CONFIGMAP}"
ASK = {"askedAt": NOW - 60, "outcome": GRANTED, "endedAt": NOW - 30}


def ledger(**ask: Any) -> dict[str, Any]:
    return {"version": 1, "entries": [{"region": "us-east5", "rung": "dws", "shape": "s:4", "asks": [ASK | ask]}]}


def advice(at: Any = NOW - 60, score: Any = 0.5) -> dict[str, Any]:
    pair = {"region": "us-east5", "rung": "dws", "shape": "s:4", "score": score, "source": "GOOGLE", "offered": "first"}
    return {"version": 1, "job": "default/j", "at": at, "race": False, "pairs": [pair]}


class ConfigMapKube:
    def __init__(self, data: dict[str, str]) -> None:
        self.data = data

    def get(self, path: str, query: dict[str, str] | None = None) -> dict[str, Any] | None:
        assert path == PATH
        return {"data": self.data}


@pytest.mark.parametrize(
    "data",
    [
        {cs.ADVICE_KEY: json.dumps(advice(at=1e300))},
        {cs.ADVICE_KEY: '{"version": 1, "job": "j", "at": NaN, "race": false}'},
        {cs.ADVICE_KEY: json.dumps(advice(score=math.inf))},
        {cs.LEDGER_KEY: json.dumps(ledger(askedAt=-math.inf))},
        {
            cs.LEDGER_KEY: '{"version": 1, "entries": [{"region": "r", "rung": "d", "shape": "s", "asks": '
            '[{"askedAt": -Infinity, "outcome": "' + GRANTED + '"}]}]}'
        },
        {cs.LEDGER_KEY: json.dumps(ledger(endedAt=1e300))},
        {cs.LEDGER_KEY: json.dumps(ledger(askedAt=math.nan))},
    ],
)
def test_status_says_a_problem_instead_of_crashing(data: dict[str, str]) -> None:
    found = obtainability.of_ledger(cs.read(ConfigMapKube(data)), NOW)  # type: ignore[arg-type]
    assert found.problems, "the value was taken"
    assert "problem: ConfigMap" in obtainability.text(found)
    assert obtainability.document(found)["problems"]


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 1e300, -1.0])
def test_from_json_refuses_times_that_are_not_times(value: float) -> None:
    with pytest.raises(LedgerError):
        Ledger.from_json(ledger(askedAt=value))
    with pytest.raises(LedgerError):
        cs.LastAdvice.from_json(advice(at=value))


@pytest.mark.parametrize("value", [math.inf, -math.inf])
def test_from_json_refuses_infinite_scores(value: float) -> None:
    with pytest.raises(LedgerError):
        cs.LastAdvice.from_json(advice(score=value))


def test_from_json_takes_what_planb_writes() -> None:
    assert Ledger.from_json(ledger()).to_json() == ledger()
    assert cs.LastAdvice.from_json(advice()).at == NOW - 60
