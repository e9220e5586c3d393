"""Advice-ordered dispatch: which regions and rungs a job is offered first, and when the offer widens.

Not wired into the keeper or MultiKueue yet: ``plan`` is the policy alone, pure, over what it is given.

Google's facts, the inputs. Compute Engine's capacity advice, compute v1 discovery revision 20261106, method
``compute.advice.capacity`` (``POST projects/{project}/regions/{region}/advice/capacity``,
https://cloud.google.com/compute/docs/reference/rest/v1/advice/capacity): given a machine type, a count (``size``), a
provisioning model (``STANDARD``, ``SPOT``, ``FLEX_START``, ``RESERVATION_BOUND``) and zones, it answers
recommendations whose ``scores.obtainability`` is "the likelihood of successfully obtaining (provisioning) the
requested number of VMs", 0.0 to 1.0, and whose ``scores.estimatedUptime`` is "the estimated run time of the majority
of Spot VMs in the request before preemption" (a google-duration such as ``"3600s"``). Google's page says TPU
availability cannot be viewed with it (https://cloud.google.com/compute/docs/instances/view-vm-availability,
"Limitations"), so planb must expect a refusal (400), a 403 (no permission) or a 404 for a TPU shape: ``Advice``
then carries why it is missing.

planb's policy, the rules (each constant of ``Policy`` says why its value):

1. **Spot that dies before its checkpoint is skipped.** A Spot rung whose ``estimatedUptime`` is shorter than the
   job's checkpoint interval plus its restore time is not offered, because such a job would most likely be
   preempted before its next checkpoint after each restore and make no progress. Spot without an
   ``estimatedUptime`` is kept (nothing says it is short) but offered after every other pair (nothing says it
   is long enough either).
2. **Score.** Each pair's grant probability ``p`` is the ledger's smoothed grant rate with recency
   (``planb.regions.ledger``), with Google's ``obtainability`` as its prior, worth ``Policy.advice_weight`` asks;
   without advice, the ledger's own neutral prior (0.5, two asks). So planb's own misses sink a pair Google rates
   well, and a pair Google is silent on.
3. **Order.** A try of a pair takes ``t = p * d + (1 - p) * m``: ``d`` the ledger's mean time to a grant there
   (``bound_s / 2`` before it has seen one), ``m`` its mean time to a miss (a failure answered, else the bound;
   ``bound_s`` before it has seen one). Pairs go by ``(t + request_cost_s) / p``, lowest first, because tried one
   after another that order minimises the expected wait plus ``request_cost_s`` per request (swapping two
   neighbours ``i`` before ``j`` is no worse exactly when ``(t_i + c) / p_i <= (t_j + c) / p_j``); so a likely
   but slow rung (DWS) does not go before a nearly as likely fast one (a reservation), nor a quick failure before
   a likely grant. Ties by the higher ``p``, then the order given (the ladder's).
4. **First offer.** The fewest pairs, in that order, whose chance that at least one grants within the bound,
   ``1 - prod(1 - p * (1 - exp(-bound_s / d)))`` (the grant delay taken as exponential), reaches
   ``Policy.confidence``: normally one.
5. **Widening.** One more pair every ``bound_s`` without a grant, and one more at once for each pair that answers
   with a failure (a stockout said is a no, not a wait); after ``full_after_bounds`` bounds every remaining pair.
   Requests already made stay: the first grant wins, as in today's race. A pair that answered with a failure is
   asked again no sooner than ``bound_s`` after (``OfferPlan.retry_after_s``), because a stockout comes in episodes
   and asking sooner mostly adds requests that fail too.
6. **Missing advice.** Where no remaining pair has advice, the plan is today's race, and says so: every region at
   once (MultiKueue's AllAtOnce), each region's ladder in its own order, because without Google's forecast planb
   has only its ledger, and the race is what planb has measured (docs/regions.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from planb.regions.ledger import PRIOR, PRIOR_WEIGHT, Key, Ledger

#: The provisioning model of each kind of rung (compute v1 CapacityAdviceRequestInstancePropertiesScheduling).
PROVISIONING_MODELS = {
    "reservation": "RESERVATION_BOUND",
    "on-demand": "STANDARD",
    "dws": "FLEX_START",
    "spot": "SPOT",
}


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min"


@dataclass(frozen=True)
class Advice:
    """Google's answer for one pair: its obtainability and, for Spot, estimatedUptime; or why there is none."""

    obtainability: float | None
    estimated_uptime_s: float | None = None
    missing: str = ""

    @staticmethod
    def from_response(body: dict[str, Any]) -> Advice:
        """Read a CapacityAdviceResponse: the first recommendation's scores (Google: "Initially the API will
        provide one recommendation")."""
        recommendations = body.get("recommendations") or []
        scores = (recommendations[0].get("scores") or {}) if recommendations else {}
        value = scores.get("obtainability")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
            return Advice.absent("the answer holds no obtainability score")
        uptime = scores.get("estimatedUptime")
        seconds = None
        if isinstance(uptime, str) and uptime.endswith("s"):
            try:
                seconds = float(uptime[:-1])
            except ValueError:
                seconds = None
        return Advice(float(value), seconds)

    @staticmethod
    def absent(why: str) -> Advice:
        """No advice for the pair: ``why`` (``403 PERMISSION_DENIED``, ``400 machine type not supported``...)."""
        return Advice(None, None, why)


