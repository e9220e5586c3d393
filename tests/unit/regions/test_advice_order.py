"""Advice-ordered dispatch (planb.regions.dispatcher.offer_order): the order follows Google's advice and planb's
ledger, Spot that dies before its checkpoint is skipped, the offer widens after the bound, and missing advice is
AllAtOnce."""

from __future__ import annotations

from pathlib import Path

import pytest

from planb.local.gke_emulator import advice, conformance, discovery
from planb.local.gke_emulator.store import Store
from planb.regions.dispatcher import offer_order as ao
from planb.regions.dispatcher.ledger import FAILED, GRANTED, Key, Ledger

SHAPE = "ct6e-standard-4t:4"
EAST, WEST, ASIA = (Key(r, "dws", SHAPE) for r in ("us-east5", "europe-west4", "asia-northeast1"))
SPOT = Key("us-east5", "spot", SHAPE)
JOB = ao.Job(checkpoint_interval_s=45 * 60, restore_s=10 * 60)
POLICY = ao.Policy()


def _candidates(**scores: float | None) -> list[ao.Candidate]:
    keys = {"east": EAST, "west": WEST, "asia": ASIA}
    return [
        ao.Candidate(keys[name], ao.Advice(s) if s is not None else ao.Advice.absent("403 PERMISSION_DENIED"))
        for name, s in scores.items()
    ]


def test_the_order_follows_google_s_advice_and_one_pair_is_offered_first() -> None:
    offer = ao.plan(_candidates(east=0.3, west=0.95, asia=0.6), JOB, Ledger(), 0.0)
    assert offer.keys == [WEST, ASIA, EAST]
    assert not offer.race and offer.first == 1
    assert offer.due(0.0, []) == ([WEST], offer.order[0].bound_s)
    assert "obtainability 0.95 (Google)" in offer.reasons()[WEST] and "offered first" in offer.reasons()[WEST]


def test_the_offer_widens_after_the_asked_pair_s_bound_at_once_on_a_failure_and_to_all_at_the_end() -> None:
    offer = ao.plan(_candidates(east=0.3, west=0.95, asia=0.6), JOB, Ledger(), 0.0)
    bound = offer.order[0].bound_s
    assert bound == POLICY.bound(POLICY.unseen_delay_s)  # nothing seen: the unseen delay's bound
    asked = [ao.Attempt(WEST, 0.0)]
    assert offer.due(bound - 1, asked) == ([], bound)  # WEST still within its bound: wait for it
    assert offer.due(bound, asked)[0] == [ASIA]
    assert offer.due(10.0, [ao.Attempt(WEST, 0.0, 10.0)])[0] == [ASIA]  # a stockout said is a no: next at once
    both = [ao.Attempt(WEST, 0.0), ao.Attempt(ASIA, bound)]
    assert offer.due(POLICY.full_after_s, both)[0] == [EAST]
    assert [w.keys for w in offer.waves()] == [(WEST,), (ASIA,), (EAST,)]
    assert offer.waves()[1].after_s == bound
    assert f"offered after {bound:.0f} s without a grant" in offer.reasons()[ASIA]


def test_the_bound_is_a_multiple_of_the_asked_pair_s_grant_delay_seen_by_the_ledger() -> None:
    ledger = Ledger()
    for i in range(4):
        ledger.record(WEST, i * 900.0, GRANTED, i * 900.0 + 100.0)
    offer = ao.plan(_candidates(east=0.3, west=0.95), JOB, ledger, 3600.0)
    assert offer.keys[0] == WEST
    assert offer.order[0].bound_s == pytest.approx(POLICY.bound(100.0), rel=0.05)
    assert POLICY.bound(1.0) == POLICY.min_bound_s and POLICY.bound(1e6) == POLICY.max_bound_s
    # EAST, never granted, takes the grant delay its rung was seen to take elsewhere (DWS here), not the default.
    assert offer.order[1].bound_s == offer.order[0].bound_s


def test_a_pair_that_just_failed_sinks_below_one_google_rates_lower_and_rises_as_the_stockout_ages() -> None:
    ledger = Ledger()
    for i in range(4):
        ledger.record(WEST, i * 600.0, GRANTED, i * 600.0 + 100.0)
    ledger.record(WEST, 2400.0, FAILED, 2420.0)  # a stockout seen a minute ago
    assert ao.plan(_candidates(east=0.6, west=0.9), JOB, ledger, 2480.0).keys[0] == EAST
    # Without rule 3's optimism, which by then has EAST, never tried, tried once at least.
    later = ao.plan(_candidates(east=0.6, west=0.9), JOB, ledger, 2420.0 + 3 * 3600.0, ao.Policy(optimism=0.0))
    assert later.keys[0] == WEST


