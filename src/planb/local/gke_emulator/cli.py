"""`planb local gke-emulator serve|start|stop|...|set-quota|withhold-permission|upgrade|reservation create|
bucket create|validate`: the local GKE API, its switches and the check of its stored state against Google's discovery
documents."""

from __future__ import annotations

import argparse
import json
import os
import signal
import urllib.error
import urllib.request

from planb.argtypes import finite
from planb.local.gke_emulator import conformance, resource_cli
from planb.local.gke_emulator.address import DEFAULT_PORT
from planb.local.gke_emulator.background import (
    BackgroundEmulator,
    default_op_seconds,
    default_port,
    post_switch,
    write_info,
)
from planb.local.gke_emulator.engine import Engine
from planb.local.gke_emulator.errors import EmulatorError
from planb.local.gke_emulator.operations import DEFAULT_OP_SECONDS
from planb.local.gke_emulator.server import EmulatorHTTPServer
from planb.local.gke_emulator.store import Store, reset_state


def cmd_serve(args: argparse.Namespace) -> int:
    emulator = BackgroundEmulator.default()
    if args.reset:
        reset_state(emulator.state)
    store = Store(emulator.state)
    server = EmulatorHTTPServer(Engine(store, op_seconds=args.op_seconds), host=args.host, port=args.port, verbose=True)
    info = {"url": server.url, "pid": os.getpid(), "op_seconds": args.op_seconds}
    write_info(emulator.info_file, info)
    print(f"planb GKE emulator on {server.url} (operations take {args.op_seconds}s)", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def cmd_start(args: argparse.Namespace) -> int:
    pid, url, started = BackgroundEmulator.default().start(
        host=args.host, port=args.port, op_seconds=args.op_seconds, reset=args.reset, wait=args.wait
    )
    print(f"GKE emulator {'started' if started else 'already running'} (pid {pid}) on {url}")
    return 0


def cmd_stop(args: argparse.Namespace) -> int:
    pid = BackgroundEmulator.default().stop(purge=args.purge)
    print("GKE emulator is not running" if pid is None else f"GKE emulator stopped (pid {pid})")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    emulator = BackgroundEmulator.default()
    running = emulator.running()
    if running is None:
        print("GKE emulator: stopped")
        return 3
    healthy = emulator.healthy()
    print(f"GKE emulator: running (pid {running[0]}) on {running[1]}{'' if healthy else ' (not answering)'}")
    return 0 if healthy else 1


def cmd_fail_next(args: argparse.Namespace) -> int:
    running = BackgroundEmulator.default().running()
    if running is None:
        raise EmulatorError("the GKE emulator is not running; start it with `planb local gke-emulator start`")
    data = json.dumps({"operationType": args.operation_type, "message": args.message}).encode()
    request = urllib.request.Request(
        f"{running[1]}/planb/v1/faults", data=data, method="POST", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=5):
        pass
    print(f"the next {args.operation_type} operation will fail mid-way")
    return 0


def cmd_fail_http(args: argparse.Namespace) -> int:
    running = BackgroundEmulator.default().running()
    if running is None:
        raise EmulatorError("the GKE emulator is not running; start it with `planb local gke-emulator start`")
    fault = {"status": args.status, "count": args.count, "method": args.method, "location": args.location}
    request = urllib.request.Request(
        f"{running[1]}/planb/v1/http-faults",
        data=json.dumps(fault).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=5):
        pass
    which = "API requests" if args.method == "*" else f"{args.method} API requests"
    print(f"the next {args.count} {which} will be answered {args.status}")
    return 0


def cmd_disable_api(args: argparse.Namespace) -> int:
    post_switch(
        "/planb/v1/services",
        {"project": args.project, "service": args.service, "state": "DISABLED", "enableRefused": args.refuse_enable},
    )
    how = "refuses to enable it (403)" if args.refuse_enable else "an :enable call turns it back on"
    print(f"{args.service} is disabled on project {args.project} ({how})")
    return 0


def cmd_set_quota(args: argparse.Namespace) -> int:
    post_switch(
        "/planb/v1/quotas",
        {
            "project": args.project,
            "region": args.region,
            "machineType": args.machine_type,
            "value": args.value,
            "quotaType": args.quota_type,
        },
    )
    print(
        f"the {args.quota_type} quota {args.machine_type} pools consume reads {args.value} in {args.region} "
        f"(project {args.project})"
    )
    return 0


def cmd_upgrade(args: argparse.Namespace) -> int:
    cluster = f"projects/{args.project}/locations/{args.location}/clusters/{args.cluster}"
    post_switch("/planb/v1/upgrades", {"cluster": cluster, "version": args.version})
    print(f"GKE upgraded {cluster} to {args.version} (control plane and nodes, as a release channel does)")
    return 0


def cmd_withhold_permission(args: argparse.Namespace) -> int:
    post_switch(
        "/planb/v1/permissions", {"project": args.project, "permission": args.permission, "granted": args.grant}
    )
    how = "granted again" if args.grant else "withheld: projects.testIamPermissions leaves it out"
    print(f"{args.permission} is {how} (project {args.project})")
    return 0


def _server_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="loopback address to bind (default 127.0.0.1)")
    p.add_argument(
        "--port",
        type=int,
        default=default_port(),
        help=f"port (env PLANB_GKE_EMULATOR_PORT, default {DEFAULT_PORT})",
    )
    p.add_argument(
        "--op-seconds",
        type=finite,
        default=default_op_seconds(),
        help=f"how long each operation runs (env PLANB_GKE_EMULATOR_OP_SECONDS, default {DEFAULT_OP_SECONDS})",
    )
    p.add_argument("--reset", action="store_true", help="forget all clusters, pools and the request log first")


