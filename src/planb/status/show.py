"""`planb status`'s output: what one look says (planb.status.report.Look), printed as the flags ask: the region
tokens' warnings first, then the ledger (``--capacity``), the chip-hours (``--cost``) or the jobs, as text or one
document (``-o``), and with ``--timeline`` one job's picture. Its exit code is planb.errors': EXIT_FAILED when no
job matched or a job is in a failed state (JobStatus.failed), else EXIT_OK."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from planb.errors import EXIT_FAILED, EXIT_OK
from planb.printable import printable
from planb.status import cost, obtainability, serialize
from planb.status.regions import TokenWarning
from planb.status.render import by_team, explain
from planb.status.report import Look


def show(look: Look, args: argparse.Namespace) -> int:
    """Print ``look`` as ``args`` ask (``-o``, ``--capacity``, ``--cost``, JOB, ``--timeline``); the exit code."""
    output = getattr(args, "output", None)
    _warnings(look.warnings, output)
    if look.obtainability is not None:
        found = look.obtainability
        print(
            serialize.dump(obtainability.document(found), output) if output else obtainability.text(found) + "\n",
            end="",
        )
        return EXIT_OK
    if getattr(args, "cost", False):
        costs = [cost.of_job(job) for job in look.jobs]
        rate = args.rate_per_chip_hour
        print(serialize.dump(cost.document(costs, rate), output) if output else cost.text(costs, rate) + "\n", end="")
        return EXIT_OK
    jobs = look.jobs
    if not jobs:
        where = "any namespace" if args.all_namespaces else f"namespace {args.namespace!r}"
        what = f"no RayJob {args.job!r}" if args.job else "no RayJob"
        print(
            f"{what} found in {where}. Submit one with: helm install job-1 charts/planb",
            file=sys.stderr if output else sys.stdout,
        )
        if output and not args.job:
            print(serialize.dump(serialize.document(jobs, warnings=look.warnings), output), end="")
        return EXIT_FAILED
    if output:
        print(serialize.dump(serialize.document(jobs, one=bool(args.job), warnings=look.warnings), output), end="")
    else:
        print(by_team(jobs))
        print()
        for job in jobs:
            print(explain(job))
    if getattr(args, "timeline", None):
        from planb.status import timeline_draw  # matplotlib loads only here: `planb status` stays fast without it

        path = Path(args.timeline)
        timeline_draw.draw(jobs[0], path)
        stream = sys.stderr if output else sys.stdout  # beside a document, on stderr
        print(printable(f"timeline of {jobs[0].namespace}/{jobs[0].name}: {path}"), file=stream)
    return EXIT_FAILED if any(job.failed for job in jobs) else EXIT_OK


def _warnings(warnings: list[TokenWarning], output: str | None) -> None:
    """On a MultiKueue manager: each region token that lapses soon, said first (on stderr beside a document)."""
    for found in warnings:
        print(f"WARNING {found.line()}", file=sys.stderr if output else sys.stdout)
    if warnings and not output:
        print()
