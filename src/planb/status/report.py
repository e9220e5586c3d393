"""What one look says: where each RayJob landed and why it waits if it does (planb.status.derive, job by job), the
region tokens that lapse soon and the ledger, interpreted from one look's reads (planb.status.gather) with no read of
its own; collect reads and interprets (for --expect and the tests), and what --expect asks of a job."""

from __future__ import annotations

from dataclasses import dataclass

from planb.kube import Kube
from planb.status import obtainability
from planb.status import regions as regions_
from planb.status.derive import derive
from planb.status.gather import KUEUE, PROVREQ, RAY, Reading, read
from planb.status.job_status import CheckInfo, ConditionInfo, JobStatus, PodSetInfo, RequestInfo
from planb.status.snapshot_maps import maps_of


def jobs_of(reading: Reading) -> list[JobStatus]:
    """Each job's status from one look's reads (planb.status.gather): the cluster-wide maps
    (planb.status.snapshot_maps), then per job derive and what its own reads say. No read."""
    if reading.snapshot is None:
        return []
    maps = maps_of(reading.snapshot)
    return [derive(reads, maps, reading.snapshot, reading.goodput) for reads in reading.jobs]


@dataclass(frozen=True)
class Look:
    """What one look says, interpreted from its reads: the jobs, the region tokens that lapse soon, the ledger."""

    jobs: list[JobStatus]
    warnings: list[regions_.TokenWarning]
    obtainability: obtainability.Obtainability | None


def look(reading: Reading) -> Look:
    """One look's reads interpreted, with no read: planb.status.show prints it."""
    return Look(
        jobs_of(reading),
        regions_.token_warnings(reading.tokens),
        obtainability.of_ledger(reading.ledger) if reading.ledger is not None else None,
    )


def collect(
    kube: Kube, namespace: str | None = None, name: str | None = None, goodput: bool = False
) -> list[JobStatus]:
    """The status of every RayJob (in one namespace, or one job); with ``goodput``, each job's goodput too: read
    (planb.status.gather), then interpreted (jobs_of)."""
    return jobs_of(read(kube, namespace, name, goodput))


def admitted_on(job: JobStatus, flavor: str) -> bool:
    return job.state in ("Admitted", "Finished") and job.accelerator_flavor == flavor


def why_it_cannot_run(job: JobStatus, flavor: str) -> str:
    """Why `job` can no longer be admitted on `flavor` ('' while it still can): its Workload finished on another
    flavor, or Kueue deactivated it (it stays so until someone re-activates it)."""
    if job.state == "Finished" and job.accelerator_flavor != flavor:
        return f"{job.name} finished on {job.accelerator_flavor}, not {flavor}"
    if not job.active:
        return f"{job.name} was deactivated{': ' + job.deactivated if job.deactivated else ''}"
    if job.shape_note:
        return f"{job.name}: {job.shape_note}"
    return ""


def provisioned(job: JobStatus) -> bool:
    return any(r.state == "Provisioned" for r in job.requests)


__all__ = [
    "KUEUE",
    "PROVREQ",
    "RAY",
    "CheckInfo",
    "ConditionInfo",
    "JobStatus",
    "Look",
    "PodSetInfo",
    "RequestInfo",
    "admitted_on",
    "collect",
    "look",
    "provisioned",
]
