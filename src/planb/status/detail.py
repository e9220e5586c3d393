"""What the text views print of a job beyond its Workload's own lines, from what planb.status.goodput and
planb.status.variants computed: the goodput block of `planb status JOB` (the goodput and its terms per run), a
concurrent job's variants and migrations (a line in the table, a block in the detail view), planb's hint under a
ProvisioningRequest whose GKE reason it explains (``request_hint``), and the time formats the views and documents
print (``stamp``, ``seconds``).

After a failed scale-up in a node pool (a resize request whose create call failed, e.g. Failed with
QueuingInfeasibleNoCapacity) GKE's autoscaler backs the pool off: 5 minutes, the same again for a failure while backed
off, doubled for one after it ended, up to 30 (GoogleCloudPlatform/cluster-autoscaler
pkg/provisioningrequests/scaleup/executor.go RegisterFailedScaleUp, pkg/backoff/gke_mig_backoff.go). A request no
other pool takes meanwhile stays ``Accepted=False`` with NodepoolInBackoff and fails with it two minutes after its
creation; Kueue retries a failed one like any other, so the detail view names the backoff and what comes next
(``backoff_hint``).
"""

from __future__ import annotations

import time

from planb.status.admissions import Attempt
from planb.status.durations import duration
from planb.status.goodput import Goodput, Run
from planb.status.variants import Variants


def seconds(value: float) -> str:
    """0.4s, 12.0s, 3m05s: tenths below a minute (a lost step takes less than a second), else ``duration``'s form."""
    return f"{value:.1f}s" if 0 <= value < 60 else duration(value)


