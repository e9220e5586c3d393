"""`planb regions keep`: the regions keeper (planb.regions.keeper.tick) against the MultiKueue manager, until
stopped."""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from planb.argtypes import non_negative_float, positive_float
from planb.errors import UsageError
from planb.kube import Kube, KubeError
from planb.kubeconfig import KubeconfigError, in_cluster
from planb.regions.access.connection import (
    DEADLINE_ENV,
    MAX_BYTES_ENV,
    REGION_DEADLINE_S,
    REGION_MAX_BYTES,
    RegionAccessError,
    region_limits,
)
from planb.regions.calendar.offers import MAX_DAYS, MIN_DAYS, ask_calendar
from planb.regions.calendar.watch import CalendarSettings, CalendarWatch
from planb.regions.dispatcher.advise import google_advise, no_advice
from planb.regions.dispatcher.google_advice import http_get, http_post
from planb.regions.dispatcher.job_dispatch import DispatchSettings
from planb.regions.dispatcher.nomination import DISPATCHER
from planb.regions.dispatcher.offer_order import Job
from planb.regions.dispatcher.reservation_reads import ReservationSpecError, google_read, parse_reservation
from planb.regions.dispatcher.tick import Dispatcher
from planb.regions.keeper.tick import Keeper, KeeperSettings, KeeperStateError, say
from planb.regions.renewal import command as renewal_command

DEFAULTS = KeeperSettings()


def _manager(args: argparse.Namespace) -> Kube:
    """The manager's client: with --in-cluster the pod's own ServiceAccount (planb.kubeconfig.in_cluster), else the
    operator's kubeconfig, read as kubectl reads it (exec plugins included: that file is the operator's)."""
    if args.in_cluster:
        try:
            return Kube(Path("in-cluster"), in_cluster())
        except KubeconfigError as exc:
            raise UsageError(f"--in-cluster: {exc}") from exc
    kubeconfig = Path(args.kubeconfig or os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or "~/.kube/config")
    kubeconfig = kubeconfig.expanduser()
    if not kubeconfig.is_file():
        raise UsageError(f"no kubeconfig at {kubeconfig}. Fix: pass --kubeconfig (the manager's) or set KUBECONFIG.")
    return Kube(kubeconfig)


def _dispatcher(args: argparse.Namespace, manager: Kube, admission_check: str) -> Dispatcher | None:
    """With --dispatch, the dispatcher the keeper ticks: advice from --advice-url, the room of each --reservation."""
    if not args.dispatch:
        return None
    if args.advice_url and not args.project:
        raise UsageError("--advice-url needs --project (the Google Cloud project advice.capacity is asked in).")
    token = os.environ.get("PLANB_ADVICE_TOKEN", "")
    advise = (
        google_advise(http_post(args.advice_url, token), args.project)
        if args.advice_url
        else no_advice("no advice source: planb regions keep --dispatch was given no --advice-url")
    )
    # The reservations' room comes from the same Compute Engine endpoint as the advice (reservation_reads), for
    # the reservations the manager's own configuration names, in the projects it allows, and no others.
    try:
        reservations = dict(
            parse_reservation(spec, args.project, args.reservation_project) for spec in args.reservation
        )
    except ReservationSpecError as exc:
        raise UsageError(str(exc)) from exc
    if reservations and not args.advice_url:
        raise UsageError("--reservation needs --advice-url (the Compute Engine endpoint its room is read from).")
    read = (
        google_read(http_get(args.advice_url, token), args.project, args.reservation_project)
        if args.advice_url
        else None
    )
    job = Job(checkpoint_interval_s=args.checkpoint_interval, restore_s=args.restore)
    dispatch = DispatchSettings(admission_check, job, reservations=reservations)
    return Dispatcher(manager, dispatch, advise, say, read=read)


def _calendar(args: argparse.Namespace, keeper: Keeper) -> list[Callable[[], None]]:
    """With --calendar-after, the calendar watch ticked after the keeper; else nothing."""
    if args.calendar_after is None:
        return []
    if not (args.advice_url and args.project):
        raise UsageError("--calendar-after needs --advice-url and --project (where advice.calendarMode is asked).")
    post = http_post(args.advice_url, os.environ.get("PLANB_ADVICE_TOKEN", ""))
    calendar = CalendarSettings(args.calendar_after, args.project, keeper.settings.config, args.calendar_days)
    ask = lambda region, spec, start, days: ask_calendar(post, args.project, region, spec, start, days)  # noqa: E731
    return [CalendarWatch(keeper.manager, calendar, ask, keeper.say).tick]


