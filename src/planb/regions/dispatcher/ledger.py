"""The obtainability ledger: what planb asked for, per region, rung and shape, and what it was granted, with times.

A second signal beside Google's ``obtainability`` score (compute v1, discovery revision 20261106, method
``compute.advice.capacity``, ``projects/{project}/regions/{region}/advice/capacity``): planb's own record of its
requests, so a region that never grants sinks even where Google's advice is silent (403, 404, a shape it refuses).
``planb.regions.dispatcher.offer_order`` reads it. On a MultiKueue manager it lives, as JSON
(``to_json``/``from_json``), in the ConfigMap ``planb.regions.dispatcher.ledger_store`` names
(``kueue-system/planb-regions-ledger``), which ``planb status
--capacity`` shows; the keeper's dispatcher writes it (``planb regions keep --dispatch``,
``planb.regions.dispatcher.tick``).

One ``Ask`` per request planb made (a ProvisioningRequest, or a region offered the job on a rung): when it was asked,
when it ended and how:

* ``GRANTED``: the capacity came (the request Provisioned, the copy Admitted on that rung);
* ``FAILED``: GKE said no (a stockout, a request answered Failed, a Spot scale-up refused);
* ``WITHDRAWN``: planb deleted it ungranted (another region or rung won first);
* ``PENDING``: not ended yet.

The score (``Ledger.score``), planb's policy: a smoothed grant rate with recency, over two windows,

    day    = (prior_weight * prior + G_day) / (prior_weight + G_day + M_day)
    rate   = (RECENT_WEIGHT * day + G_now) / (RECENT_WEIGHT + G_now + M_now)

where ``G`` sums the weights of the grants and ``M`` those of the misses, each weighing ``0.5 ** (age / half_life)``,
the age counted from when the ask ended (or became a miss): ``HALF_LIFE_S`` for the day's rate, ``RECENT_HALF_LIFE_S``
for what holds now. A miss is a ``FAILED`` ask, or one not granted within ``within_s`` (a ``WITHDRAWN`` ask that
waited at least that long, a ``PENDING`` one older than that); a ``WITHDRAWN`` ask that waited less says nothing
either way and is left out, because it may have been granted a moment later. Constants, each planb's policy:

* ``prior`` 0.5, ``prior_weight`` 2 (a Beta(1, 1) prior, as planb's emulator model of the advice,
  ``planb.local.gke_emulator.obtainability``): because with nothing seen a key is neither good nor bad, and two
  misses should already move it (to 0.25). A caller with Google's score passes it as the prior, with its own weight.
* ``HALF_LIFE_S`` 6 h (the emulator model's half-life): because a region that has not granted a shape all day
  should stay down for hours, and the ledger and the advice it sits beside should forget at the same pace.
* ``RECENT_HALF_LIFE_S`` 30 min and ``RECENT_WEIGHT`` 2: because capacity comes and goes in episodes (a stockout,
  a reservation filled and freed), so the last asks say whether the pair has capacity now, which the day's rate
  cannot; the day's rate counts as two recent asks, so two recent misses halve a good day's rate.
* ``DELAY_HALF_LIFE_S`` 2 h for the mean times to a grant and to a miss (``Score.grant_delay_s``, the policy's
  bound is a multiple of it): because how long a grant takes swings over the day (DWS queues longer at the region's
  busy hours), and a 6-hour mean would still carry the morning's delays into the afternoon.
* ``Score.state_rate``, the chance the pair has capacity now from its last grant or miss alone: 1 after a grant, 0
  after a miss, back to the day's rate with ``RECENT_HALF_LIFE_S`` (``day + (last - day) * 0.5 ** (age / 30 min)``),
  because capacity is a state that persists for a while (a stockout, a reservation filled) and the last answer is
  the best witness of it; the smoothed ``rate`` above counts it as one ask among the day's two, which says a pair
  that failed five minutes ago still grants more often than not. ``planb.regions.dispatcher.offer_order`` mixes the
  two.
* ``MAX_ASKS`` 64 per key, the oldest dropped first: because at 6 h a half-life, 64 asks of a busy key span more
  than the score still weighs, and the ledger must fit a ConfigMap (1 MiB) with room to spare.

Only what was known at ``now`` counts: an ask made after ``now`` is left out, one that ended after ``now`` counts as
pending, so a replay (hack/bench_dispatch.py) can write whole asks early without the score seeing the future.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

GRANTED, FAILED, WITHDRAWN, PENDING = "GRANTED", "FAILED", "WITHDRAWN", "PENDING"
OUTCOMES = (GRANTED, FAILED, WITHDRAWN, PENDING)
#: planb's policy (the module's docstring says why).
PRIOR, PRIOR_WEIGHT = 0.5, 2.0
HALF_LIFE_S = 6 * 3600.0
RECENT_HALF_LIFE_S, RECENT_WEIGHT = 1800.0, 2.0
DELAY_HALF_LIFE_S = 2 * 3600.0
MAX_ASKS = 64
VERSION = 1


class LedgerError(ValueError):
    """A ledger or an ask planb cannot read (an unknown outcome, an end before the ask, a wrong version)."""


#: The latest time a ledger may hold (year 10000, where time.gmtime and its stamps end).
MAX_TIME = 253402300800.0


def timestamp(value: Any, what: str) -> float:
    """`value` as a Unix time read from the ConfigMap: refused (LedgerError) unless finite and in 0..MAX_TIME, so a
    written NaN or 1e300 neither reorders dispatch nor crashes `planb status`."""
    number = float(value)
    if not math.isfinite(number) or not 0 <= number <= MAX_TIME:
        raise LedgerError(f"{what} {value!r} is not a time between 1970 and 9999")
    return number


@dataclass(frozen=True, order=True)
class Key:
    """What planb asks for: a region, a rung of its ladder, a shape (machine type and count: ``ct6e-standard-4t:4``)."""

    region: str
    rung: str
    shape: str

    def __str__(self) -> str:
        return f"{self.region}/{self.rung}/{self.shape}"


def shape_parts(shape: str) -> tuple[str, int]:
    """A pair's shape (``ct6e-standard-4t:4``) as its machine type and count (one VM without a count)."""
    machine_type, _, count = shape.partition(":")
    return machine_type, int(count) if count.isdigit() and int(count) > 0 else 1


