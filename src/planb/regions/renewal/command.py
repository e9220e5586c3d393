"""`planb regions renew-tokens`: each region's MultiKueue token renewed once (planb.regions.renewal.tokens), one line
per region; the regions_keeper role runs it as a CronJob on the manager with `--in-cluster`."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from datetime import UTC, datetime

from planb.argtypes import positive_float
from planb.errors import UnreachableError
from planb.kube import Kube
from planb.regions.access.connection import KUEUE, region_limits
from planb.regions.renewal.tokens import DURATION_S, RENEW_BEFORE_S, SERVICE_ACCOUNT, TokenRenewalError, renew


class RenewalFailedError(UnreachableError):
    """At least one region's token was not renewed (each is said on its own line)."""


def _when(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if seconds else "never"


def run(args: argparse.Namespace, manager: Kube, say: Callable[[str], None] = print) -> int:
    """Renew the tokens of --region (each), else of every MultiKueueCluster on the manager; raises RenewalFailedError
    after trying them all when one failed."""
    limits = region_limits()
    regions = args.region or sorted(item["metadata"]["name"] for item in manager.items(f"{KUEUE}/multikueueclusters"))
    failed = []
    for region in regions:
        try:
            done = renew(manager, region, time.time(), limits, int(args.renew_before), int(args.duration), args.account)
        except TokenRenewalError as exc:
            failed.append(region)
            say(f"{region}: not renewed: {exc}")
            continue
        if done.action == "renewed":
            say(f"{region}: token renewed in {done.secret}, valid until {_when(done.expires)}")
        else:
            say(f"{region}: token valid until {_when(done.expires)}, more than {args.renew_before:g} s away: kept")
    if failed:
        raise RenewalFailedError(f"{len(failed)} of {len(regions)} region tokens not renewed: {', '.join(failed)}")
    return 0


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], manager: Callable[..., Kube]) -> None:
    """Adds `renew-tokens` beside `keep`; `manager` makes the manager's client from --kubeconfig or --in-cluster."""
    parser = verbs.add_parser(
        "renew-tokens",
        help="renew each region's MultiKueue token that nears its expiry, with the token itself (TokenRequest), "
        "then exit (docs/regions.md, 'The region token')",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--kubeconfig", help="the manager's; default: $KUBECONFIG, else ~/.kube/config")
    where.add_argument("--in-cluster", action="store_true", help="in a pod on the manager: its own ServiceAccount")
    parser.add_argument(
        "--region", action="append", default=[], help="a region's MultiKueueCluster (repeat); default: every one"
    )
    parser.add_argument("--account", default=SERVICE_ACCOUNT, help="the regions' MultiKueue ServiceAccount")
    parser.add_argument(
        "--renew-before",
        type=positive_float,
        default=float(RENEW_BEFORE_S),
        help="seconds of validity below which a token is renewed (default %(default)g: multikueue_token_renew_before)",
    )
    parser.add_argument(
        "--duration",
        type=positive_float,
        default=float(DURATION_S),
        help="seconds a new token lives (default %(default)g: multikueue_token_duration)",
    )
    parser.set_defaults(handler=lambda args: run(args, manager(args)))