def _keep(args: argparse.Namespace) -> int:
    manager = _manager(args)
    limits = region_limits()  # a bad $PLANB_REGION_* stops here, not at every region of every tick
    settings = KeeperSettings(
        config=args.config,
        admission_check=args.admission_check or args.config,
        lost_after=args.lost_after,
        release_after=args.release_after,
        release_margin=args.release_margin,
        origin=args.origin,
    )
    keeper = Keeper(manager, settings, say, dispatcher=_dispatcher(args, manager, settings.admission_check))
    also = _calendar(args, keeper)
    keeper.say(
        f"watching the manager at {keeper.manager.conn.server}: a region not Active for {settings.lost_after:g} s "
        f"leaves the MultiKueueConfig {settings.config}; an evicted RayJob holding quota for "
        f"{settings.release_after:g} s is released; a region's answer taking over {limits.deadline_s:g} s or "
        f"{limits.max_bytes} bytes leaves that region unread for the tick"
        + (f"; Workloads are nominated in advice order ({DISPATCHER})" if args.dispatch else "")
    )
    try:
        run(keeper, args.poll_seconds, once=args.once, also=also)
    except KeyboardInterrupt:
        return 0
    return 0


def run(keeper: Keeper, poll_seconds: float, once: bool = False, also: Sequence[Callable[[], None]] = ()) -> None:
    """Tick every poll_seconds until interrupted, and each of ``also`` after the keeper (the calendar watch); a
    manager that does not answer is said and tried again."""
    said = ""
    while True:
        try:
            keeper.tick()
            for tick in also:
                tick()
            said = ""
        except (KubeError, RegionAccessError) as exc:
            keeper.say(f"the manager did not answer: {exc}")
        except KeeperStateError as exc:
            if str(exc) != said:  # said once, until it changes
                keeper.say(str(exc))
            said = str(exc)
        if once:
            return
        time.sleep(poll_seconds)


def _days(text: str) -> int:
    """--calendar-days: a whole number of days within calendar mode's bounds."""
    if not text.isdigit() or not MIN_DAYS <= int(text) <= MAX_DAYS:
        raise argparse.ArgumentTypeError(f"{text}: calendar mode reserves {MIN_DAYS} to {MAX_DAYS} days")
    return int(text)


def _manager_options(keep: argparse.ArgumentParser) -> None:
    """Where the manager is: a kubeconfig, or the pod's own ServiceAccount."""
    where = keep.add_mutually_exclusive_group()
    where.add_argument("--kubeconfig", help="the manager's; default: $KUBECONFIG, else ~/.kube/config")
    where.add_argument(
        "--in-cluster",
        action="store_true",
        help="in a pod on the manager: its own ServiceAccount, as client-go's in-cluster config (no kubeconfig read: "
        "the regions_keeper role's Deployment)",
    )


def _keeper_options(keep: argparse.ArgumentParser) -> None:
    """What the keeper quarantines, releases and cleans, and when."""
    keep.add_argument("--config", default=DEFAULTS.config, help="the MultiKueueConfig planb's multikueue role wrote")
    keep.add_argument("--admission-check", default="", help="its AdmissionCheck; default: the config's name")
    keep.add_argument(
        "--lost-after",
        type=positive_float,
        default=DEFAULTS.lost_after,
        help="seconds a region may be unreachable before it is quarantined",
    )
    keep.add_argument(
        "--release-after",
        type=positive_float,
        default=DEFAULTS.release_after,
        help="seconds an evicted RayJob may hold its quota, counted from the last look at which a region still held "
        "its RayJob or RayCluster, before it is released; default: the largest workers' grace period plus 30 s",
    )
    keep.add_argument(
        "--release-margin",
        type=non_negative_float,
        default=DEFAULTS.release_margin,
        help="seconds past a job's own largest grace period the keeper also waits before it releases the job's quota "
        "or lets a region back: for the pods' deletion to be seen (default %(default)g)",
    )
    keep.add_argument(
        "--origin",
        default=DEFAULTS.origin,
        help="the manager Kueue's multiKueue.origin: only a region's objects with this origin label are cleaned; "
        "default: the one the regions playbook wrote in the ConfigMap kueue-system/<config>-keeper",
    )