@dataclass
class Ask:
    """One request: asked at ``asked_at`` (seconds since the epoch), ended at ``ended_at`` with ``outcome``."""

    asked_at: float
    outcome: str = PENDING
    ended_at: float | None = None

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise LedgerError(f"outcome {self.outcome!r} is not one of {', '.join(OUTCOMES)}")
        if (self.outcome == PENDING) != (self.ended_at is None):
            raise LedgerError(f"an ask that is {self.outcome} {'needs' if self.ended_at is None else 'has no'} endedAt")
        if self.ended_at is not None and self.ended_at < self.asked_at:
            raise LedgerError(f"an ask cannot end ({self.ended_at}) before it was made ({self.asked_at})")

    def as_of(self, now: float) -> tuple[str, float | None]:
        """The outcome and end time as known at ``now``."""
        if self.ended_at is None or self.ended_at > now:
            return PENDING, None
        return self.outcome, self.ended_at


@dataclass(frozen=True)
class Score:
    """A key's score at one time: the grant rate (what holds now), the day's rate under it, the day's weighted
    grants and misses, and the weighted mean times from an ask to a grant and to a miss (``DELAY_HALF_LIFE_S``;
    None with none seen; a miss by waiting counts ``within_s``)."""

    rate: float
    day_rate: float
    grants: float
    misses: float
    grant_delay_s: float | None
    miss_delay_s: float | None
    #: The weight of the grants behind ``grant_delay_s`` (``DELAY_HALF_LIFE_S``), for a caller blending in a prior.
    timed_grants: float = 0.0
    #: The same for the misses behind ``miss_delay_s``.
    timed_misses: float = 0.0
    #: The chance the pair has capacity now from the last grant or miss alone: 1 or 0 then, back to the day's rate
    #: with ``RECENT_HALF_LIFE_S`` (the day's rate with none seen).
    state_rate: float = math.nan

    @property
    def evidence(self) -> float:
        return self.grants + self.misses


def _weight(age: float, half_life_s: float) -> float:
    return math.pow(0.5, max(0.0, age) / half_life_s)


def _state(seen: list[tuple[bool, float, float]], now: float, day: float, half_life_s: float) -> float:
    if not seen:
        return day
    granted, at, _ = max(seen, key=lambda s: s[1])
    return day + (float(granted) - day) * _weight(now - at, half_life_s)