def stamp(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


#: GKE's reason for a request no node pool holds whole (planb.local.capacity.scaleup.POOL_SIZE_REASON).
POOL_SIZE_REASON = "NodepoolSizeReached"
#: GKE's reason for a request whose pools are backed off after a failed scale-up
#: (planb.local.capacity.scaleup.BACKOFF_REASON).
BACKOFF_REASON = "NodepoolInBackoff"


def one_pool_hint(reason: str, pods: int) -> str:
    """planb's explanation of GKE's NodepoolSizeReached for a request, '' for any other reason."""
    if reason != POOL_SIZE_REASON:
        return ""
    return (
        f"planb: GKE provisions a request only in one node pool that holds all its {pods} pods, and a multi-host "
        "TPU pool holds one slice, so a job of two or more slices never fits a DWS pool: run it with "
        "job.workers.replicas=1, or keep it off DWS (job.avoidPlans; the chart does so for a multi-slice job)"
    )


def backoff_hint(reason: str, state: str) -> str:
    """planb's explanation of GKE's NodepoolInBackoff for a request in ``state``, '' for any other reason."""
    if reason != BACKOFF_REASON:
        return ""
    then = (
        "Kueue retries the request after its own backoff (retryStrategy) while retries are left"
        if state == "Failed"
        else "GKE fails the request two minutes after its creation if no pool takes it by then, and Kueue retries it"
    )
    return (
        "planb: GKE backs a node pool off after a failed scale-up in it (5 minutes, doubled for a failure after "
        f"a backoff ended, at most 30) and queues no request in it meanwhile; {then}"
    )


def request_hint(reason: str, state: str, pods: int) -> str:
    """planb's explanation of GKE's reason on a request ('' when planb adds nothing)."""
    return one_pool_hint(reason, pods) or backoff_hint(reason, state)


def variants_summary(found: Variants) -> str:
    """One line: where the job runs, what it pursues, how often it migrated and the steps that cost."""
    lost = [m.steps_lost for m in found.migrations if m.steps_lost is not None]
    return (
        f"runs on {found.running_on}, pursues {', '.join(found.pursued) or '-'}, "
        f"{len(found.migrations)} migration(s)" + (f", {sum(lost)} step(s) lost" if lost else "")
    )


def variants_lines(found: Variants, plans: dict[str, str]) -> list[str]:
    """The detail lines of `planb status JOB` for a concurrent job: where it runs, what it pursues, each variant
    and each migration."""

    def named(flavor: str) -> str:
        plan = plans.get(flavor)
        return f"{flavor} (plan {plan})" if plan and plan != flavor else flavor

    lines = [
        f"  concurrent ladder: runs on {named(found.running_on)}; pursues "
        + (", ".join(named(f) for f in found.pursued) or "no more preferred plan")
    ]
    for v in found.variants:
        lines.append(f"    variant {v.name}: {v.flavor} {v.state}")
    for m in found.migrations:
        lost = "steps lost unknown" if m.steps_lost is None else f"{m.steps_lost} step(s) lost"
        lines.append(f"  migrated at {m.at}: {m.from_flavor} -> {m.to_flavor or '?'} ({lost})")
    return lines


def flavor_named(flavor: str, plans: dict[str, str]) -> str:
    """A flavor as the views print it: with its plan when the plan has another name (timeline's rung lane too)."""
    if not flavor:
        return "a flavor Kueue's Events do not name"
    plan = plans.get(flavor)
    return f"{flavor} (plan {plan})" if plan and plan != flavor else flavor


def _attempt(a: Attempt) -> str:
    if a.done:
        return f"{a.name} {seconds(a.seconds)} (created -> {a.outcome})"
    return f"{a.name} {seconds(a.seconds)} so far ({a.outcome})"


def _run(i: int, run: Run, plans: dict[str, str], newest: bool, finished: bool) -> str:
    adm, train = run.admission, run.train
    if adm is None:
        head = f"run {i}: no record of its admission left (Kueue's Events last kube-apiserver's --event-ttl)"
    else:
        quota = "?" if adm.waited_s is None else seconds(adm.waited_s)
        checks = "?" if adm.checks_s is None else seconds(adm.checks_s)
        total = "" if adm.waited_s is None or adm.checks_s is None else f" {seconds(adm.waited_s + adm.checks_s)}"
        head = (
            f"run {i} on {flavor_named(adm.flavor, plans)}, admitted {stamp(adm.at)}: "
            f"waited for admission{total} (quota {quota}, admission checks {checks})"
        )
    provisioning = "; ".join(_attempt(a) for a in run.attempts) or "none"
    if train is None:
        trained = "training: no train.py run in its log"
        lost = "steps lost ?"
    else:
        kept = "unknown" if train.kept_s is None else seconds(train.kept_s)
        so_far = " so far" if newest and not finished else ""
        trained = f"training {kept} kept{so_far} (steps {train.from_step}-{train.to_step})"
        if train.lost is None:
            lost = "steps lost 0" if finished or not newest else "steps lost none yet"
        else:
            took = "" if train.lost_s is None else f" ({seconds(train.lost_s)})"
            lost = f"steps lost {train.lost}{took}"
    return f"    {head}; provisioning {provisioning}; {trained}; {lost}"


def goodput_lines(g: Goodput, plans: dict[str, str]) -> list[str]:
    """The goodput block of the detail view: the goodput and its terms, per run and in total."""
    wall = "?" if g.wall_s is None else seconds(g.wall_s)
    begun = f" since submission at {stamp(g.submitted)}" if g.submitted is not None else " since submission"
    until = f", finished {stamp(g.finished)}" if g.finished is not None else " (running)"
    kept = "?" if g.kept_s is None else seconds(g.kept_s)
    if g.ratio is None:
        lines = [f"  goodput unknown: missing {'; '.join(g.missing)}"]
    else:
        lines = [f"  goodput {g.percent}: training kept {kept} / wall {wall}{begun}{until}"]
    for i, run in enumerate(g.runs, 1):
        lines.append(_run(i, run, plans, i == len(g.runs), g.finished is not None))
    if not g.runs:
        lines.append("    no run yet: Kueue has not admitted the job")
    lines += [f"    provisioning for the next run: {_attempt(a)}" for a in g.pending]
    if g.record is None:
        lost, step = "? step(s) lost", ""
    else:
        lost = f"{g.steps_lost} step(s) lost" + ("" if g.lost_s is None else f" ({seconds(g.lost_s)})")
        tokens = "" if g.record.tokens is None else f" ({g.record.tokens} tokens)"
        step = f", {g.record.source}'s latest record at step {g.record.step}{tokens}"
    lines.append(f"    total: wall {wall}; training {kept} kept{step}; {lost}; goodput {g.percent}")
    admitted = sum(1 for r in g.runs if r.admission is not None)
    trained = sum(1 for r in g.runs if r.train is not None)
    if g.record is not None and admitted != trained:
        lines.append(
            f"    Kueue shows {admitted} admission(s) and {g.record.source}'s log {trained} run(s): paired newest "
            "first (docs/goodput.md)"
        )
    if g.hidden:
        lines.append(f"    {g.hidden} more admission(s) counted in Kueue's Events without their times")
    lines += [f"    not read: {what}" for what in g.unreadable]
    return lines