def _server_actions(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """serve, start, stop and status: the emulator's own process."""
    serve = actions.add_parser("serve", help="serve in the foreground")
    _server_options(serve)
    serve.set_defaults(handler=cmd_serve)
    start = actions.add_parser("start", help="serve in the background (pid and log under .state/gke-emulator)")
    _server_options(start)
    start.add_argument("--wait", type=finite, default=15.0, help="seconds to wait for it to answer")
    start.set_defaults(handler=cmd_start)
    stop = actions.add_parser("stop", help="stop the background emulator")
    stop.add_argument("--purge", action="store_true", help="also forget its state")
    stop.set_defaults(handler=cmd_stop)
    status = actions.add_parser("status", help="is it running, and where")
    status.set_defaults(handler=cmd_status)


def _fault_actions(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Fault injection: an operation failing mid-way, HTTP errors, a disabled API."""
    fail = actions.add_parser("fail-next", help="make the next operation fail mid-way (fault injection)")
    fail.add_argument("--operation-type", default="*", help="e.g. CREATE_NODE_POOL, CREATE_CLUSTER (default: any)")
    fail.add_argument("--message", default=None, help="the error message the operation reports")
    fail.set_defaults(handler=cmd_fail_next)
    http = actions.add_parser("fail-http", help="answer the next API requests with an HTTP error (fault injection)")
    http.add_argument("--status", type=int, default=503, help="HTTP status to answer (default 503)")
    http.add_argument("--count", type=int, default=1, help="how many requests (default 1)")
    http.add_argument("--method", default="*", type=str.upper, help="only requests of this method (default: any)")
    http.add_argument("--location", default=None, help="Location header, for a 3xx status")
    http.set_defaults(handler=cmd_fail_http)
    disable = actions.add_parser(
        "disable-api", help="make a Google API read DISABLED on a project until enabled (Service Usage switch)"
    )
    disable.add_argument("service", help="e.g. container.googleapis.com, tpu.googleapis.com")
    disable.add_argument("--project", default="*", help="project ID (default: every project)")
    disable.add_argument("--refuse-enable", action="store_true", help="answer the :enable call 403 (no permission)")
    disable.set_defaults(handler=cmd_disable_api)


def _project_actions(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """A project's quota and permissions, and an upgrade GKE makes unasked."""
    quota = actions.add_parser(
        "set-quota",
        help="set the on-demand (or preemptible) accelerator quota a machine type's pools consume in a region",
    )
    quota.add_argument("--machine-type", required=True, help="e.g. ct6e-standard-4t, a3-highgpu-8g")
    quota.add_argument("--region", required=True, help="e.g. us-east5")
    quota.add_argument("--value", type=int, required=True, help="chips (TPU) or GPUs")
    quota.add_argument("--project", default="*", help="project ID (default: every project)")
    quota.add_argument(
        "--preemptible",
        dest="quota_type",
        action="store_const",
        const="preemptible",
        default="on-demand",
        help="the preemptible quota (Spot and DWS flex-start pools) instead of the on-demand one",
    )
    quota.set_defaults(handler=cmd_set_quota)
    upgrade = actions.add_parser(
        "upgrade", help="upgrade a cluster as GKE does on its release channel (control plane and nodes), unasked"
    )
    upgrade.add_argument("cluster", help="the cluster's name (CLUSTER_NAME)")
    upgrade.add_argument("--version", required=True, help="a newer GKE version or minor, e.g. 1.35")
    upgrade.add_argument("--location", required=True, help="the cluster's zone or region, e.g. us-east5-b")
    upgrade.add_argument(
        "--project", default=os.environ.get("PROJECT_ID") or "planb-local", help="its project (default PROJECT_ID)"
    )
    upgrade.set_defaults(handler=cmd_upgrade)
    withhold = actions.add_parser(
        "withhold-permission",
        help="make the caller lack an IAM permission on a project (Cloud Resource Manager testIamPermissions)",
    )
    withhold.add_argument("permission", help="e.g. container.clusters.create, serviceusage.services.enable")
    withhold.add_argument("--project", default="*", help="project ID (default: every project)")
    withhold.add_argument("--grant", action="store_true", help="give the permission back instead")
    withhold.set_defaults(handler=cmd_withhold_permission)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `planb local gke-emulator ...`."""
    parser = sub.add_parser("gke-emulator", help="the local GKE API (container/v1 subset) on 127.0.0.1")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    _server_actions(actions)
    conformance.register(actions)
    for add in (_fault_actions, _project_actions, resource_cli.register):
        add(actions)