@dataclass
class Ledger:
    asks: dict[Key, list[Ask]] = field(default_factory=dict)

    def ask(self, key: Key, at: float) -> Ask:
        """Record a request made at ``at``; end it with ``end``."""
        return self._add(key, Ask(at))

    def end(self, key: Key, asked_at: float, outcome: str, at: float) -> Ask:
        """End the pending ask of ``key`` made at ``asked_at``."""
        if outcome == PENDING:
            raise LedgerError("an ask ends GRANTED, FAILED or WITHDRAWN")
        for i, ask in enumerate(self.asks.get(key, [])):
            if ask.asked_at == asked_at and ask.outcome == PENDING:
                self.asks[key][i] = Ask(asked_at, outcome, at)
                return self.asks[key][i]
        raise LedgerError(f"no pending ask of {key} made at {asked_at}")

    def record(self, key: Key, asked_at: float, outcome: str, ended_at: float) -> Ask:
        """Record a whole ask at once (a replay)."""
        return self._add(key, Ask(asked_at, outcome, ended_at))

    def _add(self, key: Key, ask: Ask) -> Ask:
        asks = self.asks.setdefault(key, [])
        asks.append(ask)
        asks.sort(key=lambda a: a.asked_at)
        del asks[:-MAX_ASKS]
        return ask

    def _seen(self, key: Key, now: float, within_s: float) -> list[tuple[bool, float, float]]:
        """Per grant or miss known at ``now``: whether it was a grant, when it became known, and how long it took."""
        seen = []
        for ask in self.asks.get(key, []):
            if ask.asked_at > now:
                continue
            outcome, ended = ask.as_of(now)
            if outcome in (GRANTED, FAILED) and ended is not None:
                seen.append((outcome == GRANTED, ended, ended - ask.asked_at))
            elif outcome == WITHDRAWN and ended is not None and ended - ask.asked_at >= within_s:
                seen.append((False, ended, within_s))
            elif outcome == PENDING and now - ask.asked_at >= within_s:
                seen.append((False, ask.asked_at + within_s, within_s))
        return seen

    def score(
        self,
        key: Key,
        now: float,
        within_s: float,
        prior: float = PRIOR,
        prior_weight: float = PRIOR_WEIGHT,
        half_life_s: float = HALF_LIFE_S,
        recent_half_life_s: float = RECENT_HALF_LIFE_S,
        delay_half_life_s: float = DELAY_HALF_LIFE_S,
    ) -> Score:
        """The key's smoothed grant rate at ``now`` (the module's docstring has the formula)."""
        seen = self._seen(key, now, within_s)
        sums = {}
        windows = (("day", half_life_s), ("now", recent_half_life_s), ("delay", delay_half_life_s))
        for window, half_life in windows:
            grants = misses = grant_time = miss_time = 0.0
            for granted, at, took in seen:
                weight = _weight(now - at, half_life)
                if granted:
                    grants, grant_time = grants + weight, grant_time + weight * took
                else:
                    misses, miss_time = misses + weight, miss_time + weight * took
            sums[window] = (grants, misses, grant_time, miss_time)
        grants, misses = sums["day"][:2]
        day = (prior_weight * prior + grants) / (prior_weight + grants + misses)
        recent_grants, recent_misses = sums["now"][:2]
        rate = (RECENT_WEIGHT * day + recent_grants) / (RECENT_WEIGHT + recent_grants + recent_misses)
        timed_grants, timed_misses, grant_time, miss_time = sums["delay"]
        return Score(
            rate,
            day,
            grants,
            misses,
            grant_time / timed_grants if timed_grants else None,
            miss_time / timed_misses if timed_misses else None,
            timed_grants,
            timed_misses,
            _state(seen, now, day, recent_half_life_s),
        )

    def to_json(self) -> dict[str, Any]:
        entries = []
        for key in sorted(self.asks):
            asks = [
                {"askedAt": a.asked_at, "outcome": a.outcome}
                | ({"endedAt": a.ended_at} if a.ended_at is not None else {})
                for a in self.asks[key]
            ]
            entries.append({"region": key.region, "rung": key.rung, "shape": key.shape, "asks": asks})
        return {"version": VERSION, "entries": entries}

    @staticmethod
    def from_json(data: dict[str, Any]) -> Ledger:
        if data.get("version") != VERSION:
            raise LedgerError(f"ledger version {data.get('version')!r}, this planb reads {VERSION}")
        ledger = Ledger()
        try:
            for entry in data.get("entries") or []:
                key = Key(str(entry["region"]), str(entry["rung"]), str(entry["shape"]))
                for a in entry.get("asks") or []:
                    ended = a.get("endedAt")
                    asked = timestamp(a["askedAt"], "askedAt")
                    ended = None if ended is None else timestamp(ended, "endedAt")
                    ledger._add(key, Ask(asked, str(a["outcome"]), ended))
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, LedgerError):
                raise
            raise LedgerError(f"a ledger entry planb cannot read: {exc!r}") from exc
        return ledger