def _dispatch_options(keep: argparse.ArgumentParser) -> None:
    """--dispatch: advice order, the advice and reservations read, the Spot rule's job."""
    keep.add_argument(
        "--dispatch",
        action="store_true",
        help=f"nominate regions in advice order (Kueue's External dispatcher: the manager's Kueue must have "
        f"multiKueue.dispatcherName {DISPATCHER}; docs/regions.md)",
    )
    keep.add_argument(
        "--advice-url",
        default="",
        help="with --dispatch: a compute v1 endpoint for advice.capacity (never asked for a TPU shape: Google shows "
        "no TPU availability there) and reservations.get (the room of each --reservation; "
        "https://compute.googleapis.com with $PLANB_ADVICE_TOKEN; the GKE emulator locally); none: every job races, "
        "and the ledger's ConfigMap says why",
    )
    keep.add_argument(
        "--project",
        default="",
        help="with --advice-url: the project advice.capacity is asked in, and a --reservation without one is read in",
    )
    keep.add_argument(
        "--reservation",
        action="append",
        default=[],
        metavar="REGION/RUNG=[projects/PROJECT/]zones/ZONE/reservations/NAME",
        help="with --advice-url: the reservation a region's rung consumes, in the zone of its pools, whose room is "
        "read before the rung is offered (repeat per rung; the regions playbook writes one per reservation plan). "
        "The keeper reads no other reservation: none a region's objects name (docs/regions.md, 'Reservations read')",
    )
    keep.add_argument(
        "--reservation-project",
        action="append",
        default=[],
        metavar="PROJECT",
        help="a project other than --project whose reservations a --reservation may name (repeat per project); a "
        "--reservation in a project neither names is refused",
    )
    keep.add_argument(
        "--checkpoint-interval",
        type=positive_float,
        default=45 * 60.0,
        help="with --dispatch: seconds between a job's checkpoints, for the Spot rule (default 2700)",
    )
    keep.add_argument(
        "--restore", type=positive_float, default=10 * 60.0, help="with --dispatch: seconds a restore takes (600)"
    )


def _calendar_options(keep: argparse.ArgumentParser) -> None:
    """--calendar-after: what calendar mode offers a TPU job that waits long."""
    keep.add_argument(
        "--calendar-after",
        type=positive_float,
        metavar="SECONDS",
        help="with --advice-url and --project: a TPU job waiting longer than this for a region is shown what "
        "advice.calendarMode offers for its shape in each region (planb status JOB; docs/regions.md, 'Calendar mode "
        "for the long wait'); default: not asked",
    )
    keep.add_argument(
        "--calendar-days",
        type=_days,
        default=MIN_DAYS,
        metavar="DAYS",
        help=f"with --calendar-after: the reservation's length asked about, {MIN_DAYS} to {MAX_DAYS} days (default "
        "%(default)s)",
    )


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `planb regions keep|renew-tokens`."""
    parser = sub.add_parser("regions", help="across regions: the MultiKueue manager's keeper (docs/regions.md)")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    keep = verbs.add_parser(
        "keep",
        help="quarantine lost regions, release held quota, clean a returning region (runs until stopped)",
        epilog=f"environment: {DEADLINE_ENV} (seconds, default {REGION_DEADLINE_S:g}) and {MAX_BYTES_ENV} (bytes, or "
        f"with Ki, Mi, Gi; default {REGION_MAX_BYTES >> 20}Mi) bound each answer from a region: one slower or larger "
        "leaves that region unread for the tick (docs/regions.md)",
    )
    for add in (_manager_options, _keeper_options, _dispatch_options, _calendar_options):
        add(keep)
    keep.add_argument("--poll-seconds", type=positive_float, default=2.0)
    keep.add_argument("--once", action="store_true", help="one look, then exit")
    keep.set_defaults(handler=_keep)
    renewal_command.register(verbs, _manager)
