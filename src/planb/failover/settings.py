"""Local mode's failover switch: `.state/local/failover.json`, written by `planb local failover`
(the kueue_queues role runs it from the inventory's planb_failover_after_minutes) and read by
`planb local up`, which starts the host controller only when it is on."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from planb import loopback
from planb.errors import PlanbError
from planb.statefile import private_dir, write_json

#: The host controller's metrics endpoint (127.0.0.1 only), beside Kueue's 19080/19081 and KubeRay's 19082/19083;
#: PLANB_PORT_OFFSET moves it with them (planb.loopback).
METRICS_PORT = loopback.port(19084)
FILE_NAME = "failover.json"
#: The kueue_queues role's release (planb-queues): the chart names the account <release>-failover, in the
#: controller's own namespace (the chart's failover.namespace, planb-failover).
SERVICE_ACCOUNT = "planb-failover/planb-queues-failover"


class FailoverSettingsError(PlanbError):
    """The failover settings file cannot be used."""


@dataclass(frozen=True)
class FailoverSettings:
    #: Kueue's waitForPodsReady timeout in seconds; 0: failover off (the seed's quota-only fallback).
    after_seconds: float = 0.0
    plan_a_flavor: str = "on-demand"
    metrics_port: int = METRICS_PORT
    #: NAMESPACE/NAME of the queues chart's failover ServiceAccount: the controller runs with its token.
    service_account: str = SERVICE_ACCOUNT
    #: planb's ClusterQueue(s) and the LocalQueue namespaces, comma-separated (the controller's flags).
    cluster_queues: str = "cluster-queue"
    namespaces: str = "default"

    @property
    def enabled(self) -> bool:
        return self.after_seconds > 0


def path(state: Path) -> Path:
    return state / FILE_NAME


def load(state: Path) -> FailoverSettings:
    file = path(state)
    if not file.is_file():
        return FailoverSettings()
    try:
        data = json.loads(file.read_text())
        return FailoverSettings(
            after_seconds=float(data.get("after_seconds", 0.0)),
            plan_a_flavor=str(data.get("plan_a_flavor", "on-demand")),
            metrics_port=int(data.get("metrics_port", METRICS_PORT)),
            service_account=str(data.get("service_account", SERVICE_ACCOUNT)),
            cluster_queues=str(data.get("cluster_queues", "cluster-queue")),
            namespaces=str(data.get("namespaces", "default")),
        )
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise FailoverSettingsError(f"{file} is not a valid failover settings file ({exc}). Fix: delete it") from exc


def save(state: Path, settings: FailoverSettings) -> None:
    file = path(state)
    private_dir(file.parent)
    write_json(file, asdict(settings))
