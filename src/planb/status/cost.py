"""`planb status --cost`: chip-hours per job and per team, and what they cost at the operator's rate.

The sources, and nothing else:

* when each run held its chips: Kueue's admissions of the job's Workloads (planb.status.admissions, through the
  goodput's runs): a run starts at its admission and ends at the next run's requeue (the next admission less the
  wait Kueue reports for it: queued since requeued, then the checks), at the Workload's Finished condition, at its
  Admitted condition turned False (an eviction), or now while it runs. An earlier run whose next one has no wait
  figure (an Event folded or dropped) ends at the next admission: an upper bound, marked ``<=``.
* how many chips: Kueue's admission of the Workload (status.admission.podSetAssignments: each accelerator pod
  set's count) times the catalog's chips per host of the job's profile (planb.catalog.profiles), one pod per host.

A team is the job's ClusterQueue when the queues release made it for a team (queues.teams), else its namespace.
The cost is chip-hours times ``--rate-per-chip-hour``, in the operator's
currency: planb knows no price (Google's depend on the region, the provisioning model and the contract).
"""

from __future__ import annotations

from dataclasses import dataclass

from planb.catalog import profiles
from planb.catalog.errors import CatalogError
from planb.status.admissions import ACCELERATORS
from planb.status.job_status import JobStatus


@dataclass(frozen=True)
class JobCost:
    """One job's chip-hours, as Kueue's admissions and the catalog give them."""

    namespace: str
    name: str
    profile: str
    #: Chips the job holds while admitted (None: not admitted now, so Kueue's admission gives no count).
    chips: int | None
    #: Seconds admitted, over every run Kueue records.
    admitted_s: float
    runs: int
    #: Some run's end is the next admission (its wait unknown): chip-hours at most this.
    upper_bound: bool
    #: The job's team (JobStatus.team: its ClusterQueue when that is a team's); '' counts its namespace.
    team: str = ""

    @property
    def chip_hours(self) -> float | None:
        return None if self.chips is None else self.chips * self.admitted_s / 3600.0


def chips_of(job: JobStatus) -> int | None:
    """The chips of ``job``'s admission: each accelerator pod set's count times its profile's chips per host; 0 for
    a job without accelerators, None when Kueue's admission holds no counts (not admitted now)."""
    if job.profile in ("", "-"):
        return 0
    accelerated = [ps for ps in job.podsets if any(res in ACCELERATORS for res in ps.flavors)]
    if not accelerated:
        return None
    try:
        per_host = profiles.get(job.profile).chips_per_host
    except CatalogError:
        return None
    return sum(ps.count for ps in accelerated) * per_host


def _evicted_at(job: JobStatus) -> float | None:
    return next((c.at for c in job.conditions if c.type == "Admitted" and c.status == "False"), None)


def of_job(job: JobStatus) -> JobCost:
    """``job``'s chip-hours from its goodput's runs (collect(..., goodput=True) reads them)."""
    goodput = job.goodput
    runs = [run.admission for run in (goodput.runs if goodput else []) if run.admission is not None]
    total, bound = 0.0, False
    for i, adm in enumerate(runs):
        if i + 1 < len(runs):
            nxt = runs[i + 1]
            wait = None if nxt.waited_s is None else nxt.waited_s + (nxt.checks_s or 0.0)
            bound = bound or wait is None
            end = nxt.at - (wait or 0.0)
        elif goodput is not None:  # the runs come from it
            evicted = _evicted_at(job)
            end = goodput.finished or (evicted if evicted and evicted >= adm.at else goodput.now)
        else:
            end = adm.at
        total += max(0.0, end - adm.at)
    return JobCost(job.namespace, job.name, job.profile, chips_of(job), total, len(runs), bound, job.team)


def _hours(cost: float | None, bound: bool = False) -> str:
    return "-" if cost is None else f"{'<=' if bound else ''}{cost:.2f}"


def _money(hours: float | None, rate: float | None) -> str:
    return "-" if hours is None or rate is None else f"{hours * rate:.2f}"


def teams(costs: list[JobCost]) -> dict[str, float]:
    """Chip-hours per team (its ClusterQueue when that is a team's, else its namespace), the jobs of unknown chips left
    out."""
    out: dict[str, float] = {}
    for cost in costs:
        team = cost.team or cost.namespace
        out[team] = out.get(team, 0.0) + (cost.chip_hours or 0.0)
    return dict(sorted(out.items()))


def text(costs: list[JobCost], rate: float | None) -> str:
    """The two tables: per job, then per team; the cost column only with a rate."""
    head = f"{'NAMESPACE':<16} {'JOB':<24} {'PROFILE':<16} {'CHIPS':>5} {'RUNS':>4} {'ADMITTED':>9} {'CHIP-HOURS':>11}"
    lines = [head + (f" {'COST':>10}" if rate is not None else "")]
    for c in costs:
        row = (
            f"{c.namespace:<16} {c.name:<24} {c.profile:<16} {'-' if c.chips is None else c.chips:>5} {c.runs:>4} "
            f"{c.admitted_s / 3600.0:>8.2f}h {_hours(c.chip_hours, c.upper_bound):>11}"
        )
        lines.append(row + (f" {_money(c.chip_hours, rate):>10}" if rate is not None else ""))
    lines += ["", f"{'TEAM (namespace)':<24} {'CHIP-HOURS':>11}" + (f" {'COST':>10}" if rate is not None else "")]
    for team, hours in teams(costs).items():
        lines.append(f"{team:<24} {hours:>11.2f}" + (f" {_money(hours, rate):>10}" if rate is not None else ""))
    if any(c.chips is None for c in costs):
        lines += ["", "CHIPS '-': not admitted now, so Kueue's admission holds no count; its chip-hours are left out"]
    if any(c.upper_bound for c in costs):
        lines += ["", "'<=': a run's end is the next admission (Kueue's Event with its wait was folded or dropped)"]
    if rate is None:
        lines += ["", "Costs: pass --rate-per-chip-hour RATE (your price per chip-hour; planb knows none)."]
    return "\n".join(lines)


def document(costs: list[JobCost], rate: float | None) -> dict[str, object]:
    """The same as one JSON/YAML document."""
    jobs = [
        {
            "namespace": c.namespace,
            "name": c.name,
            "profile": c.profile,
            "chips": c.chips,
            "runs": c.runs,
            "admittedSeconds": round(c.admitted_s, 3),
            "chipHours": None if c.chip_hours is None else round(c.chip_hours, 4),
            "upperBound": c.upper_bound,
            "cost": None if c.chip_hours is None or rate is None else round(c.chip_hours * rate, 4),
        }
        for c in costs
    ]
    by_team = [
        {"team": t, "chipHours": round(h, 4), "cost": None if rate is None else round(h * rate, 4)}
        for t, h in teams(costs).items()
    ]
    return {"ratePerChipHour": rate, "jobs": jobs, "teams": by_team}
