"""`planb status`: why is my job pending? As a table and detail view, as JSON or YAML (``-o``), or as a picture of
one job's life (``--timeline``); its exit codes are planb.errors' (0 ok, 1 a failed job, 2 usage, 3 unreachable)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from planb import paths
from planb.argtypes import finite
from planb.errors import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    UnreachableError,
    UsageError,
    exit_codes_help,
)
from planb.kube import Kube, KubeError
from planb.kubeconfig import KubeconfigError, load
from planb.printable import printable
from planb.regions.access.connection import region_limits
from planb.status import expect, gather, serialize
from planb.status.report import look
from planb.status.show import show

DESCRIPTION = """\
Where each RayJob landed, and why it waits if it does: its Kueue Workload, the flavor of each PodSet, the
admission checks, the ProvisioningRequests with their reasons, the pods and the nodes they run on.
With JOB, that job's detail view: its runs, moves, retries and goodput (docs/pending-jobs.md).
The cluster is read as kubectl reads it: --kubeconfig, else every $KUBECONFIG file merged, else the
local stack's, else ~/.kube/config; --context, else the current context, whose namespace is the default."""

EPILOG = "\n".join(
    (
        """\
examples:
  planb status                                  every RayJob in the namespace
  planb status job-2 -w                         one job, refreshed until Ctrl-C
  planb status -A -o json                       every namespace, as one document (docs/status.schema.json)
  planb status --context prod -n team-a         another context and namespace
  planb status --expect job-2=dws --timeout 600 wait until job-2 is admitted on the dws flavor
  planb status job-c --timeline job-c.svg       a picture of job-c's life (the [timeline] extra)
  planb status --capacity                       on a MultiKueue manager: the obtainability ledger, the last advice
  PLANB_REGION_DEADLINE_S=10 planb status job-2 on a manager: 10 s for each region's answer (default 30;
                                                PLANB_REGION_MAX_BYTES, default 64Mi: docs/regions.md)
""",
        exit_codes_help(
            {
                EXIT_OK: "every job shown is fine; with --expect, every job landed where expected",
                EXIT_FAILED: "a job shown failed, no RayJob matched, or with --expect a job did not land as expected",
                EXIT_USAGE: "a command line planb status cannot use; nothing is read from the cluster",
                EXIT_UNREACHABLE: "the cluster cannot be read (no kubeconfig, the API server unreachable or in "
                "error); with -w, the last refresh's",
            }
        ),
    )
)

#: The pictures --timeline draws, by the file's suffix (matplotlib's Agg backend writes both).
TIMELINE_SUFFIXES = (".svg", ".png")


def _kubeconfig(arg: str | None) -> Path | list[Path]:
    """--kubeconfig's one file, else every file of $KUBECONFIG (kubectl merges them), else the local stack's, else
    ~/.kube/config."""
    if arg:
        return Path(arg)
    if listed := [Path(part) for part in os.environ.get("KUBECONFIG", "").split(os.pathsep) if part]:
        return listed
    if paths.local_kubeconfig().is_file():
        return paths.local_kubeconfig()
    return Path.home() / ".kube" / "config"


def _once(kube: Kube, args: argparse.Namespace) -> int:
    """One look: everything it shows read once (planb.status.gather), interpreted (planb.status.report.look), then
    printed as the flags ask (planb.status.show); the exit code is show's."""
    capacity, cost = bool(getattr(args, "capacity", False)), bool(getattr(args, "cost", False))
    reading = gather.read(
        kube,
        None if args.all_namespaces else args.namespace,
        args.job,
        goodput=True,
        jobs=not capacity,
        tokens=not cost,
        ledger=capacity,
    )
    said = look(reading)
    return show(said, args)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive count")
    return value