@dataclass(frozen=True)
class Candidate:
    """One pair a job could be offered to (its region, rung and shape), with Google's advice for it."""

    key: Key
    advice: Advice

    @property
    def provisioning_model(self) -> str:
        return PROVISIONING_MODELS.get(self.key.rung, "STANDARD")


@dataclass(frozen=True)
class Job:
    """What the policy needs to know of the job: how often it checkpoints and how long a restore takes."""

    checkpoint_interval_s: float
    restore_s: float


@dataclass(frozen=True)
class Policy:
    """planb's policy: its bound and thresholds. The values are ``hack/bench_dispatch.py --sweep``'s pick on its
    tuning seeds 1-3, never on the seed BENCHMARKS.md reports: the most of its three goals met (at most 1.5 requests
    a job, a median within 10% of the oracle's, a p95 no worse than today's race's), then the smallest median over
    the oracle's; each is also what its reason below asks for."""

    #: Seconds without a grant before the offer widens by one pair, and before a pair that failed is asked again:
    #: 10 min, because a DWS grant takes minutes when it comes, so a 5-minute bound asks a second pair for jobs the
    #: first would soon have granted (1.67 requests a job against 1.43 on the tuning seeds), and a 15-20 minute one
    #: waits longer on a wrong first pair (p95 up by a fifth) for no fewer requests.
    bound_s: float = 600.0
    #: The first offer's chance that at least one pair grants within the bound: 0.5, so a pair that grants more often
    #: than not is offered alone (one request); below it, the next pairs join the first offer until it is reached.
    #: At 0.7 and 0.9 the first offer holds more pairs: 1.58 and 2.08 requests a job, for a median 0 and 5 points
    #: closer to the oracle's.
    confidence: float = 0.5
    #: Bounds after which every remaining pair is offered: 3, so no job waits more than half an hour for the race.
    full_after_bounds: int = 3
    #: Google's obtainability counts as this many of planb's own asks: 2, as much as the ledger's own prior, because
    #: it is a forecast for the zone at large (planb's asks are its own shape's outcomes) and planb's misses must
    #: outweigh it within a few jobs; 4 scored the same within a point.
    advice_weight: float = 2.0
    #: A request is worth this many seconds of waiting (rule 3): 2.5 min, because each request is work for GKE and a
    #: copy to clean up, so a pair that grants one time in three should not go first only because its failure is
    #: quick. At 0 the policy makes 1.84 requests a job, at 5 min 1.39 but a median 41% over the oracle's (27% here).
    request_cost_s: float = 150.0

    @property
    def full_after_s(self) -> float:
        return self.full_after_bounds * self.bound_s


@dataclass(frozen=True)
class Ranked:
    """A pair offered, with its score, the expected time of one try of it, and why it stands where it does."""

    key: Key
    score: float
    expected_s: float
    reason: str
    #: The chance it grants within the bound: the score times 1 - exp(-bound / grant delay).
    within_bound: float = math.nan


@dataclass(frozen=True)
class Wave:
    """The pairs added to the offer ``after_s`` seconds without a grant."""

    after_s: float
    keys: tuple[Key, ...]


