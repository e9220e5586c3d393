"""`planb status --capacity`: the obtainability ledger and the last advice used, as text or one document (``-o``).

Named for what it shows, how obtainable each region's capacity has been: "capacity" in planb's modules is the local
stack's capacity simulator alone (planb.local.capacity); the command's flag keeps the word users type.

Read on the MultiKueue manager from the ConfigMap ``planb.regions.dispatcher.ledger_store`` names
(``kueue-system/planb-regions-ledger``):

* the ledger, one row per region, rung and shape: how many requests planb made, how many were granted, stocked out
  (GKE said no: ``FAILED``), withdrawn (another won first) or pending, when it last asked, was last granted and last
  stocked out, and the ledger's own grant rate now (its smoothed rate with recency and its neutral prior, without
  Google's score; ``planb.regions.dispatcher.ledger``);
* the last advice used: the job and when, the plan's note, and per pair Google's ``obtainability`` and
  ``estimatedUptime``, planb's score, when the pair was offered or that it was skipped, and the source of its order:
  Google's advice, planb's ledger (Google gave none), or "missing: fell back to the race, because ...".

Times are RFC 3339 UTC in the document and ages ("12 min ago") in the text.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from planb.printable import printable
from planb.regions.dispatcher import ledger_store
from planb.regions.dispatcher.ledger import FAILED, GRANTED, PENDING, WITHDRAWN, Key, Ledger
from planb.regions.dispatcher.ledger_store import LastAdvice, PairAdvice
from planb.regions.dispatcher.offer_order import Policy
from planb.status.detail import stamp

API_VERSION = "planb.dev/v1alpha1"
#: The time ``of_ledger`` counts ages from (tests replace it).
clock: Callable[[], float] = time.time


@dataclass(frozen=True)
class LedgerRow:
    """One region, rung and shape of the ledger, counted at ``now``."""

    key: Key
    asked: int
    granted: int
    stockouts: int
    withdrawn: int
    pending: int
    last_asked: float | None
    last_granted: float | None
    last_stockout: float | None
    #: The ledger's grant rate now (its neutral prior, no advice), 0 to 1.
    rate: float
    #: Each ask: when asked, its outcome, when it ended (None while pending).
    asks: tuple[tuple[float, str, float | None], ...] = ()


@dataclass
class Obtainability:
    """What ``planb status --capacity`` shows."""

    where: str
    found: bool
    now: float
    rows: list[LedgerRow] = field(default_factory=list)
    advice: LastAdvice | None = None
    problems: list[str] = field(default_factory=list)


#: The policy whose miss time the ledger's rate counts with (a request ungranted past it is a miss).
POLICY = Policy()


def rows(ledger: Ledger, now: float, policy: Policy = POLICY) -> list[LedgerRow]:
    """The ledger's rows at ``now``, by region, rung and shape; an ask not yet made at ``now`` left out."""
    out = []
    for key in sorted(ledger.asks):
        asks = [(a.asked_at, *a.as_of(now)) for a in ledger.asks[key] if a.asked_at <= now]
        if not asks:
            continue

        def last(outcome: str, seen: list[tuple[float, str, float | None]] = asks) -> float | None:
            return max((ended for _, o, ended in seen if o == outcome and ended is not None), default=None)

        count = {o: sum(1 for _, seen, _ in asks if seen == o) for o in (GRANTED, FAILED, WITHDRAWN, PENDING)}
        score = ledger.score(key, now, policy.miss_after_s)
        out.append(
            LedgerRow(
                key,
                len(asks),
                count[GRANTED],
                count[FAILED],
                count[WITHDRAWN],
                count[PENDING],
                max(at for at, _, _ in asks),
                last(GRANTED),
                last(FAILED),
                score.rate,
                tuple(asks),
            )
        )
    return out


def of_ledger(stored: ledger_store.Stored, now: float | None = None) -> Obtainability:
    """The manager's ledger and last advice, as planb.status.gather read them (ledger_store.read)."""
    now = clock() if now is None else now
    found = Obtainability(stored.where, stored.found, now, advice=stored.advice, problems=list(stored.problems))
    if stored.ledger is not None:
        found.rows = rows(stored.ledger, now)
    return found


def _ago(at: float | None, now: float) -> str:
    if at is None:
        return "-"
    seconds = max(0.0, now - at)
    if seconds < 90:
        return f"{seconds:.0f} s ago"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min ago"
    return f"{seconds / 3600:.1f} h ago"


