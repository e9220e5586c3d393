"""`planb status`'s two views of the jobs `planb.status.report.collect` read: a table, one line per job, and the
detail view of one job.

Both are printed to the operator's terminal, and most of their text is a cluster's: object names, Kueue's and
KubeRay's reasons and messages, a region's copy, the submitter's log. Whoever writes those objects could write an
escape sequence there (OSC 52 writes the clipboard, CSI 2J clears the screen, CR overwrites a line), so each view is
passed through `printable` whole, after its cells are (so that the table's columns are measured as shown). The
documents of ``-o json`` and ``-o yaml`` need no such pass: json.dumps writes each control character as \\uXXXX,
and yaml.safe_dump quotes a string that holds one and writes it as an escape."""

from __future__ import annotations

from planb.printable import printable
from planb.status.detail import goodput_lines, request_hint, variants_lines, variants_summary
from planb.status.job_status import JobStatus


def by_team(jobs: list[JobStatus]) -> str:
    """The jobs' table; with jobs of more than one team (JobStatus.team), one table per team under its name."""
    teams = sorted({job.team or job.namespace for job in jobs})
    if len(teams) < 2:
        return table(jobs)
    parts = []
    for team in teams:
        mine = [job for job in jobs if (job.team or job.namespace) == team]
        parts.append(printable(f"TEAM {team} ({len(mine)} job{'s' if len(mine) != 1 else ''})") + "\n" + table(mine))
    return "\n\n".join(parts)


def table(jobs: list[JobStatus]) -> str:
    """One line per job: where it landed."""
    rows: list[tuple[str, ...]] = [
        ("JOB", "STATE", "PLAN", "FLAVOR", "ADMISSION CHECK", "PROVISIONING REQUEST", "NODE POOL", "NODES", "GOODPUT")
    ]
    for job in jobs:
        checks = ", ".join(f"{c.name}={c.state}" for c in job.checks) or "-"
        reqs = ", ".join(f"{r.name}={r.state}" for r in job.requests) or "-"
        rows.append(
            tuple(
                printable(cell)
                for cell in (
                    f"{job.namespace}/{job.name}",
                    job.state,
                    job.plan,
                    job.accelerator_flavor,
                    checks,
                    reqs,
                    ",".join(job.node_pools) or "-",
                    str(len(job.nodes)),
                    job.goodput.percent if job.goodput is not None else "-",
                )
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines += [f"MOVED {job.namespace}/{job.name}: {job.moved}" for job in jobs if job.moved]
    lines += [f"CONCURRENT {j.namespace}/{j.name}: {variants_summary(j.concurrent)}" for j in jobs if j.concurrent]
    lines += [f"REGION {j.namespace}/{j.name}: {j.regions.line()}" for j in jobs if j.regions]
    return printable("\n".join(lines))


def explain(job: JobStatus) -> str:
    """The detail view: why the job is where it is."""
    lines = [f"RayJob {job.namespace}/{job.name} (queue {job.queue}, {'suspended' if job.suspended else 'running'})"]
    if job.off_dws:
        lines.append(f"  {job.off_dws}")
    if job.workload is None:
        lines.append("  Workload: none yet — Kueue has not seen the job (is the queue-name label right?)")
    else:
        lines += _admitted_lines(job)
    if job.goodput is not None:
        lines += goodput_lines(job.goodput, job.flavor_plans)
    return printable("\n".join(lines))


def _admitted_lines(job: JobStatus) -> list[str]:
    """The detail view of a job Kueue has a Workload of: its move, state, shape, plan, regions, phases, variants,
    PodSets, checks, requests, KubeRay's status and the pods."""
    lines = []
    if job.moved:
        lines.append(f"  {job.moved}")
    if job.deactivated:
        lines.append(f"  {job.deactivated}")
    lines.append(f"  Workload {job.workload}: {job.state}" + (f" — {job.reason}" if job.reason else ""))
    if job.shape or job.cluster_shapes:
        queue = f"ClusterQueue {job.cluster_queue}" if job.cluster_queue else "the cluster's flavors"
        lines.append(f"    profile {job.profile} (the job's workers), {job.cluster_profile} ({queue})")
    if job.shape_note:
        lines.append(f"  {job.shape_note}")
    if job.plan != "-":
        lines.append(f"    plan {job.plan} (flavor {job.accelerator_flavor})")
    if job.regions is not None:
        lines.append(f"  region: {job.regions.line()}")
        for copy in job.regions.regions:
            if copy.state != "lost":
                lines += [f"    {copy.region}: {copy.state}"] + [f"      {check}" for check in copy.checks]
        lines += [f"  {line}" for line in job.regions.calendar]
    if job.phases:
        lines.append(f"    phases: {job.phases}")
    if job.concurrent is not None:
        lines += variants_lines(job.concurrent, job.flavor_plans)
    for ps in job.podsets:
        flavors = ", ".join(f"{r}={f}" for r, f in sorted(ps.flavors.items()))
        lines.append(f"    podset {ps.name} x{ps.count}: {flavors}")
    for check in job.checks:
        extra = []
        if check.name in job.retries and job.active:
            extra.append(job.retries[check.name].describe())
        if check.state == "Retry" and check.requeue_after is not None:
            extra.append(f"next attempt after a {check.requeue_after}s backoff")
        lines.append(
            f"  admission check {check.name}: {check.state}"
            + (f" ({'; '.join(extra)})" if extra else "")
            + (f" — {check.message}" if check.message else "")
        )
    for req in job.requests:
        detail = " ".join(x for x in (req.reason, req.message) if x)
        lines.append(
            f"  ProvisioningRequest {req.name}: {req.state}"
            + (f" [{req.queued_for}]" if req.queued_for else "")
            + (f" — {detail}" if detail else "")
        )
        hint = request_hint(req.reason, req.state, req.pods)
        if hint:
            lines.append(f"    {hint}")
    if job.ray_status:
        lines.append(f"  KubeRay: {job.ray_status}")
    for pod, phase, node in job.pods:
        pool = job.nodes.get(node, "-")
        plan = job.node_plans.get(node)
        lines.append(f"  pod {pod}: {phase} on {node} (pool {pool}" + (f", plan {plan})" if plan else ")"))
    if not job.pods and job.state in ("Pending", "QuotaReserved") and not job.shape_note:
        lines.append("  no pods yet: the job waits for admission (quota, or the provisioning check)")
    return lines
