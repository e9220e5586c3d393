"""`planb local up|down|status|versions|kueue|failover|kuberay-layout`, and the stand-ins' commands beside them.

The stand-ins (`planb local gke-emulator`, `planb local capacity`, `planb local rayhead`) register themselves under
`planb local` from their own modules; planb.cli adds them here, each imported only when it runs."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace

from planb.argtypes import finite
from planb.kube import Kube
from planb.local import failover_settings, regions
from planb.local.stack import kuberay_layout
from planb.local.stack.kueue_settings import host_feature_gates, parse_feature_gates, parse_manager_config
from planb.local.stack.stack import LocalStack, component_versions


def _up(args: argparse.Namespace) -> int:
    if args.regions:
        regions.up(args.regions)
        return 0
    stack = LocalStack()
    stack.up()
    if args.versions:
        _print_versions(stack)
    return 0


def _down(args: argparse.Namespace) -> int:
    if args.regions:
        regions.down()
        return 0
    LocalStack().down()
    return 0


def _status(args: argparse.Namespace) -> int:
    if args.regions:
        members = regions.status()
        for member, running in members:
            print(f"{member.name:<16}  {'running' if running else 'stopped':<8}  KUBECONFIG={member.kubeconfig}")
        return 0 if members and all(running for _, running in members) else 1
    stack = LocalStack()
    rows = stack.status()
    width = max(len(r.name) for r in rows)
    for row in rows:
        print(f"{row.name:<{width}}  {'running' if row.running else 'stopped':<8}  {row.detail}")
    print(f"kubeconfig: {stack.kubeconfig}")
    return 0 if stack.is_up() else 1


def _versions(args: argparse.Namespace) -> int:
    _print_versions(LocalStack())
    return 0


def _kueue(args: argparse.Namespace) -> int:
    """Reconfigure the host Kueue (feature gates, integrations); JSON on stdout for Ansible."""
    stack = LocalStack()
    current = stack.kueue.settings
    gates = parse_feature_gates(args.feature_gates) if args.feature_gates is not None else current.feature_gates
    gates = {**gates, **host_feature_gates(gates)}
    frameworks = tuple(f for f in (args.frameworks or "").split(",") if f) or current.frameworks
    config = parse_manager_config(args.manager_config) if args.manager_config is not None else current.manager_config
    wanted = replace(current, feature_gates=gates, frameworks=frameworks, manager_config=config)
    before = {"feature_gates": current.feature_gates, "frameworks": list(current.frameworks)}
    after = {"feature_gates": wanted.feature_gates, "frameworks": list(wanted.frameworks)}
    if wanted.manager_config != current.manager_config:
        before["manager_config"], after["manager_config"] = current.manager_config, wanted.manager_config
    with stack.locked():  # never alongside a `planb local up` or `down`
        changed = stack.kueue.reconfigure(wanted, check=args.check)
    # What the kueue role's wait does for a Helm install: Kueue's webhook admits a ResourceFlavor (a dry run).
    ready = stack.kueue.wait_webhook_admits() if stack.kueue.process.pid() is not None else False
    print(json.dumps({"changed": changed, "before": before, "after": after, "webhook_ready": ready}))
    return 0


def _failover(args: argparse.Namespace) -> int:
    """Switch the host failover controller on (after N seconds) or off (0); JSON on stdout for Ansible."""
    stack = LocalStack()
    current = failover_settings.load(stack.state)
    wanted = failover_settings.FailoverSettings(
        after_seconds=max(0.0, args.after_seconds),
        plan_a_flavor=args.plan_a_flavor,
        service_account=args.service_account,
        cluster_queues=args.cluster_queues,
        namespaces=args.namespaces,
    )
    if not wanted.enabled:
        wanted = failover_settings.FailoverSettings()
    running = stack.failover.pid() is not None
    changed = wanted != current or running != wanted.enabled
    if changed and not args.check:
        with stack.locked():  # never alongside a `planb local up` or `down`
            stack.failover.stop()
            failover_settings.save(stack.state, wanted)
            stack.start_failover()
    print(json.dumps({"changed": changed, "before": current.after_seconds, "after": wanted.after_seconds}))
    return 0


def _kuberay_layout(args: argparse.Namespace) -> int:
    """Show the KubeRay operator in another layout on the running stack (PLANB_KUBERAY_LAYOUT is `up`'s); JSON."""
    stack = LocalStack()
    version = kuberay_layout.from_env({kuberay_layout.VERSION_ENV: args.version})[1]
    with stack.locked():
        changed = kuberay_layout.apply(Kube(stack.kubeconfig), args.layout, version)
    print(json.dumps({"changed": changed, "layout": args.layout, "version": version}))
    return 0


def _print_versions(stack: LocalStack) -> None:
    for name, version in component_versions(stack.kubeconfig).items():
        print(f"{name:<15} {version}")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`planb local ...`: the local Kubernetes stack (planb.cli adds the stand-ins' commands after these verbs)."""
    local = sub.add_parser(
        "local", help="local mode: the stack (kwok control plane, the real Kueue and KubeRay) and its stand-ins"
    )
    verbs = local.add_subparsers(dest="verb", required=True, metavar="VERB")
    up = verbs.add_parser("up", help="start the stack (a no-op when it runs)")
    up.add_argument("--versions", action="store_true", help="print each component's version afterwards")
    up.add_argument(
        "--regions",
        type=int,
        default=0,
        metavar="N",
        help="a MultiKueue manager and N worker regions, each a stack of its own (docs/regions.md)",
    )
    up.set_defaults(handler=_up)
    down = verbs.add_parser("down", help="stop every process of the stack and remove its state")
    down.add_argument("--regions", action="store_true", help="the manager and the regions `up --regions` started")
    down.set_defaults(handler=_down)
    status = verbs.add_parser("status", help="what runs; exit 1 unless all is up")
    status.add_argument("--regions", action="store_true", help="each member `up --regions` started")
    status.set_defaults(handler=_status)
    verbs.add_parser("versions", help="each component's own version").set_defaults(handler=_versions)
    kueue = verbs.add_parser("kueue", help="run the host Kueue with these feature gates and integrations")
    kueue.add_argument("--feature-gates", help="NAME=true|false,... (replaces the current set)")
    kueue.add_argument("--frameworks", help="comma-separated integrations, e.g. ray.io/rayjob,ray.io/raycluster")
    kueue.add_argument(
        "--manager-config",
        help="Kueue Configuration as JSON (replaces the current one); the host-only settings are laid on top",
    )
    kueue.add_argument("--check", action="store_true", help="report what would change, change nothing")
    kueue.set_defaults(handler=_kueue)
    failover = verbs.add_parser(
        "failover", help="run the stockout failover controller as a host process, or stop it (0)"
    )
    failover.add_argument(
        "--after-seconds", type=finite, required=True, help="Kueue's waitForPodsReady timeout; 0 switches it off"
    )
    failover.add_argument("--plan-a-flavor", default="on-demand", help="plan A's ResourceFlavor")
    failover.add_argument(
        "--service-account",
        default=failover_settings.SERVICE_ACCOUNT,
        help="NAMESPACE/NAME of the queues chart's failover ServiceAccount, whose token the controller uses",
    )
    failover.add_argument("--cluster-queues", default="cluster-queue", help="planb's ClusterQueue(s), a,b")
    failover.add_argument("--namespaces", default="default", help="the LocalQueue namespaces, a,b")
    failover.add_argument("--check", action="store_true", help="report what would change, change nothing")
    failover.set_defaults(handler=_failover)
    layout = verbs.add_parser(
        "kuberay-layout",
        help="show the KubeRay operator as self-installed in ray-system or as GKE's hosted add-on (no Deployment)",
    )
    layout.add_argument("layout", choices=kuberay_layout.LAYOUTS)
    layout.add_argument("--version", default="", help="the in-cluster operator's image tag (default: the pinned one)")
    layout.set_defaults(handler=_kuberay_layout)