def _columns(header: list[str], lines: list[list[str]]) -> list[str]:
    lines = [[printable(cell) for cell in row] for row in lines]  # a ledger's strings are its writer's
    widths = [max(len(row[i]) for row in [header, *lines]) for i in range(len(header))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in [header, *lines]]


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _uptime(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds / 60:.0f} min"


def _ledger_line(r: LedgerRow, now: float) -> list[str]:
    counts = (r.asked, r.granted, r.stockouts, r.withdrawn, r.pending)
    ages = (_ago(r.last_asked, now), _ago(r.last_granted, now), _ago(r.last_stockout, now))
    return [r.key.region, r.key.rung, r.key.shape, *map(str, counts), *ages, f"{r.rate:.2f}"]


def _advice_line(p: PairAdvice) -> list[str]:
    scores = (_score(p.obtainability), _uptime(p.estimated_uptime_s), _score(p.score))
    return [p.key.region, p.key.rung, p.key.shape, *scores, p.offered, p.source]


def text(found: Obtainability) -> str:
    """The two tables, each with what it stands on."""
    lines = [f"Obtainability ledger (ConfigMap {found.where}, {stamp(found.now)}):"]
    if not found.found:
        lines.append(
            f"  none: no ConfigMap {found.where} on this cluster. Nothing has recorded a request yet: the regions "
            "keeper runs without --dispatch (jobs race in every region, MultiKueue AllAtOnce) or has not planned a "
            "job yet (planb regions keep --dispatch; docs/regions.md)"
        )
    elif not found.rows:
        lines.append("  empty: no request recorded")
    else:
        header = ["REGION", "RUNG", "SHAPE", "ASKED", "GRANTED", "STOCKOUTS", "WITHDRAWN", "PENDING"]
        header += ["LAST ASKED", "LAST GRANTED", "LAST STOCKOUT", "LEDGER RATE"]
        table = [_ledger_line(r, found.now) for r in found.rows]
        lines += ["  " + line for line in _columns(header, table)]
    lines.append("")
    advice = found.advice
    if advice is None:
        lines.append("Last advice used: none recorded")
    else:
        how = "AllAtOnce (no advice)" if advice.race else "advice-ordered"
        lines.append(f"Last advice used: job {advice.job}, {stamp(advice.at)} ({_ago(advice.at, found.now)}), {how}")
        if advice.note:
            lines.append(f"  {advice.note}")
        header = ["REGION", "RUNG", "SHAPE", "OBTAINABILITY", "EST. UPTIME", "SCORE", "OFFERED", "SOURCE"]
        table = [_advice_line(p) for p in advice.pairs]
        lines += ["  " + line for line in _columns(header, table)]
        lines += [f"  {p.key}: {p.reason}" for p in advice.pairs if p.reason]
    lines += [f"problem: {problem}" for problem in found.problems]
    return printable("\n".join(lines))


def _time(at: float | None) -> str | None:
    return None if at is None else stamp(at)


def document(found: Obtainability) -> dict[str, Any]:
    """The same as one document (``-o json|yaml``): ``kind: CapacityStatus``."""
    advice = found.advice
    return {
        "apiVersion": API_VERSION,
        "kind": "CapacityStatus",
        "configMap": found.where,
        "found": found.found,
        "now": stamp(found.now),
        "ledger": [
            {
                "region": r.key.region,
                "rung": r.key.rung,
                "shape": r.key.shape,
                "asked": r.asked,
                "granted": r.granted,
                "stockouts": r.stockouts,
                "withdrawn": r.withdrawn,
                "pending": r.pending,
                "lastAsked": _time(r.last_asked),
                "lastGranted": _time(r.last_granted),
                "lastStockout": _time(r.last_stockout),
                "ledgerRate": round(r.rate, 4),
                "asks": [
                    {"askedAt": stamp(at), "outcome": outcome, "endedAt": _time(ended)} for at, outcome, ended in r.asks
                ],
            }
            for r in found.rows
        ],
        "lastAdvice": None
        if advice is None
        else {
            "job": advice.job,
            "at": stamp(advice.at),
            "race": advice.race,
            "note": advice.note,
            "pairs": [
                {
                    "region": p.key.region,
                    "rung": p.key.rung,
                    "shape": p.key.shape,
                    "obtainability": p.obtainability,
                    "estimatedUptimeSeconds": p.estimated_uptime_s,
                    "score": None if p.score is None else round(p.score, 4),
                    "source": p.source,
                    "offered": p.offered,
                    "reason": p.reason,
                }
                for p in advice.pairs
            ],
        },
        "problems": list(found.problems),
    }