@dataclass(frozen=True)
class OfferPlan:
    """The pairs to offer, best first, how many at once, and when to widen; the skipped pairs; and why."""

    order: tuple[Ranked, ...]
    skipped: tuple[tuple[Key, str], ...]
    first: int
    bound_s: float
    full_after_s: float
    race: bool
    note: str

    @property
    def retry_after_s(self) -> float:
        """Seconds after a failure before the pair is asked again (rule 5)."""
        return self.bound_s

    @property
    def keys(self) -> list[Key]:
        return [r.key for r in self.order]

    def offered(self, elapsed_s: float, failed: int = 0) -> list[Key]:
        """The pairs that should hold a request ``elapsed_s`` after submission, ``failed`` of them having answered
        with a failure (rule 5)."""
        if self.race or elapsed_s >= self.full_after_s:
            return self.keys
        count = self.first + int(max(0.0, elapsed_s) // self.bound_s) + max(0, failed)
        return self.keys[: min(count, len(self.order))]

    def waves(self) -> list[Wave]:
        """The schedule without failures: the first offer, one pair per bound, then the rest."""
        keys = self.keys
        if self.race:
            return [Wave(0.0, tuple(keys))]
        waves, at, count = [Wave(0.0, tuple(keys[: self.first]))], self.bound_s, self.first
        while count < len(keys):
            if at >= self.full_after_s:
                waves.append(Wave(self.full_after_s, tuple(keys[count:])))
                break
            waves.append(Wave(at, (keys[count],)))
            at, count = at + self.bound_s, count + 1
        return waves

    def reasons(self) -> dict[Key, str]:
        """Per pair, why it is offered where it is, or skipped."""
        return {**{r.key: r.reason for r in self.order}, **dict(self.skipped)}


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


def plan(candidates: Sequence[Candidate], job: Job, ledger: Ledger, now: float, policy: Policy = Policy()) -> OfferPlan:
    """The offer plan for one job (the module's docstring has the rules)."""
    skipped, kept = [], []
    for candidate in candidates:
        why = spot_too_short(candidate, job)
        if why:
            skipped.append((candidate.key, why))
        else:
            kept.append(candidate)
    if not kept:
        return OfferPlan((), tuple(skipped), 0, policy.bound_s, 0.0, False, "no pair left to offer: each was skipped")
    if not any(c.advice.obtainability is not None for c in kept):
        whys = sorted({c.advice.missing or "no answer" for c in kept})
        note = (
            f"advice missing for every pair ({'; '.join(whys)}): today's race, every region at once "
            "(MultiKueue AllAtOnce), each region's ladder in its own order"
        )
        race = tuple(Ranked(c.key, math.nan, math.nan, f"no advice ({c.advice.missing}): race") for c in kept)
        return OfferPlan(race, tuple(skipped), len(race), policy.bound_s, 0.0, True, note)
    ranked = []
    for index, candidate in enumerate(kept):
        advice = candidate.advice
        if advice.obtainability is not None:
            prior, weight = advice.obtainability, policy.advice_weight
            source = f"obtainability {advice.obtainability:.2f} (Google)"
        else:
            prior, weight = PRIOR, PRIOR_WEIGHT
            source = f"no advice ({advice.missing}), ledger alone"
        score = ledger.score(candidate.key, now, policy.bound_s, prior, weight)
        grant = score.grant_delay_s if score.grant_delay_s is not None else policy.bound_s / 2
        miss = score.miss_delay_s if score.miss_delay_s is not None else policy.bound_s
        expected = score.rate * grant + (1.0 - score.rate) * miss
        cost = (expected + policy.request_cost_s) / max(score.rate, 1e-6)
        why = (
            f"{source}; ledger {score.grants:.1f} granted, {score.misses:.1f} missed -> p {score.rate:.2f}; "
            f"a try takes {expected:.0f} s, {cost:.0f} s per grant"
        )
        unknown_spot = candidate.provisioning_model == "SPOT" and advice.estimated_uptime_s is None
        if unknown_spot:
            why += "; Spot without estimatedUptime: offered after every other pair"
        within = score.rate * (1.0 - math.exp(-policy.bound_s / max(grant, 1.0)))
        ranked.append(
            ((unknown_spot, cost, -score.rate, index), Ranked(candidate.key, score.rate, expected, why, within))
        )
    ranked.sort(key=lambda item: item[0])
    order = [item[1] for item in ranked]
    first, none_grants = 0, 1.0
    while first < len(order) and (first == 0 or 1.0 - none_grants < policy.confidence):
        none_grants *= 1.0 - order[first].within_bound
        first += 1
    plan_ = OfferPlan(tuple(order), tuple(skipped), first, policy.bound_s, policy.full_after_s, False, "")
    at = {key: wave.after_s for wave in plan_.waves() for key in wave.keys}
    order = [
        Ranked(
            r.key,
            r.score,
            r.expected_s,
            f"{r.reason}; offered {'first' if at[r.key] == 0 else f'after {at[r.key]:.0f} s without a grant'}",
            r.within_bound,
        )
        for r in order
    ]
    missing = [c.key for c in kept if c.advice.obtainability is None]
    note = f"{first} of {len(order)} pairs first, one more every {policy.bound_s:.0f} s or on a failure, all after "
    note += f"{policy.full_after_s:.0f} s" + (f"; no advice for {', '.join(map(str, missing))}" if missing else "")
    return OfferPlan(tuple(order), tuple(skipped), first, policy.bound_s, policy.full_after_s, False, note)


def capacity_request(key: Key, zones: Sequence[str], machine_type: str, count: int) -> dict[str, Any]:
    """The CapacityAdviceRequest planb sends for one pair (compute v1 ``compute.advice.capacity``)."""
    return {
        "size": count,
        "instanceProperties": {"scheduling": {"provisioningModel": PROVISIONING_MODELS.get(key.rung, "STANDARD")}},
        "instanceFlexibilityPolicy": {"instanceSelections": {key.rung: {"machineTypes": [machine_type]}}},
        "distributionPolicy": {"targetShape": "ANY_SINGLE_ZONE", "zones": [{"zone": f"zones/{z}"} for z in zones]},
    }
