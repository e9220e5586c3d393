"""The obtainability ledger (planb.regions.dispatcher.ledger): what planb asked for per region, rung and shape, what it
was granted, and the smoothed grant rate with recency it yields."""

from __future__ import annotations

import json
from typing import Any

import pytest

from planb.regions.dispatcher.ledger import (
    DELAY_HALF_LIFE_S,
    FAILED,
    GRANTED,
    HALF_LIFE_S,
    MAX_ASKS,
    PENDING,
    RECENT_HALF_LIFE_S,
    WITHDRAWN,
    Key,
    Ledger,
    LedgerError,
)

NEVER = Key("asia-northeast1", "reservation", "ct6e-standard-4t:4")
GOOD = Key("us-east5", "dws", "ct6e-standard-4t:4")
BOUND = 600.0


def test_with_nothing_seen_a_pair_is_neither_good_nor_bad() -> None:
    score = Ledger().score(NEVER, 0.0, BOUND)
    assert (score.rate, score.evidence, score.grant_delay_s) == (0.5, 0.0, None)


def test_the_score_of_a_pair_that_never_grants_sinks_and_one_that_grants_rises() -> None:
    ledger, rates = Ledger(), []
    for i in range(8):
        at = i * 900.0
        ledger.record(NEVER, at, FAILED, at + 20.0)
        ledger.record(GOOD, at, GRANTED, at + 300.0)
        rates.append(ledger.score(NEVER, at + 600.0, BOUND).rate)
    assert rates == sorted(rates, reverse=True) and rates[0] < 0.5
    assert rates[-1] < 0.1
    good = ledger.score(GOOD, 8 * 900.0, BOUND)
    assert good.rate > 0.9 and good.grant_delay_s == pytest.approx(300.0)
    # A whole day later it has recovered only part of the way: the day's rate forgets over hours, not minutes.
    assert ledger.score(NEVER, 8 * 900.0 + HALF_LIFE_S, BOUND).rate < 0.35


def test_the_last_asks_say_what_holds_now_beside_the_day_s_rate() -> None:
    ledger = Ledger()
    for i in range(10):  # granted all morning
        ledger.record(GOOD, i * 600.0, GRANTED, i * 600.0 + 60.0)
    ledger.record(GOOD, 4 * 3600.0, FAILED, 4 * 3600.0 + 20.0)  # a stockout now
    ledger.record(GOOD, 4 * 3600.0 + 60.0, FAILED, 4 * 3600.0 + 80.0)
    score = ledger.score(GOOD, 4 * 3600.0 + 100.0, BOUND)
    assert score.day_rate > 0.7 and score.rate < score.day_rate / 2 + 0.05
    # An hour and a half later the stockout weighs less, the morning as much as before.
    later = ledger.score(GOOD, 5.5 * 3600.0, BOUND)
    assert later.rate > score.rate


def test_a_request_not_granted_within_the_bound_is_a_miss_and_one_withdrawn_sooner_says_nothing() -> None:
    ledger = Ledger()
    ledger.record(GOOD, 0.0, WITHDRAWN, 60.0)  # another pair won after a minute: no evidence
    assert ledger.score(GOOD, 100.0, BOUND).evidence == 0.0
    ledger.record(GOOD, 0.0, WITHDRAWN, BOUND + 1)  # waited past the bound: a miss
    assert ledger.score(GOOD, BOUND + 1, BOUND).misses == pytest.approx(1.0)
    pending = Ledger()
    pending.ask(NEVER, 0.0)
    assert pending.score(NEVER, BOUND - 1, BOUND).evidence == 0.0
    assert pending.score(NEVER, BOUND, BOUND).misses == pytest.approx(1.0)
    pending.end(NEVER, 0.0, GRANTED, BOUND + 30.0)
    assert pending.score(NEVER, BOUND + 30.0, BOUND).grants == pytest.approx(1.0)


def test_only_what_was_known_at_now_counts() -> None:
    ledger = Ledger()
    ledger.record(NEVER, 1000.0, FAILED, 1020.0)
    assert ledger.score(NEVER, 999.0, BOUND).evidence == 0.0  # asked later
    assert ledger.score(NEVER, 1010.0, BOUND).evidence == 0.0  # still pending then, and not for a bound yet
    assert ledger.score(NEVER, 1020.0, BOUND).misses == pytest.approx(1.0)