def test_a_failed_pair_is_asked_again_after_a_back_off_that_doubles() -> None:
    offer = ao.plan(_candidates(west=0.95), JOB, Ledger(), 0.0)
    retry = POLICY.retry_after_s
    once = [ao.Attempt(WEST, 0.0, 20.0)]
    assert offer.due(30.0, once) == ([], 20.0 + retry)
    assert offer.due(20.0 + retry, once)[0] == [WEST]
    twice = [*once, ao.Attempt(WEST, 20.0 + retry, 40.0 + retry)]
    assert offer.due(60.0 + retry, twice) == ([], 40.0 + 3 * retry)


def test_an_uncertain_first_pair_brings_a_second_into_the_first_offer() -> None:
    offer = ao.plan(_candidates(east=0.35, west=0.4, asia=0.3), JOB, Ledger(), 0.0, ao.Policy(confidence=0.7))
    assert offer.first >= 2 and offer.due(0.0, [])[0] == offer.keys[: offer.first]


def test_an_unseen_rung_that_answers_is_taken_to_say_no_fast_and_one_that_queues_to_wait() -> None:
    reservation = ao.Candidate(Key("us-east5", "reservation", SHAPE), ao.Advice(0.5))
    offer = ao.plan([reservation, *_candidates(west=0.5)], JOB, Ledger(), 0.0)
    tries = {r.key.rung: r.expected_s for r in offer.order}
    delay = POLICY.unseen_delay_s * (1 - POLICY.optimism)  # nothing seen: the unseen delay, shrunk (rule 3)
    assert tries["reservation"] == pytest.approx(0.5 * delay + 0.5 * POLICY.unseen_miss_s)
    assert tries["dws"] == pytest.approx(0.5 * delay + 0.5 * min(POLICY.miss_after_s, offer.order[1].bound_s))
    assert offer.keys[0] == reservation.key


def test_a_pair_that_almost_never_grants_goes_after_the_others_however_cheap_its_no() -> None:
    full = Key("asia-northeast1", "reservation", SHAPE)
    ledger = Ledger()
    for i in range(8):
        ledger.record(full, i * 900.0, FAILED, i * 900.0 + 20.0)
    candidates = [ao.Candidate(full, ao.Advice.absent("400 INVALID_ARGUMENT")), *_candidates(east=0.5)]
    offer = ao.plan(candidates, JOB, ledger, 8 * 900.0 + 3600.0, ao.Policy(min_score=0.1))
    assert offer.order[-1].key == full and offer.order[-1].score < 0.1
    assert "offered after the pairs above it" in offer.reasons()[full]
    anyway = ao.plan(candidates, JOB, ledger, 8 * 900.0 + 3600.0, ao.Policy(min_score=0.0))
    assert anyway.keys[0] == full  # its no comes in 20 s: by time alone it is the cheapest try


def test_the_hedge_when_on_offers_the_pair_likeliest_to_grant_within_its_target_beside_the_first() -> None:
    ledger = Ledger()
    for i in range(4):
        ledger.record(WEST, i * 900.0, GRANTED, i * 900.0 + 600.0)  # sure but slow
        ok = i % 2 == 0
        ledger.record(ASIA, i * 900.0, GRANTED if ok else FAILED, i * 900.0 + (60.0 if ok else 300.0))  # fast, unsure
    candidates = _candidates(west=0.95, asia=0.5)
    alone = ao.plan(candidates, JOB, ledger, 3600.0)
    assert alone.keys == [WEST, ASIA] and alone.first == 1  # off by default
    hedged = ao.plan(candidates, JOB, ledger, 3600.0, ao.Policy(hedge_target_s=120.0, hedge_min=0.05))
    assert hedged.keys == [WEST, ASIA] and hedged.first == 2  # ASIA's 1 in 10 within 2 min is worth its request
    assert hedged.due(0.0, [])[0] == [WEST, ASIA]
    assert ao.plan(candidates, JOB, ledger, 3600.0, ao.Policy(hedge_target_s=120.0)).first == 1  # below hedge_min


