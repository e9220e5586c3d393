"""`python -m planb.failover`: the failover controller's command line (planb.failover.controller).

Credentials: ``--server`` and ``--token-file`` (and ``--ca-file``) when given, else the pod's
ServiceAccount (planb.failover.kubeapi.Credentials.in_cluster). ``--cluster-queues`` is required: the
controller never acts on a Workload another ClusterQueue admitted.
"""

from __future__ import annotations

import argparse
import logging
import sys
import threading
from pathlib import Path

from planb.failover import controller as failover
from planb.failover import metrics
from planb.failover.controller import DEFAULT_ACCELERATORS, Config, Controller
from planb.failover.kubeapi import Credentials, CredentialsError, KubeApi
from planb.failover.names import human

log = logging.getLogger("planb.failover")


def names_list(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def label(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r}: want KEY=VALUE")
    return key, value


def credentials(args: argparse.Namespace) -> Credentials:
    """--server and --token-file (and --ca-file) when given, else the pod's ServiceAccount."""
    if args.server or args.token_file:
        if not (args.server and args.token_file):
            raise SystemExit("--server and --token-file go together")
        return Credentials(args.server, Path(args.token_file), Path(args.ca_file) if args.ca_file else None)
    return Credentials.in_cluster()


def main(argv: list[str] | None = None, controller_type: type[Controller] = Controller) -> int:
    """Parse `argv`, then run a `controller_type` (a test passes a double of its own) until the process ends."""
    summary = failover.__doc__.splitlines()[0] if failover.__doc__ else None
    parser = argparse.ArgumentParser(prog="python -m planb.failover", description=summary)
    parser.add_argument("--server", help="API server URL; default: in-cluster (KUBERNETES_SERVICE_HOST/PORT)")
    parser.add_argument("--token-file", help="bearer token file, read at every request; default: the pod's")
    parser.add_argument("--ca-file", help="CA of the API server's certificate; default: the pod's")
    parser.add_argument("--after-seconds", type=float, required=True, help="Kueue's waitForPodsReady timeout")
    parser.add_argument("--cluster-queues", type=names_list, required=True, help="planb's ClusterQueue(s), a,b")
    parser.add_argument("--namespaces", type=names_list, default=(), help="a,b; default: the whole cluster")
    parser.add_argument("--plan-a-flavor", default="on-demand")
    parser.add_argument("--plan-a-label", type=label, help="KEY=VALUE; default: read from plan A's flavor")
    parser.add_argument("--accelerators", type=names_list, default=DEFAULT_ACCELERATORS)
    parser.add_argument("--metrics-host", default="127.0.0.1")
    parser.add_argument("--metrics-port", type=int, default=0)
    parser.add_argument("--poll-seconds", type=float, default=2.0)
    parser.add_argument("--region", default="", help="the cluster's region: the metrics' region label")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    cfg = Config(
        after_seconds=args.after_seconds,
        cluster_queues=args.cluster_queues,
        plan_a_flavor=args.plan_a_flavor,
        plan_a_label=args.plan_a_label,
        namespaces=args.namespaces,
        accelerators=args.accelerators,
        metrics_port=args.metrics_port,
        metrics_host=args.metrics_host,
        poll_seconds=args.poll_seconds,
        region=args.region,
    )
    try:
        api = KubeApi(credentials(args))
    except CredentialsError as exc:
        raise SystemExit(f"planb failover: {exc}") from exc
    controller = controller_type(api, cfg)
    if cfg.metrics_port:
        metrics.serve(cfg.metrics_host, cfg.metrics_port, controller.metrics, controller.health)
        log.info("metrics on http://%s:%d/metrics (probes: /healthz, /readyz)", cfg.metrics_host, cfg.metrics_port)
    where = ",".join(cfg.namespaces) or "every namespace"
    log.info("failover on: a job of %s in %s evicted from %s after %s moves to plan B",
             ",".join(cfg.cluster_queues), where, cfg.plan_a_flavor, human(cfg.after_seconds))  # fmt: skip
    controller.run(threading.Event())
    return 0


if __name__ == "__main__":
    sys.exit(main())
