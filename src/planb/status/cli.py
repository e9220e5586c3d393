"""`planb status`: why is my job pending?"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from planb import paths
from planb.argtypes import finite
from planb.errors import PlanbError
from planb.kube import Kube, KubeError
from planb.status.render import explain, table
from planb.status.report import admitted_on, collect, provisioned, why_it_cannot_run


def _kubeconfig(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    if os.environ.get("KUBECONFIG"):
        return Path(os.environ["KUBECONFIG"].split(os.pathsep)[0])
    if paths.local_kubeconfig().is_file():
        return paths.local_kubeconfig()
    return Path.home() / ".kube" / "config"


def _once(kube: Kube, args: argparse.Namespace) -> int:
    jobs = collect(kube, None if args.all_namespaces else args.namespace, args.job, goodput=True)
    if not jobs:
        where = "any namespace" if args.all_namespaces else f"namespace {args.namespace!r}"
        what = f"no RayJob {args.job!r}" if args.job else "no RayJob"
        print(f"{what} found in {where}. Submit one with: helm install job-1 charts/planb")
        return 1
    print(table(jobs))
    print()
    for job in jobs:
        print(explain(job))
    return 0


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive count")
    return value


def _parse_expect(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        job, sep, flavor = item.partition("=")
        if not sep or not job or not flavor:
            raise PlanbError(f"--expect {item!r} is not JOB=FLAVOR (e.g. job-1=on-demand)")
        out[job] = flavor
    return out


#: Seconds between looks while --expect waits (each look is a few list calls to the API server).
EXPECT_POLL_S = 0.25


def _expect(kube: Kube, args: argparse.Namespace) -> int:
    """Wait until each job is admitted on its flavor (a provisioning flavor also needs Provisioned)."""
    wanted = _parse_expect(args.expect)
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
            print(f"[planb status] {now - start:5.1f} s: waiting for {'; '.join(missing)}", flush=True)
            last_print = now
        time.sleep(EXPECT_POLL_S)
    print(table(list(jobs.values())))
    if lost:
        print(f"\nnot as expected, and waiting cannot change it: {'; '.join(lost)}")
        for job in jobs.values():
            print(explain(job))
        return 1
    if missing:
        print(f"\nnot as expected after {args.timeout:.0f} s: {'; '.join(missing)}")
        for job in jobs.values():
            print(explain(job))
        return 1
    print(f"\nall {len(wanted)} job(s) admitted as expected in {time.monotonic() - start:.1f} s")
    return 0


def _status(args: argparse.Namespace) -> int:
    kubeconfig = _kubeconfig(args.kubeconfig)
    if not kubeconfig.is_file():
        raise PlanbError(
            f"no kubeconfig at {kubeconfig}. Fix: pass --kubeconfig, set KUBECONFIG, or run 'planb local up'."
        )
    kube = Kube(kubeconfig)
    if args.expect:
        return _expect(kube, args)
    if not args.watch:
        return _once(kube, args)
    return _watch(kube, args)


#: The longest wait between refreshes while the API keeps failing (unless --interval is longer).
MAX_BACKOFF_S = 30.0
#: How the watch waits between refreshes (tests replace it).
watch_sleep: Callable[[float], None] = time.sleep


def backoff(interval: float, failures: int) -> float:
    """Seconds to the next refresh after `failures` failed ones in a row: doubling from the interval, capped."""
    if failures <= 0:
        return interval
    return min(max(interval, MAX_BACKOFF_S), max(interval, 0.1) * 2.0 ** min(failures, 16))


def _watch(kube: Kube, args: argparse.Namespace) -> int:
    """Refresh until Ctrl-C (or --count refreshes); the exit status is the last refresh's.

    An API error (server down, restarting, unreachable) does not end the watch: the refresh shows it
    with its time, and the next one retries after a backoff that doubles up to MAX_BACKOFF_S.
    """
    failures = 0
    refreshes = 0
    while True:
        refreshes += 1
        print("\033[2J\033[H", end="")
        print(time.strftime("%H:%M:%S"), "planb status (Ctrl-C to stop)\n")
        try:
            result = _once(kube, args)
            failures = 0
        except KubeError as exc:
            failures += 1
            result = 2
            print(f"{time.strftime('%H:%M:%S')} API error ({failures} in a row): {exc}")
        if args.count is not None and refreshes >= args.count:
            return result
        delay = backoff(args.interval, failures)
        if failures:
            print(f"still watching: next try in {delay:.1f} s (Ctrl-C to stop)")
        sys.stdout.flush()
        watch_sleep(delay)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `planb status`."""
    parser = sub.add_parser("status", help="where each RayJob landed, and why it waits if it does")
    parser.add_argument("job", nargs="?", help="one RayJob (default: all)")
    parser.add_argument("-n", "--namespace", default="default", help="namespace (default: default)")
    parser.add_argument("-A", "--all-namespaces", action="store_true", help="every namespace")
    parser.add_argument("--kubeconfig", help="default: $KUBECONFIG, else the local stack's, else ~/.kube/config")
    parser.add_argument("-w", "--watch", action="store_true", help="refresh until interrupted")
    parser.add_argument("--interval", type=finite, default=2.0, help="seconds between refreshes with --watch")
    parser.add_argument(
        "--count",
        type=_positive_int,
        metavar="N",
        help="with --watch: stop after N refreshes (default: until Ctrl-C); exit status of the last one",
    )
    parser.add_argument(
        "--expect",
        action="append",
        metavar="JOB=FLAVOR",
        help="wait until JOB is admitted on FLAVOR (and its ProvisioningRequest provisioned, if any); exit 1 if not",
    )
    parser.add_argument("--timeout", type=finite, default=180.0, help="seconds to wait with --expect")
    parser.set_defaults(handler=_status)
