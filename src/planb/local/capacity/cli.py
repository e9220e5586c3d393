"""`planb local capacity run|set|show`: the local stand-in for GKE's autoscaler and DWS."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from planb import paths
from planb.argtypes import finite
from planb.errors import PlanbError
from planb.local import apiserver as local_apiserver
from planb.local.capacity import gke_api
from planb.local.capacity import settings as settings_mod
from planb.local.capacity.gke_api import NodePoolReader
from planb.local.capacity.simulator import CapacitySimulator
from planb.local.statefile import stop_on_signals


def _run(args: argparse.Namespace) -> int:
    # Nodes, request states and a pod webhook are GKE's to write: only ever on the local stack.
    local_apiserver.require_local(Path(args.kubeconfig), "the capacity simulator")
    stop = stop_on_signals()
    simulator = CapacitySimulator(
        Path(args.kubeconfig),
        log=lambda msg: print(f"[capacity] {msg}", flush=True),
        gke=NodePoolReader(args.gke_endpoint, args.gke_project, args.gke_location),
    )
    if args.once:
        simulator.step()
        return 0
    simulator.run(stop.is_set, webhook=not args.no_webhook)
    return 0


def _lifecycle_change(args: argparse.Namespace, current: settings_mod.Settings) -> dict[str, Any]:
    """The `pools` or `requests` table after --pool/--request with the lifecycle switches."""
    level, name = ("pools", args.pool) if args.pool else ("requests", args.request)
    table = dict(getattr(current, level))
    if args.clear:
        table.pop(name, None)
    life = table.get(name, settings_mod.Lifecycle())
    switches = {
        "delay_seconds": args.delay,
        "booking_window_seconds": args.booking_window,
        "max_run_seconds": args.max_run,
        "fail": args.fail,
    }
    life = replace(life, **{k: v for k, v in switches.items() if v is not None})
    if life.to_json():
        table[name] = life
    else:
        table.pop(name, None)
    return {level: table}


def _set(args: argparse.Namespace) -> int:
    if args.pool and args.request:
        raise PlanbError("give --pool or --request, not both")
    scoped = bool(args.pool or args.request)
    if not scoped and (args.max_run is not None or args.fail is not None or args.clear):
        raise PlanbError(
            "--max-run, --fail/--no-fail and --clear apply to one pool or request: add --pool POOL or "
            "--request NAMESPACE/NAME (a pattern: --request '*' is every request)"
        )
    for flag, value in (
        ("--delay", args.delay),
        ("--booking-window", args.booking_window),
        ("--max-run", args.max_run),
        ("--scale-down-after", args.scale_down_after),
        ("--node-group-backoff", args.node_group_backoff),
    ):
        if value is not None and value < 0:
            raise PlanbError(f"{flag} must be >= 0, got {value}")
    current = settings_mod.load()
    changes: dict[str, Any] = {}
    if scoped:
        changes.update(_lifecycle_change(args, current))
    else:
        if args.delay is not None:
            changes["provisioning_delay_seconds"] = args.delay
        if args.booking_window is not None:
            changes["booking_window_seconds"] = args.booking_window
    if args.fail_next is not None:
        changes["fail_next"] = args.fail_next
    if args.scale_down_after is not None:
        changes["scale_down_after_seconds"] = args.scale_down_after
    if args.multiple_podsets is not None:
        changes["provisioning_request_multiple_podsets_enabled"] = args.multiple_podsets
    if args.node_group_backoff is not None:
        changes["node_group_backoff_seconds"] = args.node_group_backoff
    if args.spot_notice is not None:
        if args.spot_notice < 0:
            raise PlanbError(f"--spot-notice must be >= 0, got {args.spot_notice}")
        changes["spot_notice_seconds"] = args.spot_notice
    if args.preempt:
        changes["preempt"] = tuple(sorted(set(current.preempt) | set(args.preempt)))
    stockout = set(current.stockout)
    stockout.update(args.stockout or [])
    stockout.difference_update(args.restock or [])
    changes["stockout"] = tuple(sorted(stockout))
    new = settings_mod.update(**changes)
    print(json.dumps(asdict(new), indent=2))
    return 0


def _show(args: argparse.Namespace) -> int:
    print(json.dumps(asdict(settings_mod.load()), indent=2))
    return 0


def _add_run(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`run`: the simulator in the foreground, against the local stack and the GKE API its pools are read from."""
    run = verbs.add_parser("run", help="run the simulator in the foreground (planb local up starts it)")
    run.add_argument("--kubeconfig", default=str(paths.local_kubeconfig()), help="the local stack's kubeconfig")
    run.add_argument("--once", action="store_true", help="one reconcile pass, then exit")
    run.add_argument(
        "--gke-endpoint",
        default=gke_api.default_endpoint(),
        metavar="URL",
        help="the GKE API the node pools are read from (default: the local GKE emulator, %(default)s)",
    )
    run.add_argument(
        "--gke-project",
        default=gke_api.default_project(),
        metavar="PROJECT",
        help="the project whose clusters' pools get nodes (default: PROJECT_ID, else planb-local: %(default)s)",
    )
    run.add_argument(
        "--gke-location",
        default=gke_api.ALL_LOCATIONS,
        metavar="LOCATION",
        help="only the clusters of this zone or region (default: '-', every location, as GKE's clusters.list)",
    )
    run.add_argument(
        "--no-webhook",
        action="store_true",
        help="do not serve and register the pod webhook that binds a request's pods to its nodes",
    )
    run.set_defaults(handler=_run)


