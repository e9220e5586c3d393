"""`planb capacity run|set|show`: the local stand-in for GKE's autoscaler and DWS."""

from __future__ import annotations

import argparse
import json
import signal
from dataclasses import asdict
from pathlib import Path
from typing import Any

from planb import paths
from planb.capacity import settings as settings_mod
from planb.capacity.simulator import CapacitySimulator


def _run(args: argparse.Namespace) -> int:
    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    simulator = CapacitySimulator(Path(args.kubeconfig), log=lambda msg: print(f"[capacity] {msg}", flush=True))
    if args.once:
        simulator.step()
        return 0
    simulator.run(lambda: stopping)
    return 0


def _set(args: argparse.Namespace) -> int:
    changes: dict[str, Any] = {}
    if args.delay is not None:
        changes["provisioning_delay_seconds"] = args.delay
    if args.fail_next is not None:
        changes["fail_next"] = args.fail_next
    if args.scale_down_after is not None:
        changes["scale_down_after_seconds"] = args.scale_down_after
    current = settings_mod.load()
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


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `planb capacity ...`."""
    parser = sub.add_parser("capacity", help="the capacity simulator (GKE autoscaler + DWS, local mode)")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    run = verbs.add_parser("run", help="run the simulator in the foreground (planb local up starts it)")
    run.add_argument("--kubeconfig", default=str(paths.local_kubeconfig()), help="the local stack's kubeconfig")
    run.add_argument("--once", action="store_true", help="one reconcile pass, then exit")
    run.set_defaults(handler=_run)
    setp = verbs.add_parser("set", help="flip the simulator's switches (it picks them up while running)")
    setp.add_argument("--delay", type=float, help="seconds before a ProvisioningRequest is provisioned")
    setp.add_argument("--fail-next", type=int, help="answer the next N ProvisioningRequests Failed")
    setp.add_argument("--stockout", action="append", metavar="POOL", help="this pool finds no capacity")
    setp.add_argument("--restock", action="append", metavar="POOL", help="end a pool's stockout")
    setp.add_argument("--scale-down-after", type=float, help="seconds idle before nodes are removed")
    setp.set_defaults(handler=_set)
    verbs.add_parser("show", help="print the switches").set_defaults(handler=_show)
