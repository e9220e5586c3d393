"""Where a MultiKueue manager keeps the obtainability ledger and the last advice used, and what that advice was.

Both live in one ConfigMap on the manager, ``kueue-system/planb-regions-ledger`` (``<config>-ledger`` beside the
keeper's ``<config>-keeper``, the MultiKueueConfig planb's multikueue role writes being ``planb-regions``):

* ``data.ledger``: the ledger as ``planb.regions.dispatcher.ledger.Ledger.to_json`` writes it (JSON; at most
``MAX_ASKS`` asks
  per region, rung and shape, sized for a ConfigMap's 1 MiB);
* ``data.advice``: the last job's advice as the policy used it (``LastAdvice``, JSON): per pair Google's
  ``obtainability`` and ``estimatedUptime``, planb's score, where the order came from, when the pair was offered or
  why it was skipped, and the plan's note.

planb's policy: a ConfigMap in Kueue's namespace, not a file and not an annotation, because the ledger must outlive
the process that asks (a keeper or dispatcher restarted anywhere reads it again, as the keeper reads its own), and
Kueue's namespace is written only by the operator and Kueue (docs/regions.md, section 4, says why the keeper's
ConfigMap sits there); not the keeper's own ConfigMap, because the keeper writes that one with its resourceVersion
for each quarantine and the ledger is written at each request. ``planb status --capacity`` reads it with the
manager's kubeconfig (``planb.status.obtainability``). The keeper's dispatcher writes it (``planb regions keep
--dispatch``, ``planb.regions.dispatcher.tick``): ``configmap`` is its body, created or its data replaced whenever
the ledger changed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from planb.kube import Kube, KubeError, Obj
from planb.regions.access.connection import KUEUE_NAMESPACE
from planb.regions.dispatcher.google_advice import Candidate
from planb.regions.dispatcher.ledger import Key, Ledger, LedgerError, timestamp
from planb.regions.dispatcher.offer_order import OfferPlan

CONFIGMAP = "planb-regions-ledger"
LEDGER_KEY, ADVICE_KEY = "ledger", "advice"
VERSION = 1
#: Where a pair's order came from (``PairAdvice.source``).
GOOGLE = "Google's advice"
LEDGER = "planb's ledger"
RACE = "missing: fell back to the race, because "


@dataclass(frozen=True)
class PairAdvice:
    """One pair as the last job's plan used it."""

    key: Key
    #: Google's score, None where Google gave none.
    obtainability: float | None
    #: Google's estimatedUptime (Spot), None where it gave none.
    estimated_uptime_s: float | None
    #: planb's grant probability for the pair (Google's score and the ledger), None in a race or for a skipped pair.
    score: float | None
    #: ``GOOGLE``; ``LEDGER`` and why Google gave nothing; or ``RACE`` and why.
    source: str
    #: "first", "after N s", "at once (race)" or "skipped".
    offered: str
    #: The policy's reason for the pair's place, or for skipping it.
    reason: str


