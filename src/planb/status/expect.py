"""`planb status --expect JOB=FLAVOR ...`: wait until each job is admitted on its flavor, or say why it will not be."""

from __future__ import annotations

import argparse
import time

from planb.errors import EXIT_FAILED, EXIT_OK, UsageError
from planb.kube import Kube
from planb.printable import printable
from planb.status.render import explain, table
from planb.status.report import admitted_on, collect, provisioned, why_it_cannot_run


def parse_expect(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        job, sep, flavor = item.partition("=")
        if not sep or not job or not flavor:
            raise UsageError(f"--expect {item!r} is not JOB=FLAVOR (e.g. job-1=on-demand)")
        out[job] = flavor
    return out


#: Seconds between looks while --expect waits (each look is a few list calls to the API server).
EXPECT_POLL_S = 0.25


def expect(kube: Kube, args: argparse.Namespace) -> int:
    """Wait until each job is admitted on its flavor (a provisioning flavor also needs Provisioned)."""
    wanted = parse_expect(args.expect)
    deadline = time.monotonic() + args.timeout
    start = time.monotonic()
    last_print = -1e9
    while True:
        jobs = {j.name: j for j in collect(kube, args.namespace)}
        missing = []
        lost = [
            why for name, flavor in wanted.items() if name in jobs and (why := why_it_cannot_run(jobs[name], flavor))
        ]
        for name, flavor in wanted.items():
            job = jobs.get(name)
            ok = job is not None and admitted_on(job, flavor) and (not job.requests or provisioned(job))
            if not ok:
                where = f"{job.state} on {job.accelerator_flavor}" if job else "not found"
                missing.append(f"{name} ({where}, want {flavor})")
        now = time.monotonic()
        if not missing or lost or now >= deadline:
            break
        if now - last_print >= 5:
            print(printable(f"[planb status] {now - start:5.1f} s: waiting for {'; '.join(missing)}"), flush=True)
            last_print = now
        time.sleep(EXPECT_POLL_S)
    print(table(list(jobs.values())))
    if lost:
        print(printable(f"\nnot as expected, and waiting cannot change it: {'; '.join(lost)}"))
        for job in jobs.values():
            print(explain(job))
        return EXIT_FAILED
    if missing:
        print(printable(f"\nnot as expected after {args.timeout:.0f} s: {'; '.join(missing)}"))
        for job in jobs.values():
            print(explain(job))
        return EXIT_FAILED
    print(f"\nall {len(wanted)} job(s) admitted as expected in {time.monotonic() - start:.1f} s")
    return EXIT_OK
