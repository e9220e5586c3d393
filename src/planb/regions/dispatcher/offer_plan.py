"""A job's offer plan: the pairs to offer, best first, how many at once, when the offer widens, and why
(``planb.regions.dispatcher.offer_order.plan`` makes it; its rules 4 and 5 are ``OfferPlan.due``'s). A job's
requests so far are its ``Attempt``s; ``Ranked`` is one pair offered, ``Wave`` the pairs added after a wait without a
grant."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from planb.regions.dispatcher.ledger import Key


@dataclass(frozen=True)
class Ranked:
    """A pair offered, with its score, the expected time of one try of it, its bound, and why it stands there."""

    key: Key
    score: float
    expected_s: float
    reason: str
    #: The chance it grants within its bound.
    within_bound: float = math.nan
    #: Seconds it may wait ungranted before the next pair joins the offer (rule 5).
    bound_s: float = math.nan


@dataclass(frozen=True)
class Wave:
    """The pairs added to the offer ``after_s`` seconds without a grant."""

    after_s: float
    keys: tuple[Key, ...]


@dataclass(frozen=True)
class Attempt:
    """One request of the job so far: its pair, when it was asked and when it failed (None while it waits or
    after it was granted), in seconds after submission."""

    key: Key
    asked_s: float
    failed_s: float | None = None


@dataclass(frozen=True)
class OfferPlan:
    """The pairs to offer, best first, how many at once, and when to widen; the skipped pairs; and why."""

    order: tuple[Ranked, ...]
    skipped: tuple[tuple[Key, str], ...]
    first: int
    retry_after_s: float
    full_after_s: float
    race: bool
    note: str

    @property
    def keys(self) -> list[Key]:
        return [r.key for r in self.order]

    def due(self, elapsed_s: float, attempts: Sequence[Attempt], full: Collection[Key] = ()) -> tuple[list[Key], float]:
        """The pairs to ask ``elapsed_s`` after submission, given the job's requests so far, and when to look again
        (seconds after submission; inf: only an answer changes anything). Rules 4 and 5. ``full``: reservation pairs
        read full just now (rule 2), not asked until a later read finds room, looked at again within
        ``retry_after_s``."""
        if self.race:
            waiting = {a.key for a in attempts if a.failed_s is None}
            return [k for k in self.keys if k not in waiting], math.inf
        keys, wake = self._due([k for k in self.keys if k not in full], elapsed_s, attempts)
        return keys, min(wake, elapsed_s + self.retry_after_s) if set(full) & set(self.keys) else wake

    def _due(self, keys: list[Key], elapsed_s: float, attempts: Sequence[Attempt]) -> tuple[list[Key], float]:
        waiting = {a.key: a.asked_s for a in attempts if a.failed_s is None}
        bounds = {r.key: r.bound_s for r in self.order}
        asked = {a.key for a in attempts}
        fresh = [k for k in keys if k not in asked]
        if not attempts:
            first = [k for k in self.keys[: self.first] if k in fresh] or fresh[:1]
            return first, self._wake(elapsed_s, {k: 0.0 for k in first}, bounds)
        if elapsed_s >= self.full_after_s and fresh:
            return fresh, math.inf
        busy = {k: at for k, at in waiting.items() if elapsed_s < at + bounds[k]}
        if busy:
            return [], self._wake(elapsed_s, busy, bounds)
        if fresh:
            return fresh[:1], self._wake(elapsed_s, {fresh[0]: elapsed_s}, bounds)
        retry_at = {}
        for key in keys:
            failures = [a.failed_s for a in attempts if a.key == key and a.failed_s is not None]
            if key not in waiting and failures:
                retry_at[key] = max(failures) + self.retry_after_s * 2 ** (len(failures) - 1)
        ready = [k for k in keys if k in retry_at and retry_at[k] <= elapsed_s]
        if ready:
            return ready[:1], self._wake(elapsed_s, {ready[0]: elapsed_s}, bounds)
        return [], min(retry_at.values(), default=math.inf)

    def _wake(self, elapsed_s: float, asked: dict[Key, float], bounds: dict[Key, float]) -> float:
        wake = min(at + bounds[k] for k, at in asked.items()) if asked else math.inf
        return min(wake, self.full_after_s) if elapsed_s < self.full_after_s else wake

    def waves(self) -> list[Wave]:
        """The schedule without an answer: the first offer, one pair after each bound, then the rest."""
        keys = self.keys
        if self.race:
            return [Wave(0.0, tuple(keys))]
        waves, count = [Wave(0.0, tuple(keys[: self.first]))], self.first
        at = min((r.bound_s for r in self.order[: self.first]), default=math.inf)
        while count < len(keys):
            if at >= self.full_after_s:
                waves.append(Wave(self.full_after_s, tuple(keys[count:])))
                break
            waves.append(Wave(at, (keys[count],)))
            at, count = at + self.order[count].bound_s, count + 1
        return waves

    def reasons(self) -> dict[Key, str]:
        """Per pair, why it is offered where it is, or skipped."""
        return {**{r.key: r.reason for r in self.order}, **dict(self.skipped)}


def regions_in_order(plan: OfferPlan, keys: Sequence[Key]) -> list[str]:
    """The regions of ``keys``, each once, in the plan's order (a region at its best pair's place)."""
    wanted = set(keys)
    return list(dict.fromkeys(k.region for k in plan.keys if k in wanted))


def waiting(attempts: Sequence[Attempt]) -> list[Key]:
    """The pairs asked whose requests still wait."""
    return [a.key for a in attempts if a.failed_s is None]