def _check_usage(args: argparse.Namespace) -> None:
    """Refuse options that do not go together (exit 2), before anything reads the cluster."""
    if args.expect:
        expect.parse_expect(args.expect)
    if getattr(args, "capacity", False) and (args.job or args.expect or args.timeline):
        what = f"JOB {args.job}" if args.job else "--expect" if args.expect else "--timeline"
        raise UsageError(
            f"--capacity shows the manager's ledger and last advice, no job's: not with {what}. Fix: drop one"
        )
    if getattr(args, "rate_per_chip_hour", None) is not None and not getattr(args, "cost", False):
        raise UsageError("--rate-per-chip-hour prices the chip-hours --cost adds up. Fix: add --cost")
    if (getattr(args, "rate_per_chip_hour", None) or 0.0) < 0:
        raise UsageError(f"--rate-per-chip-hour {args.rate_per_chip_hour} is negative. Fix: give your price, 0 or more")
    if getattr(args, "cost", False) and (args.capacity or args.expect or args.timeline):
        what = "--capacity" if args.capacity else "--expect" if args.expect else "--timeline"
        raise UsageError(f"--cost adds up the jobs' chip-hours: not with {what}. Fix: drop one")
    if args.output and (args.watch or args.expect):
        raise UsageError(
            f"-o {args.output} prints one document: not with {'--watch' if args.watch else '--expect'}. "
            "Fix: drop -o, or run `planb status -o ...` again each time"
        )
    if args.timeline:
        if not args.job:
            raise UsageError(
                f"--timeline {args.timeline} draws one job. Fix: name it, e.g. planb status job-1 --timeline ..."
            )
        if args.watch or args.expect:
            raise UsageError("--timeline draws one look at the job: not with --watch or --expect. Fix: drop one")
        if Path(args.timeline).suffix.lower() not in TIMELINE_SUFFIXES:
            raise UsageError(
                f"--timeline {args.timeline}: the file must end in {' or '.join(TIMELINE_SUFFIXES)} (the picture's "
                "format)"
            )


def _status(args: argparse.Namespace) -> int:
    _check_usage(args)
    region_limits()  # a bad $PLANB_REGION_* is a usage error now, not "unreadable" on every region later
    kubeconfig = _kubeconfig(args.kubeconfig)
    files = [kubeconfig] if isinstance(kubeconfig, Path) else kubeconfig
    if not any(file.is_file() for file in files):
        where = os.pathsep.join(str(file) for file in files)
        raise UnreachableError(
            f"no kubeconfig at {where}. Fix: pass --kubeconfig, set KUBECONFIG, or run 'planb local up'."
        )
    try:
        connection = load(kubeconfig, args.context)
    except KubeconfigError as exc:
        raise KubeError(0, "bad kubeconfig", str(exc)) from exc
    # kubectl's default for -n: the context's namespace.
    args.namespace = args.namespace or connection.namespace
    kube = Kube(next(file for file in files if file.is_file()), connection)
    if args.expect:
        return expect.expect(kube, args)
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
        if sys.stdout.isatty():  # clear the screen on a terminal only: a pipe or a file gets plain text
            print("\033[2J\033[H", end="")
        print(time.strftime("%H:%M:%S"), "planb status (Ctrl-C to stop)\n")
        try:
            result = _once(kube, args)
            failures = 0
        except KubeError as exc:
            failures += 1
            result = EXIT_UNREACHABLE
            print(printable(f"{time.strftime('%H:%M:%S')} API error ({failures} in a row): {exc}"))
        if args.count is not None and refreshes >= args.count:
            return result
        delay = backoff(args.interval, failures)
        if failures:
            print(f"still watching: next try in {delay:.1f} s (Ctrl-C to stop)")
        sys.stdout.flush()
        watch_sleep(delay)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `planb status`."""
    parser = sub.add_parser(
        "status",
        help="where each RayJob landed, and why it waits if it does",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("job", nargs="?", help="one RayJob (default: all)")
    parser.add_argument("-n", "--namespace", help="namespace (default: the context's, else default)")
    parser.add_argument("-A", "--all-namespaces", action="store_true", help="every namespace")
    parser.add_argument(
        "--kubeconfig", help="default: $KUBECONFIG (every file, merged), else the local stack's, else ~/.kube/config"
    )
    parser.add_argument("--context", help="the kubeconfig's context to use (default: its current-context)")
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
    parser.add_argument(
        "-o",
        "--output",
        choices=serialize.FORMATS,
        help="print the report as json or yaml (schema: docs/status.schema.json); with JOB, that job's object",
    )
    parser.add_argument(
        "--capacity",
        action="store_true",
        help="on a MultiKueue manager: the obtainability ledger (per region, rung and shape) and the last advice "
        "used, from the ConfigMap kueue-system/planb-regions-ledger (docs/regions.md)",
    )
    parser.add_argument(
        "--cost",
        action="store_true",
        help=(
            "chip-hours per job and per team (its ClusterQueue with the queues release's teams, else its namespace), "
            "from Kueue's admission times and the catalog's chips"
        ),
    )
    parser.add_argument(
        "--rate-per-chip-hour",
        type=finite,
        metavar="RATE",
        help="with --cost: what one chip-hour costs you (your currency; planb knows no price)",
    )
    parser.add_argument(
        "--timeline",
        metavar="FILE",
        help="with JOB: draw its life on a time axis into FILE (.svg or .png; needs the [timeline] extra, matplotlib)",
    )
    parser.set_defaults(handler=_status)