@dataclass(frozen=True)
class LastAdvice:
    """The advice the last job was dispatched by: which job, when, whether it raced, and each pair."""

    job: str
    at: float
    race: bool
    note: str
    pairs: tuple[PairAdvice, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "job": self.job,
            "at": self.at,
            "race": self.race,
            "note": self.note,
            "pairs": [
                {
                    "region": p.key.region,
                    "rung": p.key.rung,
                    "shape": p.key.shape,
                    "obtainability": p.obtainability,
                    "estimatedUptimeSeconds": p.estimated_uptime_s,
                    "score": p.score,
                    "source": p.source,
                    "offered": p.offered,
                    "reason": p.reason,
                }
                for p in self.pairs
            ],
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> LastAdvice:
        if data.get("version") != VERSION:
            raise LedgerError(f"advice version {data.get('version')!r}, this planb reads {VERSION}")
        try:
            pairs = tuple(
                PairAdvice(
                    Key(str(p["region"]), str(p["rung"]), str(p["shape"])),
                    _number(p.get("obtainability")),
                    _number(p.get("estimatedUptimeSeconds")),
                    _number(p.get("score")),
                    str(p["source"]),
                    str(p["offered"]),
                    str(p.get("reason") or ""),
                )
                for p in data.get("pairs") or []
            )
            return LastAdvice(
                str(data["job"]), timestamp(data["at"], "at"), bool(data["race"]), str(data.get("note") or ""), pairs
            )
        except LedgerError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise LedgerError(f"advice planb cannot read: {exc!r}") from exc


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    number = float(value)
    if math.isinf(number):  # NaN is "none given", as last_advice writes a NaN score; an infinity is no score
        raise LedgerError(f"advice value {value!r} is not finite")
    return None if math.isnan(number) else number


def last_advice(offer: OfferPlan, candidates: Sequence[Candidate], job: str, at: float) -> LastAdvice:
    """What ``offer`` used for ``job`` at ``at``, from the candidates it was planned from."""
    advice = {c.key: c.advice for c in candidates}
    offered = {key: wave.after_s for wave in offer.waves() for key in wave.keys}
    pairs = []
    for ranked in offer.order:
        given = advice[ranked.key]
        if offer.race:
            source, when = RACE + (given.missing or "no answer"), "at once (race)"
        else:
            source = GOOGLE if given.obtainability is not None else f"{LEDGER} (no advice: {given.missing})"
            when = "first" if offered[ranked.key] == 0 else f"after {offered[ranked.key]:.0f} s"
        score = None if math.isnan(ranked.score) else ranked.score
        pairs.append(
            PairAdvice(ranked.key, given.obtainability, given.estimated_uptime_s, score, source, when, ranked.reason)
        )
    for key, why in offer.skipped:
        given = advice[key]
        source = GOOGLE if given.obtainability is not None else f"{LEDGER} (no advice: {given.missing})"
        pairs.append(PairAdvice(key, given.obtainability, given.estimated_uptime_s, None, source, "skipped", why))
    return LastAdvice(job, at, offer.race, offer.note, tuple(pairs))


def configmap(
    ledger: Ledger, advice: LastAdvice | None, namespace: str = KUEUE_NAMESPACE, name: str = CONFIGMAP
) -> Obj:
    """The ConfigMap that holds ``ledger`` and the last advice."""
    data = {LEDGER_KEY: json.dumps(ledger.to_json(), sort_keys=True)}
    if advice is not None:
        data[ADVICE_KEY] = json.dumps(advice.to_json(), sort_keys=True)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": namespace, "name": name}, "data": data}


@dataclass
class Stored:
    """What the manager holds: whether the ConfigMap is there, the ledger and the last advice, and what could not be
    read (each a line)."""

    where: str
    found: bool
    ledger: Ledger | None = None
    advice: LastAdvice | None = None
    problems: list[str] = field(default_factory=list)


def read(kube: Kube, namespace: str = KUEUE_NAMESPACE, name: str = CONFIGMAP) -> Stored:
    """The ConfigMap's ledger and last advice; a ConfigMap missing, forbidden or unreadable is said, not raised (an
    API server that does not answer is: ``KubeError``)."""
    where = f"{namespace}/{name}"
    try:
        found = kube.get(f"/api/v1/namespaces/{namespace}/configmaps/{name}")
    except KubeError as exc:
        if exc.status not in (401, 403):
            raise
        return Stored(where, False, problems=[f"ConfigMap {where} cannot be read: {exc}"])
    if found is None:
        return Stored(where, False)
    out = Stored(where, True)
    data = found.get("data") or {}
    for key in (LEDGER_KEY, ADVICE_KEY):
        text = data.get(key)
        if not text:
            continue
        try:
            parsed = json.loads(text)
            if key == LEDGER_KEY:
                out.ledger = Ledger.from_json(parsed)
            else:
                out.advice = LastAdvice.from_json(parsed)
        except (ValueError, AttributeError, LedgerError, RecursionError) as exc:
            out.problems.append(f"ConfigMap {where}, key {key}: {exc}")
    return out
