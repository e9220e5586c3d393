"""`planb status JOB --timeline FILE`: one job's life on a time axis, from the JobStatus `-o json` serialises.

``build`` turns the collected job into what the picture holds, in five lanes:

* **rung**: the wait for the first admission, then each run on the rung (flavor and plan) Kueue admitted it on,
  up to the next admission or the end (goodput's runs: planb.status.admissions);
* **Workload**: the submission, and each of the Workload's conditions at its last transition (Kueue keeps only
  the latest of each type);
* **ProvisioningRequest**: each attempt from its creation to Provisioned or Failed (or so far);
* **moves**: each migration of a concurrent-ladder job (planb.status.variants) and planb's failover move;
* **resumes**: each resume from a checkpoint train.py reported (planb.status.trainlog), at the kubelet's time of
  its line, else at the admission of the run that resumed.

planb.status.timeline_draw draws it with matplotlib; this module knows nothing of the picture.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planb.errors import EXIT_FAILED, PlanbError
from planb.kube_objects import parse_time
from planb.status.detail import flavor_named
from planb.status.job_status import JobStatus

LANES = ("rung", "Workload", "ProvisioningRequest", "moves", "resumes")


class TimelineError(PlanbError):
    """The job has no times to draw (its RayJob has no creationTimestamp, or goodput was not collected)."""

    exit_code = EXIT_FAILED


@dataclass(frozen=True)
class Span:
    """Something that lasted: ``kind`` picks its colour (queued, rung:FLAVOR, Provisioned, Failed, waiting)."""

    lane: str
    start: float
    end: float
    label: str
    kind: str


@dataclass(frozen=True)
class Mark:
    """Something that happened at one time."""

    lane: str
    at: float
    label: str


@dataclass
class Timeline:
    title: str
    start: float
    end: float
    spans: list[Span] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)

    def labels(self, lane: str) -> list[str]:
        """The labels in ``lane``, in time order."""
        found = [(s.start, s.label) for s in self.spans if s.lane == lane]
        found += [(m.at, m.label) for m in self.marks if m.lane == lane]
        return [label for _, label in sorted(found)]


def build(job: JobStatus) -> Timeline:
    """What the picture of ``job`` holds (collected with goodput: its runs, attempts and resumes)."""
    g = job.goodput
    if g is None or g.submitted is None:
        raise TimelineError(
            f"{job.namespace}/{job.name}: no submission time to start the timeline from (the RayJob's "
            "creationTimestamp, read with the goodput terms)"
        )
    end = g.finished if g.finished is not None else g.now
    out = Timeline(f"{job.namespace}/{job.name}", g.submitted, max(end, g.submitted + 1.0))
    admitted = [r.admission for r in g.runs if r.admission is not None]
    first = admitted[0].at if admitted else out.end
    out.spans.append(Span("rung", g.submitted, first, "waiting for admission", "queued"))
    for i, adm in enumerate(admitted):
        until = admitted[i + 1].at if i + 1 < len(admitted) else out.end
        label = f"on {flavor_named(adm.flavor, job.flavor_plans)}"
        out.spans.append(Span("rung", adm.at, until, label, f"rung:{adm.flavor}"))
    out.marks.append(Mark("Workload", g.submitted, "submitted"))
    for cond in job.conditions:
        if cond.at is not None and cond.status == "True":
            out.marks.append(Mark("Workload", cond.at, cond.type))
    for attempt in [a for r in g.runs for a in r.attempts] + g.pending:
        so_far = "" if attempt.done else " (so far)"
        out.spans.append(
            Span(
                "ProvisioningRequest",
                attempt.created,
                attempt.created + attempt.seconds,
                f"{attempt.name}: {attempt.outcome}{so_far}",
                attempt.outcome if attempt.done else "waiting",
            )
        )
    migrations = job.concurrent.migrations if job.concurrent is not None else []
    for i, move in enumerate(migrations, 1):
        at = parse_time(move.at)
        if at is not None:
            lost = "" if move.steps_lost is None else f", {move.steps_lost} step(s) lost"
            out.marks.append(Mark("moves", at, f"move {i}: {move.from_flavor} -> {move.to_flavor or '?'}{lost}"))
    if job.moved_at is not None:
        out.marks.append(Mark("moves", job.moved_at, "failover: moved to plan B"))
    resumes = g.record.resumes if g.record is not None else []
    for i, resume in enumerate(resumes):
        # The k-th resume began the (k+1)-th run: its admission when the line carries no time of its own.
        at = resume.at if resume.at is not None else (admitted[i + 1].at if i + 1 < len(admitted) else None)
        if at is not None:
            out.marks.append(Mark("resumes", at, f"resume from step {resume.step} ({resume.lost} step(s) lost)"))
    return out


__all__ = ["LANES", "Mark", "Span", "Timeline", "TimelineError", "build"]