def test_google_s_score_is_the_prior_the_ledger_moves() -> None:
    ledger = Ledger()
    assert ledger.score(GOOD, 0.0, BOUND, prior=0.9, prior_weight=4.0).rate == pytest.approx(0.9)
    for i in range(6):
        ledger.record(GOOD, i * 60.0, FAILED, i * 60.0 + 20.0)
    assert ledger.score(GOOD, 400.0, BOUND, prior=0.9, prior_weight=4.0).rate < 0.3


def test_the_ledger_is_json_and_reads_back_the_same() -> None:
    ledger = Ledger()
    ledger.record(GOOD, 0.0, GRANTED, 300.0)
    ledger.record(NEVER, 10.0, FAILED, 30.0)
    ledger.ask(NEVER, 40.0)
    text = json.dumps(ledger.to_json())
    back = Ledger.from_json(json.loads(text))
    assert back == ledger
    assert back.asks[NEVER][-1].outcome == PENDING
    assert json.loads(text)["entries"][0]["region"] == "asia-northeast1"  # sorted by key


def test_a_key_keeps_its_newest_asks_only() -> None:
    ledger = Ledger()
    for i in range(MAX_ASKS + 5):
        ledger.record(GOOD, float(i), GRANTED, i + 1.0)
    assert len(ledger.asks[GOOD]) == MAX_ASKS and ledger.asks[GOOD][0].asked_at == 5.0


def _one(ask: dict[str, Any]) -> dict[str, Any]:
    return {"version": 1, "entries": [{"region": "r", "rung": "dws", "shape": "s", "asks": [ask]}]}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"version": 2}, "version 2"),
        (_one({"askedAt": 1}), "'outcome'"),
        (_one({"askedAt": 1, "outcome": "LOST"}), "outcome 'LOST'"),
        (_one({"askedAt": 5, "outcome": "FAILED", "endedAt": 1}), "before it was made"),
        (_one({"askedAt": 5, "outcome": "FAILED"}), "needs endedAt"),
    ],
)
def test_a_ledger_planb_cannot_read_is_refused(data: dict[str, Any], message: str) -> None:
    with pytest.raises(LedgerError, match=message):
        Ledger.from_json(data)


def test_only_a_pending_ask_ends() -> None:
    ledger = Ledger()
    with pytest.raises(LedgerError, match="no pending ask"):
        ledger.end(GOOD, 0.0, GRANTED, 1.0)
    ledger.ask(GOOD, 0.0)
    with pytest.raises(LedgerError, match="ends GRANTED"):
        ledger.end(GOOD, 0.0, PENDING, 1.0)


def test_the_grant_delay_follows_the_last_hours_and_says_how_much_stands_behind_it() -> None:
    ledger = Ledger()
    for i in range(4):  # slow grants in the morning
        ledger.record(GOOD, i * 600.0, GRANTED, i * 600.0 + 600.0)
    ledger.record(GOOD, 6 * 3600.0, GRANTED, 6 * 3600.0 + 60.0)  # a fast one now
    score = ledger.score(GOOD, 6 * 3600.0 + 60.0, BOUND)
    morning = sum(0.5 ** ((6 * 3600.0 + 60.0 - (i + 1) * 600.0) / DELAY_HALF_LIFE_S) for i in range(4))
    assert score.timed_grants == pytest.approx(1.0 + morning)
    assert score.grant_delay_s == pytest.approx((60.0 + 600.0 * morning) / (1.0 + morning))
    assert (
        score.grant_delay_s is not None and score.grant_delay_s < 300.0
    )  # over the day's 6-hour window it would still be above 400 s
    assert Ledger().score(GOOD, 0.0, BOUND).timed_grants == 0.0


def test_the_state_is_the_last_answer_fading_back_to_the_day_s_rate() -> None:
    ledger = Ledger()
    assert Ledger().score(GOOD, 0.0, BOUND).state_rate == 0.5  # nothing seen: the prior
    for i in range(6):
        ledger.record(GOOD, i * 600.0, GRANTED, i * 600.0 + 60.0)
    ledger.record(GOOD, 3600.0, FAILED, 3620.0)  # a stockout now
    now = ledger.score(GOOD, 3620.0, BOUND)
    assert now.state_rate == pytest.approx(0.0) and now.rate > 0.5  # the smoothed rate still says "grants"
    later = ledger.score(GOOD, 3620.0 + RECENT_HALF_LIFE_S, BOUND)
    assert later.state_rate == pytest.approx(later.day_rate / 2)