def test_missing_advice_for_every_pair_is_today_s_race_and_says_so() -> None:
    offer = ao.plan(_candidates(east=None, west=None, asia=None), JOB, Ledger(), 0.0)
    assert offer.race and offer.first == 3
    assert offer.due(0.0, []) == ([EAST, WEST, ASIA], float("inf"))
    assert "advice missing for every pair (403 PERMISSION_DENIED): AllAtOnce" in offer.note
    assert offer.waves() == [ao.Wave(0.0, (EAST, WEST, ASIA))]
    assert "no advice (403 PERMISSION_DENIED): race" in offer.reasons()[ASIA]


def test_where_google_is_silent_the_ledger_alone_sinks_a_region_that_never_grants() -> None:
    ledger = Ledger()
    for i in range(6):
        ledger.record(ASIA, i * 900.0, FAILED, i * 900.0 + 20.0)
    offer = ao.plan(_candidates(east=0.55, west=0.5, asia=None), JOB, ledger, 6 * 900.0)
    assert offer.keys[-1] == ASIA
    assert "no advice (403 PERMISSION_DENIED), ledger alone" in offer.reasons()[ASIA]
    assert "no advice for asia-northeast1/dws" in offer.note


def test_a_spot_rung_whose_estimated_uptime_is_short_is_skipped_with_the_reason() -> None:
    short = ao.Candidate(SPOT, ao.Advice(0.99, estimated_uptime_s=40 * 60))
    offer = ao.plan([short, *_candidates(east=0.5)], JOB, Ledger(), 0.0)
    assert SPOT not in offer.keys
    assert offer.reasons()[SPOT].startswith(
        "Spot skipped: estimatedUptime 40 min < checkpoint interval + restore 55 min"
    )
    long = ao.Candidate(SPOT, ao.Advice(0.99, estimated_uptime_s=3 * 3600))
    assert ao.plan([long, *_candidates(east=0.5)], JOB, Ledger(), 0.0).keys[0] == SPOT


def test_a_job_whose_every_pair_is_skipped_is_offered_nowhere_and_says_why() -> None:
    offer = ao.plan([ao.Candidate(SPOT, ao.Advice(0.9, estimated_uptime_s=60.0))], JOB, Ledger(), 0.0)
    assert (offer.keys, offer.due(0.0, [])[0], offer.race) == ([], [], False)
    assert "each was skipped" in offer.note and SPOT in offer.reasons()


def test_spot_without_an_estimated_uptime_is_kept_but_offered_last() -> None:
    unknown = ao.Candidate(SPOT, ao.Advice(0.99))
    offer = ao.plan([unknown, *_candidates(east=0.2)], JOB, Ledger(), 0.0)
    assert offer.keys == [EAST, SPOT] and "Spot without estimatedUptime" in offer.reasons()[SPOT]


def test_advice_is_read_from_a_capacity_advice_response() -> None:
    body = {"recommendations": [{"scores": {"obtainability": 0.7, "estimatedUptime": "5400s"}, "shards": []}]}
    assert ao.Advice.from_response(body) == ao.Advice(0.7, 5400.0)
    assert ao.Advice.from_response({"recommendations": []}).missing == "the answer holds no obtainability score"


def test_the_request_planb_sends_is_compute_v1_s_and_the_emulator_s_answer_reads_back(tmp_path: Path) -> None:
    key = Key("us-east5", "spot", "a3-highgpu-8g:2")
    body = ao.capacity_request(key, ["us-east5-a", "us-east5-b"], "a3-highgpu-8g", 2)
    method = discovery.find_method("POST", "/compute/v1/projects/p/regions/us-east5/advice/capacity")
    assert method is not None and method.id == "compute.advice.capacity"
    assert conformance.checked_request(method, body) == body
    answer = advice.capacity(Store(tmp_path), "us-east5", body)
    read = ao.Advice.from_response(answer)
    # planb's model's priors (0.5, a day's uptime), the uptime as the longest value Google's page gives (3,600 s).
    assert read.obtainability == 0.5 and read.estimated_uptime_s == 3600.0
    # A TPU machine type: nothing to view (Google shows no TPU availability there), read as no score.
    tpu = ao.capacity_request(key, ["us-east5-a"], "ct6e-standard-4t", 4)
    assert advice.capacity(Store(tmp_path), "us-east5", tpu) == {}
    assert ao.Advice.from_response({}).obtainability is None


@pytest.mark.parametrize("rung", ["reservation", "dws", "spot", "on-demand"])
def test_each_rung_asks_for_its_provisioning_model(rung: str) -> None:
    body = ao.capacity_request(Key("r", rung, SHAPE), ["r-a"], "ct6e-standard-4t", 4)
    model = body["instanceProperties"]["scheduling"]["provisioningModel"]
    assert model == ao.PROVISIONING_MODELS[rung]
