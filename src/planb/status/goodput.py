"""Goodput per job: the productive training time over the wall time since submission, with its terms per run.

docs/goodput.md defines each term and what it cannot see. The sources, and nothing else:

* the RayJob's creationTimestamp (the submission) and the Workload's Finished condition (the end);
* Kueue's records of each admission (a run is one admission): the Workload's conditions for the latest run, the
  Events Kueue records on it for earlier ones (planb.status.admissions says which and what they miss);
* the ProvisioningRequests of the job's Workloads: each attempt's creationTimestamp to its Provisioned
  condition (or to its Failed condition, or so far);
* train.py's own lines in the submitter pod's log (planb.status.trainlog), or the progress records another program
  prints there (planb.status.progress): the training kept up to each resume and the step reached, and the steps lost
  at each resume with their time.

Kueue's runs and train.py's are paired newest first: the newest train.py run belongs to the newest admission
before its log began (the log is read with timestamps), earlier ones to earlier admissions. A restart that is
not an admission (KubeRay retrying within one) or an admission that never ran train.py shifts the pairing; the
output says when the two counts differ.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from planb.kube import Obj
from planb.kube_objects import conditions, parse_time, since
from planb.status.admissions import Admission, Attempt, admissions, attempt, event_namespace
from planb.status.trainlog import TrainRecord, TrainRun, parse_log, train_runs
from planb.status.variants import FLAVOR_ANNOTATION, Variants

# ---- the job's goodput -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    admission: Admission | None
    attempts: list[Attempt]
    train: TrainRun | None


@dataclass
class Goodput:
    submitted: float | None
    finished: float | None
    now: float
    runs: list[Run] = field(default_factory=list)
    #: Provisioning attempts of no run yet (a Workload's requests after its last admission).
    pending: list[Attempt] = field(default_factory=list)
    record: TrainRecord | None = None
    #: Admissions Kueue's Events count without a time.
    hidden: int = 0
    #: Why train.py's record is missing ('' when it is there).
    no_record: str = ""
    #: Inputs that could not be read (they leave terms out, not the goodput).
    unreadable: list[str] = field(default_factory=list)

    @property
    def wall_s(self) -> float | None:
        if self.submitted is None:
            return None
        return max(0.0, (self.finished if self.finished is not None else self.now) - self.submitted)

    @property
    def kept_s(self) -> float | None:
        return None if self.record is None else self.record.kept_s

    @property
    def steps_lost(self) -> int:
        return 0 if self.record is None else sum(r.lost for r in self.record.resumes)

    @property
    def lost_s(self) -> float | None:
        if self.record is None or any(r.lost_s is None for r in self.record.resumes):
            return None
        return sum(r.lost_s or 0.0 for r in self.record.resumes)

    @property
    def missing(self) -> list[str]:
        out = []
        if self.submitted is None:
            out.append("the submission time (the RayJob's creationTimestamp)")
        if self.record is None:
            out.append(f"the training time ({self.no_record or 'no line of it in the submitter log'})")
        elif self.record.kept_s is None:
            who = self.record.source
            out.append(
                f"{who}'s training time (it prints 'unknown': the job resumed from a checkpoint written before "
                f"{who} recorded training time)"
            )
        return out

    @property
    def ratio(self) -> float | None:
        wall, kept = self.wall_s, self.kept_s
        if self.missing or wall is None or kept is None or wall <= 0:
            return None
        return kept / wall

    @property
    def percent(self) -> str:
        """The table's column: '71.2%', or '-' when a term is missing."""
        return "-" if self.ratio is None else f"{100 * self.ratio:.1f}%"


def pair(
    admitted: list[Admission], trained: list[TrainRun], started: float | None
) -> list[tuple[Admission | None, TrainRun | None]]:
    """Kueue's runs with train.py's, newest first: train.py's newest run belongs to the newest admission at or
    before its log began (admissions after it have not run train.py yet), earlier runs to earlier admissions."""
    cut = len(admitted)
    if started is not None and trained:
        # None before it: a clock apart from Kueue's; then the newest admission is the log's.
        cut = sum(1 for a in admitted if a.at <= started) or cut
    before, after = admitted[:cut], admitted[cut:]
    n = max(len(before), len(trained))
    left: list[Admission | None] = [None] * (n - len(before)) + list(before)
    right: list[TrainRun | None] = [None] * (n - len(trained)) + list(trained)
    return [*zip(left, right, strict=True), *((a, None) for a in after)]


def compute(
    rayjob: Obj,
    finished_on: Obj | None,
    workloads: list[Obj],
    events: list[Obj] | None,
    requests: list[Obj],
    log: str | None,
    variant_flavor: str = "",
    now: float | None = None,
) -> Goodput:
    """The goodput of ``rayjob`` from its Workloads (its own, or a concurrent job's variants), their Events (None:
    not readable), their ProvisioningRequests and the submitter log (None: no submitter pod, or its log not
    readable). ``finished_on`` is the Workload whose Finished condition ends the wall time."""
    now = time.time() if now is None else now
    out = Goodput(
        submitted=parse_time(rayjob["metadata"].get("creationTimestamp")),
        finished=since(conditions(finished_on), "Finished") if finished_on is not None else None,
        now=now,
    )
    if events is None:
        out.unreadable.append("Kueue's Events (not readable: earlier runs are left out)")
    admitted, out.hidden = admissions(workloads, events or [], variant_flavor)
    names = {w["metadata"]["name"] for w in workloads}
    attempts = sorted(
        (a for pr in requests if (a := attempt(pr, now)) is not None and a.workload in names), key=lambda a: a.created
    )
    out.record = parse_log(log) if log else None
    if out.record is None:
        out.no_record = (
            "no submitter pod, or its log is not readable"
            if log is None
            else "no 'training time up to step' line (train.py) or 'planb-progress' record in the submitter log yet"
        )
    trained = train_runs(out.record) if out.record is not None else []
    used: set[str] = set()
    for adm, run in pair(admitted, trained, out.record.started if out.record else None):
        mine: list[Attempt] = []
        if adm is not None:
            earlier = max((a.at for a in admitted if a.workload == adm.workload and a.at < adm.at), default=None)
            mine = [
                a
                for a in attempts
                if a.workload == adm.workload
                and a.created <= adm.at
                and (earlier is None or a.created > earlier)
                and a.name not in used
            ]
            used |= {a.name for a in mine}
        out.runs.append(Run(adm, mine, run))
    out.pending = [a for a in attempts if a.name not in used]
    return out


def of_job(
    rayjob: Obj,
    wl: Obj | None,
    concurrent: Variants | None,
    found: list[Obj] | None,
    requests: list[Obj],
    log: str | None,
) -> Goodput:
    """The goodput of ``rayjob`` whose Workload is ``wl`` (None before Kueue made it), from the listed Events
    (``found``; None: not readable) and ProvisioningRequests, and its submitter log: a concurrent job runs on its
    variants (``concurrent``, as planb.status.variants found them), any other on its own Workload."""
    ns = rayjob["metadata"]["namespace"]
    if concurrent is not None:
        runs_on, flavor = concurrent.workloads, FLAVOR_ANNOTATION
    else:
        runs_on, flavor = ([wl] if wl is not None else []), ""
    mine = None if found is None else [e for e in found if event_namespace(e, ns) == ns]
    return compute(rayjob, wl, runs_on, mine, [r for r in requests if r["metadata"]["namespace"] == ns], log, flavor)


__all__ = ["Goodput", "Run", "compute", "of_job", "pair"]
