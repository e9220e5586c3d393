"""Advice-ordered dispatch's failure paths, with the GKE emulator's real ``advice.capacity`` answers, for a GPU shape
(A3): Google gives no advice for a TPU one, which the keeper does not ask about (tests/unit/regions).

The policy (planb.regions.dispatcher.offer_order) plans from what
``planb.regions.dispatcher.google_advice.ask`` reads off the emulator's HTTP API (compute v1
``compute.advice.capacity``, scored by planb's model of the capacity signals), the offer is walked with
``OfferPlan.due`` against scripted answers of GKE (a grant, a stockout said, a queue that never answers), the ledger
learns from each request, and ``planb status --capacity``'s text is rendered from what the manager would hold:

* advice refused (403, 404, a shape Google does not take): AllAtOnce, and status says why;
* the region Google rates best stocks out: the offer widens (at once on a stockout said, at the pair's bound on a
  silent queue), the job runs in another region, and the next job is offered elsewhere first;
* a Spot rung whose ``estimatedUptime`` is shorter than checkpoint interval + restore: skipped, with the reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from planb.local.gke_emulator.emulator import RunningEmulator
from planb.regions.dispatcher import ledger_store as cs
from planb.regions.dispatcher import offer_order as ao
from planb.regions.dispatcher.google_advice import Advice, Post, ask
from planb.regions.dispatcher.ledger import FAILED, GRANTED, WITHDRAWN, Key, Ledger
from planb.status import obtainability
from tests.support.integration.gke.gke_api import call
from tests.support.integration.gke.modules import PROJECT

MACHINE = "a3-highgpu-8g"
SHAPE = f"{MACHINE}:2"
EAST, WEST, ASIA = (Key(r, "dws", SHAPE) for r in ("us-east5", "europe-west4", "asia-northeast1"))
JOB = ao.Job(checkpoint_interval_s=45 * 60, restore_s=10 * 60)
POLICY = ao.Policy()
T0 = 1_800_000_000.0


def _post(emulator: RunningEmulator) -> Post:
    return lambda path, body: call(emulator, "POST", path, body)


def _signal(emulator: RunningEmulator, key: Key, outcome: str, **extra: Any) -> None:
    model = ao.PROVISIONING_MODELS[key.rung]
    body = {"zone": f"{key.region}-a", "machineType": MACHINE, "provisioningModel": model, "outcome": outcome}
    status, answer = call(emulator, "POST", "/planb/v1/capacity-signals", {**body, **extra})
    assert status == 200, answer


def _advice(emulator: RunningEmulator, key: Key) -> Advice:
    return ask(_post(emulator), PROJECT, key, [f"{key.region}-a"])


@dataclass(frozen=True)
class Outcome:
    """What GKE does with a request of the pair: ``grant`` or ``stockout`` after ``after_s``; ``wait``: queue on."""

    kind: str
    after_s: float = 0.0


def _dispatch(offer: ao.OfferPlan, gke: dict[Key, Outcome], ledger: Ledger) -> tuple[Key, float, list[ao.Attempt]]:
    """Walk the offer as a dispatcher would: ask what ``due`` says, when it says; the winner, when it was granted, and
    the requests made. The ledger records each ask and how it ended (the others withdrawn at the grant)."""
    attempts: list[ao.Attempt] = []
    now = 0.0
    for _ in range(50):
        keys, wake = offer.due(now, attempts)
        for key in keys:
            attempts.append(ao.Attempt(key, now))
            ledger.ask(key, T0 + now)
        answers = [
            (a.asked_s + gke[a.key].after_s, i)
            for i, a in enumerate(attempts)
            if a.failed_s is None and gke[a.key].kind != "wait"
        ]
        at, index = min(answers, default=(math.inf, -1))
        if at == math.inf and wake == math.inf:
            raise AssertionError(f"the offer stalled at {now} s: {attempts}")
        if wake < at:
            now = wake
            continue
        now, attempt = at, attempts[index]
        if gke[attempt.key].kind == "grant":
            ledger.end(attempt.key, T0 + attempt.asked_s, GRANTED, T0 + now)
            for other in attempts:
                if other is not attempt and other.failed_s is None:
                    ledger.end(other.key, T0 + other.asked_s, WITHDRAWN, T0 + now)
            return attempt.key, now, attempts
        attempts[index] = ao.Attempt(attempt.key, attempt.asked_s, now)
        ledger.end(attempt.key, T0 + attempt.asked_s, FAILED, T0 + now)
    raise AssertionError(f"no grant after 50 steps: {attempts}")


def _status_text(ledger: Ledger, advice: cs.LastAdvice, now: float) -> str:
    stored = obtainability.Obtainability(
        "kueue-system/planb-regions-ledger", True, now, obtainability.rows(ledger, now), advice
    )
    return obtainability.text(stored)


def test_advice_refused_403_404_or_for_the_shape_falls_back_to_the_race_and_says_why(
    emulator: RunningEmulator,
) -> None:
    assert call(emulator, "POST", "/planb/v1/advice", {"machineType": "a3-*", "refuse": True})[0] == 200
    assert call(emulator, "POST", "/planb/v1/http-faults", {"status": 403, "method": "POST"})[0] == 200
    east = _advice(emulator, EAST)
    assert call(emulator, "POST", "/planb/v1/http-faults", {"status": 404, "method": "POST"})[0] == 200
    west = _advice(emulator, WEST)
    asia = _advice(emulator, ASIA)  # the refused shape: Google's 400
    assert east.missing.startswith("403 PERMISSION_DENIED: Injected"), east
    assert west.missing.startswith("404 NOT_FOUND: Injected"), west
    assert asia.missing.startswith("400 INVALID_ARGUMENT: ") and MACHINE in asia.missing, asia
    candidates = [ao.Candidate(EAST, east), ao.Candidate(WEST, west), ao.Candidate(ASIA, asia)]
    offer = ao.plan(candidates, JOB, Ledger(), T0)
    # AllAtOnce: every region at once, nothing more to wait for.
    assert offer.race and offer.due(0.0, []) == ([EAST, WEST, ASIA], math.inf)
    assert offer.note.startswith("advice missing for every pair (400 INVALID_ARGUMENT: ")
    assert "403 PERMISSION_DENIED" in offer.note and "404 NOT_FOUND" in offer.note
    winner, _, attempts = _dispatch(
        offer, {EAST: Outcome("wait"), WEST: Outcome("grant", 60.0), ASIA: Outcome("stockout", 45.0)}, Ledger()
    )
    # N regions, N requests, and a failed one asked again at once (AllAtOnce makes a fresh copy): the race's price.
    assert winner == WEST
    assert [(a.key, a.asked_s) for a in attempts] == [(EAST, 0.0), (WEST, 0.0), (ASIA, 0.0), (ASIA, 45.0)]
    text = _status_text(Ledger(), cs.last_advice(offer, candidates, "default/job-1", T0), T0)
    race = {line.split()[0]: line for line in text.splitlines() if "at once (race)" in line}
    assert set(race) == {"us-east5", "europe-west4", "asia-northeast1"}
    assert race["us-east5"].endswith(f"missing: fell back to the race, because {east.missing}")
    assert race["asia-northeast1"].endswith(f"missing: fell back to the race, because {asia.missing}")
    assert "AllAtOnce (no advice)" in text


def test_one_region_refused_is_ordered_by_the_ledger_alone_and_says_so(emulator: RunningEmulator) -> None:
    assert call(emulator, "POST", "/planb/v1/http-faults", {"status": 403, "method": "POST"})[0] == 200
    candidates = [ao.Candidate(key, _advice(emulator, key)) for key in (EAST, WEST)]
    assert candidates[0].advice.obtainability is None and candidates[1].advice.obtainability == 0.5
    offer = ao.plan(candidates, JOB, Ledger(), T0)
    assert not offer.race and "no advice for us-east5/dws" in offer.note
    pairs = {p.key: p for p in cs.last_advice(offer, candidates, "default/job-1", T0).pairs}
    assert pairs[EAST].source == f"planb's ledger (no advice: {candidates[0].advice.missing})"
    assert pairs[WEST].source == "Google's advice"


def test_the_region_rated_best_stocks_out_the_offer_widens_within_the_bound_and_the_job_runs_elsewhere(
    emulator: RunningEmulator,
) -> None:
    _signal(emulator, EAST, "GRANT", count=6)
    _signal(emulator, WEST, "GRANT")
    _signal(emulator, WEST, "STOCKOUT")
    _signal(emulator, ASIA, "STOCKOUT", count=3)
    candidates = [ao.Candidate(key, _advice(emulator, key)) for key in (ASIA, WEST, EAST)]
    assert [c.advice.obtainability for c in candidates] == [0.2, 0.5, 0.875]
    offer = ao.plan(candidates, JOB, Ledger(), T0)
    assert offer.keys == [EAST, WEST, ASIA] and offer.first == 1
    bound = offer.order[0].bound_s
    assert POLICY.min_bound_s <= bound <= POLICY.max_bound_s

    # A stockout said (the request Failed): the next region joins at once, and grants.
    ledger = Ledger()
    gke = {EAST: Outcome("stockout", 30.0), WEST: Outcome("grant", 120.0), ASIA: Outcome("grant", 60.0)}
    winner, granted_at, attempts = _dispatch(offer, gke, ledger)
    assert (winner, granted_at) == (WEST, 150.0)
    assert [(a.key, a.asked_s, a.failed_s) for a in attempts] == [(EAST, 0.0, 30.0), (WEST, 30.0, None)]

    # A silent queue (DWS "waiting for resources"): the next region joins at the bound, not before; the first stays.
    silent = Ledger()
    gke = {EAST: Outcome("wait"), WEST: Outcome("grant", 120.0), ASIA: Outcome("grant", 60.0)}
    winner, granted_at, attempts = _dispatch(offer, gke, silent)
    assert (winner, granted_at) == (WEST, bound + 120.0)
    assert [(a.key, a.asked_s) for a in attempts] == [(EAST, 0.0), (WEST, bound)]
    assert [a.as_of(T0 + bound + 120.0)[0] for a in silent.asks[EAST]] == [WITHDRAWN]

    # The stockout is seen by Google's model too; the next job is offered elsewhere first, and status shows both.
    _signal(emulator, EAST, "STOCKOUT")
    now = T0 + 200.0
    again = [ao.Candidate(key, _advice(emulator, key)) for key in (ASIA, WEST, EAST)]
    next_offer = ao.plan(again, JOB, ledger, now)
    assert next_offer.keys[0] == WEST and next_offer.keys.index(EAST) > 0
    text = _status_text(ledger, cs.last_advice(next_offer, again, "default/job-2", now), now)
    ledger_part = text.split("Last advice used")[0]
    rows = {tuple(line.split()[:2]): line.split() for line in ledger_part.splitlines() if line.startswith("  ")}
    assert rows[("us-east5", "dws")][3:6] == ["1", "0", "1"]  # asked, granted, stockouts
    assert rows[("europe-west4", "dws")][3:6] == ["1", "1", "0"]
    first = next(line for line in text.splitlines() if line.endswith("Google's advice") and " first " in line)
    assert first.split()[0] == "europe-west4"


def test_a_spot_rung_whose_estimated_uptime_is_shorter_than_checkpoint_and_restore_is_skipped_with_the_reason(
    emulator: RunningEmulator,
) -> None:
    east_spot, west_spot = Key("us-east5", "spot", SHAPE), Key("europe-west4", "spot", SHAPE)
    _signal(emulator, east_spot, "PREEMPTION", count=40, uptimeSeconds=600)  # Spot VMs there live ~45 min: 600 s
    candidates = [ao.Candidate(key, _advice(emulator, key)) for key in (east_spot, west_spot, EAST)]
    short, long = candidates[0].advice, candidates[1].advice
    need = JOB.checkpoint_interval_s + JOB.restore_s
    assert short.estimated_uptime_s is not None and short.estimated_uptime_s < need, short
    assert (short.estimated_uptime_s, long.estimated_uptime_s) == (600.0, 3600.0)  # Google's values, not a mean
    assert candidates[2].advice.estimated_uptime_s is None
    offer = ao.plan(candidates, JOB, Ledger(), T0)
    assert east_spot not in offer.keys and west_spot in offer.keys and EAST in offer.keys
    reason = (
        f"Spot skipped: estimatedUptime {short.estimated_uptime_s / 60:.0f} min < checkpoint interval + restore "
        f"{need / 60:.0f} min (planb's policy: a job preempted before its next checkpoint makes no progress)"
    )
    assert offer.reasons()[east_spot] == reason
    text = _status_text(Ledger(), cs.last_advice(offer, candidates, "default/job-1", T0), T0)
    assert f"  {east_spot}: {reason}" in text.splitlines()
    row = next(line.split() for line in text.splitlines() if line.startswith("  us-east5") and " spot " in line)
    assert row[4:6] == [f"{short.estimated_uptime_s / 60:.0f}", "min"] and "skipped" in row
