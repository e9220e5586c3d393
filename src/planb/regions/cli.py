"""`planb regions keep`: the regions keeper (planb.regions.keeper) against the MultiKueue manager, until stopped."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from planb.argtypes import positive_float
from planb.errors import UsageError
from planb.kube import Kube
from planb.regions.keeper import Keeper, KeeperSettings, run

DEFAULTS = KeeperSettings()


def _keep(args: argparse.Namespace) -> int:
    kubeconfig = Path(args.kubeconfig or os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or "~/.kube/config")
    kubeconfig = kubeconfig.expanduser()
    if not kubeconfig.is_file():
        raise UsageError(f"no kubeconfig at {kubeconfig}. Fix: pass --kubeconfig (the manager's) or set KUBECONFIG.")
    settings = KeeperSettings(
        config=args.config,
        admission_check=args.admission_check or args.config,
        lost_after=args.lost_after,
        release_after=args.release_after,
        origin=args.origin,
    )
    keeper = Keeper(Kube(kubeconfig), settings)
    keeper.say(
        f"watching the manager at {keeper.manager.conn.server}: a region not Active for {settings.lost_after:g} s "
        f"leaves the MultiKueueConfig {settings.config}; an evicted RayJob holding quota for "
        f"{settings.release_after:g} s is released"
    )
    try:
        run(keeper, args.poll_seconds, once=args.once)
    except KeyboardInterrupt:
        return 0
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("regions", help="across regions: the MultiKueue manager's keeper (docs/regions.md)")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    keep = verbs.add_parser(
        "keep", help="quarantine lost regions, release held quota, clean a returning region (runs until stopped)"
    )
    keep.add_argument("--kubeconfig", help="the manager's; default: $KUBECONFIG, else ~/.kube/config")
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
        "--origin",
        default=DEFAULTS.origin,
        help="the manager Kueue's multiKueue.origin: only a region's objects with this origin label are cleaned; "
        "default: the one the regions playbook wrote in the ConfigMap kueue-system/<config>-keeper",
    )
    keep.add_argument("--poll-seconds", type=positive_float, default=2.0)
    keep.add_argument("--once", action="store_true", help="one look, then exit")
    keep.set_defaults(handler=_keep)
