"""Advice-ordered dispatch: which regions and rungs a job is offered first, and when the offer widens.

``plan`` is the policy alone, pure, over what it is given; ``planb.regions.dispatcher.tick`` runs it as Kueue's
External MultiKueue dispatcher (``planb regions keep --dispatch``).

Google's facts, the inputs (its ``advice.capacity`` answer, the pairs, the job), are
``planb.regions.dispatcher.google_advice``.

planb's policy, the rules (each constant of ``Policy`` says why its value):

1. **Spot that dies before its checkpoint is skipped.** A Spot rung whose ``estimatedUptime`` is shorter than the
   job's checkpoint interval plus its restore time is not offered, because such a job would most likely be
   preempted before its next checkpoint after each restore and make no progress. Spot without an
   ``estimatedUptime`` is kept (nothing says it is short) but offered after every other pair (nothing says it
   is long enough either).
2. **Score.** Each pair's grant probability ``p`` is the ledger's smoothed grant rate with recency
   (``planb.regions.dispatcher.ledger``), with Google's ``obtainability`` as its prior, worth
   ``Policy.advice_weight`` asks; without advice, the ledger's own neutral prior (0.5, two asks). So planb's own misses
   sink a pair Google rates well, and a pair Google is silent on. ``p`` is then mixed, ``Policy.state_weight`` to one
   (all of it, as tuned), with the ledger's ``state_rate``: 0 right after a miss, 1 right after a grant, back to the
   day's rate (Google's prior in it) with a 30-minute half-life. So a stockout seen demotes the pair at once, and the
   demotion decays as the episode likely ends. A reservation rung whose reservation was read
   (``planb.regions.dispatcher.reservation_room``: Compute Engine's ``reservations.get``, its VMs or chips in use)
   has its state read, not guessed: ``p`` is ``Policy.room_fits`` where the room holds the job's slice, else 0 (so it
   goes after every other pair, rule 3), because a reservation grants exactly while it has room and says no at once when
   it has not; every such no is a request that a free read spares.
3. **Order.** A try of a pair takes ``t = p * d + (1 - p) * min(m, bound)``: ``d`` the ledger's mean time to a
   grant there over the last hours (``DELAY_HALF_LIFE_S``), ``m`` its mean time to a miss; a pair the ledger has
   not seen grant (or miss) takes what its rung took in the other regions for the same shape, else
   ``Policy.unseen_delay_s`` (and, for the miss, ``Policy.miss_after_s`` on a rung that queues, DWS, and
   ``Policy.unseen_miss_s`` on one that answers). ``d`` is then shrunk by
   ``1 - Policy.optimism / sqrt(1 + grants seen)``, so a pair seen little, or long ago, is tried again rather
   than never (the ledger learns only from the pairs planb asks). Pairs go by ``(t + request_cost_s) / p``, lowest
   first, because tried one after another that order minimises the expected wait plus ``request_cost_s`` per
   request (swapping two neighbours ``i`` before ``j`` is no worse exactly when ``(t_i + c) / p_i <= (t_j + c) /
   p_j``). Ties by the higher ``p``, then the order given (the ladder's). A pair whose ``p`` is below
   ``Policy.min_score`` goes after every other (Spot without ``estimatedUptime`` last of all), because a pair that
   answers fast looks cheap to try even when it almost never grants, and each try is a request that fails.
4. **First offer.** The fewest pairs, in that order, whose chance that at least one grants within its bound,
   ``1 - prod(1 - p * (1 - exp(-bound / d)))`` (the grant delay taken as exponential), reaches
   ``Policy.confidence``: normally one; a pair at or below ``Policy.min_score`` joins only later (rule 5),
   because it adds (almost) no chance for its request. The hedge (``Policy.hedge_target_s``, 90 s; infinite turns
   it off): where the first pair alone is unlikely to grant within ``hedge_target_s``, the pair likeliest to
   (``p`` times the chance its delay, lognormal with ``DELAY_SPREAD``, is within it) joins it, up to ``hedge_max``
   pairs, while the chance none does is above ``1 - hedge_confidence`` and the pair's own chance is at least
   ``hedge_min``. It buys a median closer to the oracle's with requests (``Policy.hedge_target_s`` says how many).
5. **Widening, a bound per pair.** A pair asked may wait ``bound = bound_factor * d`` (its own expected grant
   delay, before rule 3's shrink; at least ``min_bound_s``, at most ``max_bound_s``) before the next pair in the
   order joins the offer; a pair that answers with a failure (a stockout said is a no, not a wait) lets the next
   join at once. A request still waiting past its bound stays (a DWS queue keeps its place): the first grant wins,
   as under AllAtOnce. After ``full_after_s`` every pair not yet asked joins. Once every pair was asked, the one
   first in the order whose last failure is ``retry_after_s`` old (doubled at each further failure of it in the
   job) is asked again, one at a time, while nothing asked is within its bound, because a stockout comes in
   episodes and asking sooner mostly adds requests that fail too. ``OfferPlan.due`` says, from the job's requests
   so far, what to ask now and when to look again.
6. **Missing advice.** Where no remaining pair has advice because every call for one failed (a 403, a 404, a 400,
   no answer), the plan is AllAtOnce, and says so: every region at once (MultiKueue's default dispatcher), each region's
   ladder in its own order, because a failed call says something is wrong with the advice source, and the race is
   what planb has measured (docs/regions.md). A pair without advice by design (``Advice.by_design``: a TPU shape,
   which ``advice.capacity`` does not show and the keeper does not ask about) is no failure: it is ordered by its
   reservation read (rule 2) and the ledger with its neutral prior, as a pair whose call failed among pairs with
   advice is, because for a TPU job no advice is the normal state, and racing every TPU job would cost every one of
   them a request in every region, what advice-ordered dispatch exists to spare.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from planb.regions.dispatcher.google_advice import PROVISIONING_MODELS, Advice, Candidate, Job, capacity_request
from planb.regions.dispatcher.ledger import PRIOR, PRIOR_WEIGHT, Key, Ledger, Score
from planb.regions.dispatcher.offer_plan import Attempt, OfferPlan, Ranked, Wave

#: Google's side, kept importable from here (hack/bench_dispatch.py and the tests read them as ``offer_order``'s).
__all__ = [
    "PROVISIONING_MODELS",
    "Advice",
    "Attempt",
    "Candidate",
    "Job",
    "OfferPlan",
    "Policy",
    "Ranked",
    "Wave",
    "capacity_request",
    "plan",
    "spot_too_short",
]


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min"


@dataclass(frozen=True)
class Policy:
    """planb's policy: its bounds and thresholds. The values marked *swept* are ``hack/bench_dispatch.py --sweep``'s
    pick on its tuning seeds 1-12, never on the seeds BENCHMARKS.md reports:
    the most of its three goals met (at most 1.5 requests a job, a median within 10% of the oracle's, a p95 no worse
    than AllAtOnce's), then the smallest median over the oracle's; the others are set by their reason. The
    figures quoted are means over those seeds, with the reservations read (rule 2); the pick met 28 of the 36 goals
    there. What earlier sweeps picked, and why each value changed: BENCHMARKS.md, "How the policy's values were
    picked"."""

    #: *Swept* (2, 3; as many goals met with either): a pair may wait 3 times its expected grant delay before the
    #: next joins (rule 5), because the grant delay varies from job to job (a third either way on the replayed
    #: traces) and a wait of 3 delays is rarely a slow grant, mostly a queue in a stockout; at 2 the offer widened on
    #: slow grants: 1.58 requests a job against 1.48, for a median 2 points closer.
    bound_factor: float = 3.0
    #: The bound is at least 2 min, because a grant seen in seconds must not make the next pair join in seconds...
    min_bound_s: float = 120.0
    #: *Swept* (20, 10 min; 2026-12-07, TPU jobs without advice beside GPU jobs with it): ...and at most 10 min,
    #: because a DWS queue seen to take half an hour must not hold every other pair back: with the hedge at 300 s, 51
    #: goals of 60 against 50 at 20 min (the hedge below made most of the difference).
    max_bound_s: float = 600.0
    #: The grant delay assumed of a pair whose rung the ledger has seen grant nowhere: 5 min, a DWS grant's minutes
    #: and a reservation's seconds between.
    unseen_delay_s: float = 300.0
    #: *Swept* (0.5, 0.8): the delay used to order is shrunk by ``optimism / sqrt(1 + grants
    #: seen)`` (rule 3), so a pair the ledger saw little is tried rather than never: 0.5, 28 goals of 36 against 26
    #: at 0.8, the median +8% over the oracle's against +12%, for 1.40 requests a job against 1.36.
    optimism: float = 0.5
    #: *Swept* (0, 0.5, 1): ``p`` is this much the ledger's state (its last answer fading back to the day's rate)
    #: and the rest its smoothed rate (rule 2): 1, the state alone. At 0 the policy asked again pairs that had just
    #: failed: 1.43 requests a job against 1.33, and 9 goals of 18 met on the tuning seeds against 11 (0.5: 1.36, 10).
    state_weight: float = 1.0
    #: A request not granted within 10 min counts as a miss in the ledger (``Ledger.score``'s ``within_s``).
    miss_after_s: float = 600.0
    #: A failed pair is asked again no sooner than 10 min after, doubled at each further failure in the job, because
    #: a stockout lasts one to two hours in episodes; the sweep found 20 min no different.
    retry_after_s: float = 600.0
    #: *Swept* (0.5, 0.7): the first offer's chance that a pair grants within its bound: 0.5, so a pair that grants
    #: more often than not is offered alone; at 0.7, 1.36 requests a job against 1.33 and one goal fewer, for a
    #: median a point closer.
    confidence: float = 0.5
    #: Every pair not yet asked joins after an hour, so no job waits longer than that for AllAtOnce.
    full_after_s: float = 3600.0
    #: Google's obtainability counts as two of planb's own asks, as much as the ledger's own prior, because it is a
    #: forecast for the zone at large (planb's asks are its own shape's outcomes) and planb's misses must outweigh
    #: it within a few jobs.
    advice_weight: float = 2.0
    #: *Swept* (15, 30 s): a request is worth a quarter of a minute of waiting (rule 3), because each request is work
    #: for GKE and a copy to clean up; at 30 s, the same goals met and the same median (1.39 requests a job against
    #: 1.40, a worse p95 at worst).
    request_cost_s: float = 15.0
    #: *Swept* (60, 600 s): the time to a no assumed of a pair whose rung the ledger has seen fail nowhere, on a rung
    #: that answers (reservation, on-demand, Spot: a stockout is said within minutes); a rung that queues (DWS) takes
    #: ``miss_after_s``. 1 min: 28 goals of 36 against 27 at 10 min, because at 10 min an unseen reservation looked as
    #: slow as a DWS queue and was never tried while another pair granted.
    unseen_miss_s: float = 60.0
    #: *Swept* (0, 0.1): a pair whose ``p`` is below this is offered after every pair at or above it (rule 3), and
    #: one at or below it joins no first offer (rule 4): 0, because with the reservations read (rule 2) the pair
    #: that never grants, a full reservation, has ``p`` 0 and goes last anyway; at 0.1, the same goals, requests
    #: (1.39) and median.
    min_score: float = 0.0
    #: *Swept* (90, 300 s; 2026-12-07, on TPU jobs without advice and GPU jobs with it, ``hack/bench_dispatch.py
    #: --sweep --grid max_bound_s=1200,600 --grid hedge_target_s=90,300`` with the other knobs at their picks): the
    #: hedge (rule 4), at 300 s: a job whose first pair is unlikely to grant within this many seconds gets the pair
    #: likeliest to in the same first offer. At 300 s (and a 10 min bound) 51 goals of 60 against 40 at 90 s: the p95
    #: of TPU jobs over the race's on 2 of the 12 seeds against 10 (GPU jobs: 1 against 4), for 1.35 requests a TPU
    #: job against 1.31 and 1.25 a GPU job against 1.38 (means over the seeds); first offers of two pairs went from
    #: 17% of TPU jobs to 21%, and from 23% of GPU jobs to 8%.
    hedge_target_s: float = 300.0
    #: The hedge adds pairs while the chance none grants within ``hedge_target_s`` is above ``1 - hedge_confidence``...
    hedge_confidence: float = 0.8
    #: ...each the pair likeliest to grant within it, only if that chance is at least ``hedge_min``...
    hedge_min: float = 0.3
    #: ...and at most this many pairs in the first offer.
    hedge_max: int = 2
    #: The chance a reservation read with room for the job grants it (rule 2): 0.95, not 1, because the read is
    #: seconds old when the request lands and another consumer of the reservation may take the room first (the
    #: request's failure then lets the next pair join at once, rule 5).
    room_fits: float = 0.95

    def bound(self, grant_delay_s: float) -> float:
        return min(self.max_bound_s, max(self.min_bound_s, self.bound_factor * grant_delay_s))


def spot_too_short(candidate: Candidate, job: Job) -> str:
    """Why a Spot pair is skipped (rule 1), or an empty string."""
    uptime = candidate.advice.estimated_uptime_s
    if candidate.provisioning_model != "SPOT" or uptime is None:
        return ""
    need = job.checkpoint_interval_s + job.restore_s
    if uptime >= need:
        return ""
    return (
        f"Spot skipped: estimatedUptime {_minutes(uptime)} < checkpoint interval + restore {_minutes(need)} "
        "(planb's policy: a job preempted before its next checkpoint makes no progress)"
    )


def _prior(advice: Advice, policy: Policy) -> tuple[float, float]:
    """The prior of a pair's grant rate and its weight (rule 2)."""
    if advice.obtainability is not None:
        return advice.obtainability, policy.advice_weight
    return PRIOR, PRIOR_WEIGHT


def _pool(scores: Sequence[Score]) -> tuple[float | None, float | None]:
    """The weighted mean times to a grant and to a miss over the same rung's pairs, None where none was seen."""
    grants = sum(s.timed_grants for s in scores)
    misses = sum(s.timed_misses for s in scores)
    grant = sum(s.timed_grants * (s.grant_delay_s or 0.0) for s in scores) / grants if grants else None
    miss = sum(s.timed_misses * (s.miss_delay_s or 0.0) for s in scores) / misses if misses else None
    return grant, miss


#: The spread of a grant's delay around its mean, a lognormal's sigma: a third either way, as the ledger's delays vary.
DELAY_SPREAD = 0.35


def _within(target_s: float, grant_s: float) -> float:
    """The chance a grant whose mean delay is ``grant_s`` comes within ``target_s`` (lognormal, ``DELAY_SPREAD``)."""
    if not math.isfinite(target_s):
        return 1.0
    return 0.5 * math.erfc(-math.log(target_s / max(grant_s, 1.0)) / (DELAY_SPREAD * math.sqrt(2.0)))


def _rank(
    candidate: Candidate,
    score: Score,
    pooled: tuple[float | None, float | None],
    policy: Policy,
    index: int,
) -> tuple[tuple[bool, bool, float, float, int], Ranked, float]:
    """One pair's place (the sort key), its ranking with the reason, and its chance of a grant within the hedge target
    (rules 2 to 4; `pooled`: its rung's grant and miss delays over the pairs of the rung)."""
    advice = candidate.advice
    if advice.obtainability is not None:
        source = f"obtainability {advice.obtainability:.2f} (Google)"
    elif advice.by_design:
        source = "no advice by design (not asked), ledger alone"
    else:
        source = f"no advice ({advice.missing}), ledger alone"
    rung_grant, rung_miss = pooled
    prior_delay = policy.unseen_delay_s if rung_grant is None else rung_grant
    grant = prior_delay if score.grant_delay_s is None else score.grant_delay_s
    bound = policy.bound(grant)
    grant *= 1.0 - policy.optimism / math.sqrt(1.0 + score.timed_grants)
    miss = score.miss_delay_s if score.miss_delay_s is not None else rung_miss
    if miss is None:
        miss = policy.miss_after_s if candidate.queued else policy.unseen_miss_s
    rate = (1.0 - policy.state_weight) * score.rate + policy.state_weight * score.state_rate
    if candidate.room is not None:
        rate = policy.room_fits if candidate.room.fits else 0.0
        source += f"; {candidate.room} (Compute Engine reservations.get), its state read"
    score = replace(score, rate=rate)
    expected = score.rate * grant + (1.0 - score.rate) * min(miss, bound)
    cost = (expected + policy.request_cost_s) / max(score.rate, 1e-6)
    why = (
        f"{source}; ledger {score.grants:.1f} granted, {score.misses:.1f} missed -> p {score.rate:.2f}; "
        f"grants in {grant:.0f} s, bound {bound:.0f} s; a try takes {expected:.0f} s, {cost:.0f} s per grant"
    )
    unknown_spot = candidate.provisioning_model == "SPOT" and advice.estimated_uptime_s is None
    if unknown_spot:
        why += "; Spot without estimatedUptime: offered after every other pair"
    elif score.rate < policy.min_score:
        why += f"; p below {policy.min_score:.2f}: offered after the pairs above it"
    within = score.rate * (1.0 - math.exp(-bound / max(grant, 1.0)))
    key = (unknown_spot, score.rate < policy.min_score, cost, -score.rate, index)
    return (
        key,
        Ranked(candidate.key, score.rate, expected, why, within, bound),
        score.rate * _within(policy.hedge_target_s, grant),
    )


def _first_wave(order: list[Ranked], quick: dict[Key, float], policy: Policy) -> tuple[list[Ranked], int]:
    """The order with its first wave in front, and that wave's size (rules 4 and 5): the best pairs until the chance
    that none grants within its bound falls under the confidence; a single pair hedged with the quickest others."""
    first, none_grants = 0, 1.0
    while first < len(order) and (
        first == 0 or (1.0 - none_grants < policy.confidence and order[first].score > policy.min_score)
    ):
        none_grants *= 1.0 - order[first].within_bound
        first += 1
    if math.isfinite(policy.hedge_target_s) and first == 1:
        head, rest, none = [order[0]], order[1:], 1.0 - quick[order[0].key]
        while rest and 1.0 - none < policy.hedge_confidence and len(head) < policy.hedge_max:
            best = max(rest, key=lambda r: quick[r.key])
            if quick[best.key] < policy.hedge_min:
                break
            head.append(best)
            rest.remove(best)
            none *= 1.0 - quick[best.key]
        order, first = head + rest, len(head)
    return order, first


def plan(candidates: Sequence[Candidate], job: Job, ledger: Ledger, now: float, policy: Policy = Policy()) -> OfferPlan:
    """The offer plan for one job (the module's docstring has the rules)."""
    skipped, kept = [], []
    for candidate in candidates:
        why = spot_too_short(candidate, job)
        if why:
            skipped.append((candidate.key, why))
        else:
            kept.append(candidate)
    args = (policy.retry_after_s, policy.full_after_s)
    if not kept:
        return OfferPlan((), tuple(skipped), 0, *args, False, "no pair left to offer: each was skipped")
    if not any(c.advice.obtainability is not None or c.advice.by_design for c in kept):
        whys = sorted({c.advice.missing or "no answer" for c in kept})
        note = (
            f"advice missing for every pair ({'; '.join(whys)}): AllAtOnce, every region at once "
            "(MultiKueue's default dispatcher), each region's ladder in its own order"
        )
        race = tuple(Ranked(c.key, math.nan, math.nan, f"no advice ({c.advice.missing}): race") for c in kept)
        return OfferPlan(race, tuple(skipped), len(race), policy.retry_after_s, 0.0, True, note)
    scores = [ledger.score(c.key, now, policy.miss_after_s, *_prior(c.advice, policy)) for c in kept]
    pooled = {
        rung: _pool([s for c, s in zip(kept, scores, strict=True) if c.key.rung == rung])
        for rung in {c.key.rung for c in kept}
    }
    ranked = [
        _rank(candidate, score, pooled[candidate.key.rung], policy, index)
        for index, (candidate, score) in enumerate(zip(kept, scores, strict=True))
    ]
    ranked.sort(key=lambda item: item[0])
    quick = {item[1].key: item[2] for item in ranked}
    order, first = _first_wave([item[1] for item in ranked], quick, policy)
    plan_ = OfferPlan(tuple(order), tuple(skipped), first, *args, False, "")
    at = {key: wave.after_s for wave in plan_.waves() for key in wave.keys}
    order = [
        replace(
            r, reason=f"{r.reason}; offered {'first' if at[r.key] == 0 else f'after {at[r.key]:.0f} s without a grant'}"
        )
        for r in order
    ]
    missing = [c.key for c in kept if c.advice.obtainability is None and not c.advice.by_design]
    unasked = sorted({c.advice.missing for c in kept if c.advice.by_design})
    note = (
        f"{first} of {len(order)} pairs first, the next when those asked have waited past their bounds or failed, "
        f"all after {policy.full_after_s:.0f} s"
        + (f"; no advice for {', '.join(map(str, missing))}" if missing else "")
        + (f"; ordered by the reservation reads and planb's ledger, advice {'; '.join(unasked)}" if unasked else "")
    )
    return OfferPlan(tuple(order), tuple(skipped), first, *args, False, note)