def _request_switches(setp: argparse.ArgumentParser) -> None:
    """The switches of a ProvisioningRequest's answer: how long it queues, its booking window and run, failures."""
    setp.add_argument(
        "--delay", type=finite, help="seconds a ProvisioningRequest stays queued before it is provisioned"
    )
    setp.add_argument(
        "--booking-window",
        type=finite,
        metavar="S",
        help="seconds delivered nodes wait for a pod of their request before they are taken back (GKE: 600)",
    )
    setp.add_argument(
        "--max-run",
        type=finite,
        metavar="S",
        help="revoke the capacity S seconds after delivery (instead of the request's maxRunDurationSeconds; 0: now)",
    )
    fail = setp.add_mutually_exclusive_group()
    fail.add_argument("--fail", dest="fail", action="store_true", default=None, help="answer the requests Failed")
    fail.add_argument("--no-fail", dest="fail", action="store_false", help="stop answering them Failed")
    setp.add_argument("--clear", action="store_true", help="drop the pool's or request pattern's switches first")
    setp.add_argument("--fail-next", type=int, help="answer the next N ProvisioningRequests Failed")


def _pool_switches(setp: argparse.ArgumentParser) -> None:
    """The switches of a pool's capacity: stockouts, scale-down, GKE's rollout flag, back-off and Spot preemption."""
    setp.add_argument("--stockout", action="append", metavar="POOL", help="this pool finds no capacity")
    setp.add_argument("--restock", action="append", metavar="POOL", help="end a pool's stockout")
    setp.add_argument("--scale-down-after", type=finite, help="seconds idle before nodes are removed")
    podsets = setp.add_mutually_exclusive_group()
    podsets.add_argument(
        "--multiple-podsets-enabled",
        dest="multiple_podsets",
        action="store_true",
        default=None,
        help="GKE's rollout flag ProvisioningRequestMultiplePodSets::Enabled on (its default): a request of several "
        "PodSets is provisioned in one node pool that holds all its pods",
    )
    podsets.add_argument(
        "--no-multiple-podsets-enabled",
        dest="multiple_podsets",
        action="store_false",
        help="the flag off: a request of several PodSets not yet accepted fails with MultiplePodSetsUnsupported",
    )
    setp.add_argument(
        "--node-group-backoff",
        type=finite,
        metavar="S",
        help="seconds a queued pool is backed off after its first failed scale-up: the same again for a failure "
        "while backed off, doubled for one after it ended (GKE: 300, up to 1800)",
    )
    setp.add_argument(
        "--preempt",
        action="append",
        metavar="POOL",
        help="preempt this Spot pool's nodes: the termination notice now, the nodes and their pods gone after it",
    )
    setp.add_argument(
        "--spot-notice",
        type=finite,
        metavar="S",
        help="seconds between a Spot preemption notice and the nodes going, for every pool (default: GKE's own, 30 s, "
        "or 120 s for a pool whose kubeletConfig extends it on a 1.35.0-gke.1171000 or later control plane)",
    )


def _add_set(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`set`: the switches, for every request, one pool's or the requests a pattern matches."""
    setp = verbs.add_parser(
        "set",
        help="flip the simulator's switches (it picks them up while running)",
        description="Without --pool/--request, --delay and --booking-window set every request's default; "
        "with one, the switches apply to that pool's requests or to the requests matching the pattern "
        "(a request's switch wins over its pool's, a pool's over the default).",
    )
    scope = setp.add_mutually_exclusive_group()
    scope.add_argument("--pool", metavar="POOL", help="the switches apply to this queued-provisioning pool's requests")
    scope.add_argument(
        "--request",
        metavar="NS/NAME",
        help="the switches apply to the ProvisioningRequests matching this pattern "
        "(fnmatch, e.g. 'default/*-dws-prov-1')",
    )
    _request_switches(setp)
    _pool_switches(setp)
    setp.set_defaults(handler=_set)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `planb local capacity ...`."""
    parser = sub.add_parser("capacity", help="the capacity simulator (GKE autoscaler + DWS, local mode)")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    _add_run(verbs)
    _add_set(verbs)
    verbs.add_parser("show", help="print the switches").set_defaults(handler=_show)
