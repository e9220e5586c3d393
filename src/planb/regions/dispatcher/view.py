"""What the dispatcher's decisions see and make within one tick (planb.regions.dispatcher.tick): the view, a value of
what was read and kept between ticks plus what was decided so far this tick (the ledger, each Workload's dispatch, the
last advice); the changes one Workload's decisions make (the ledger's entries, its dispatch, the nomination to write,
the lines to say); and ``apply``, which makes the next view of a view and a change, changing neither.

The view is folded through the tick's Workloads in their order, so a plan made for a later Workload scores the pairs
by the ledger as the earlier ones of the same tick left it (their asks, grants and failures), as if each were written
at once; the writes are made once, at the end, from the changes collected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from planb.kube import Obj
from planb.regions.dispatcher.job_dispatch import JobDispatch
from planb.regions.dispatcher.ledger import PENDING, Key, Ledger
from planb.regions.dispatcher.ledger_store import LastAdvice


@dataclass(frozen=True)
class Entry:
    """One change to the ledger: an ask made at ``asked_at`` (``outcome`` PENDING), the pending ask made then ended
    with ``outcome`` at ``at``, or (``whole``) an ask recorded whole at once, as a grant never asked is."""

    key: Key
    asked_at: float
    outcome: str = PENDING
    at: float = 0.0
    whole: bool = False


@dataclass(frozen=True)
class Nomination:
    """A nomination to write: the regions for the Workload's ``status.nominatedClusterNames``."""

    uid: str
    workload: Obj
    regions: tuple[str, ...]


@dataclass(frozen=True)
class Changes:
    """What one Workload's decisions make: the ledger's entries, its dispatch after them (None: it ends), the last
    advice (a plan made now), whether the ConfigMap must be written again, the lines to say, the nomination to write."""

    uid: str
    job: JobDispatch | None
    entries: tuple[Entry, ...] = ()
    last: LastAdvice | None = None
    dirty: bool = False
    said: tuple[str, ...] = ()
    nomination: Nomination | None = None


@dataclass(frozen=True)
class View:
    """What a decision sees: the regions Kueue reaches, the ledger, the dispatches under way (by the Workload's uid,
    in the order they began), the last advice, and whether the ledger's ConfigMap is behind (``dirty``)."""

    active: tuple[str, ...]
    ledger: Ledger
    jobs: Mapping[str, JobDispatch] = field(default_factory=dict)
    last: LastAdvice | None = None
    dirty: bool = False


def with_entries(ledger: Ledger, entries: Sequence[Entry]) -> Ledger:
    """A new ledger: ``ledger`` with ``entries`` made in their order (``LedgerError`` for an end with no pending ask);
    ``ledger`` itself is left as it was."""
    asks = dict(ledger.asks)
    for key in {e.key for e in entries}:
        asks[key] = list(asks.get(key, []))
    out = Ledger(asks)
    for entry in entries:
        if entry.whole:
            out.record(entry.key, entry.asked_at, entry.outcome, entry.at)
        elif entry.outcome == PENDING:
            out.ask(entry.key, entry.asked_at)
        else:
            out.end(entry.key, entry.asked_at, entry.outcome, entry.at)
    return out


def apply(view: View, changes: Changes) -> View:
    """The view after ``changes``: the ledger with their entries, the Workload's dispatch replaced (or ended), the last
    advice theirs when they planned, the ConfigMap behind when they say so."""
    jobs = dict(view.jobs)
    if changes.job is None:
        jobs.pop(changes.uid, None)
    else:
        jobs[changes.uid] = changes.job
    ledger = with_entries(view.ledger, changes.entries) if changes.entries else view.ledger
    last = changes.last or view.last
    return replace(view, ledger=ledger, jobs=jobs, last=last, dirty=view.dirty or changes.dirty)
