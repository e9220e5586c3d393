"""Local mode's failover switch: `.state/local/failover.json`, written by `planb local failover`
(the kueue_queues role runs it from the inventory's planb_failover_after_minutes) and read by
`planb local up`, which starts the host controller only when it is on, and by the Ray head stand-in, which
copies a ready RayCluster's state into its RayJob at once while it is on (planb.local.rayhead.ray_ready).

It lives in the local wing, outside the controller's package (``src/planb/failover``, which the queues chart
ships whole: planb.build.chart_files): the controller never imports it, so it may use planb's own state files
(planb.local.statefile.JsonSettings)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from planb.local import loopback
from planb.local.statefile import JsonSettings, SettingsError

#: The host controller's metrics endpoint (127.0.0.1 only), beside Kueue's 19080/19081 and KubeRay's 19082/19083;
#: PLANB_PORT_OFFSET moves it with them (planb.local.loopback).
METRICS_PORT = loopback.port(19084)
FILE_NAME = "failover.json"
#: The kueue_queues role's release (planb-queues): the chart names the account <release>-failover, in the
#: controller's own namespace (the chart's failover.namespace, planb-failover).
SERVICE_ACCOUNT = "planb-failover/planb-queues-failover"


@dataclass(frozen=True)
class FailoverSettings(JsonSettings):
    OWNER = "local mode's failover"
    ON_DELETE = "failover is off until planb local failover turns it on"

    #: Kueue's waitForPodsReady timeout in seconds; 0: failover off (the tutorial's quota-only fallback).
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

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FailoverSettings:
        defaults = cls()
        return cls(
            after_seconds=float(data.get("after_seconds", defaults.after_seconds)),
            plan_a_flavor=str(data.get("plan_a_flavor", defaults.plan_a_flavor)),
            metrics_port=int(data.get("metrics_port", defaults.metrics_port)),
            service_account=str(data.get("service_account", defaults.service_account)),
            cluster_queues=str(data.get("cluster_queues", defaults.cluster_queues)),
            namespaces=str(data.get("namespaces", defaults.namespaces)),
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def path(state: Path) -> Path:
    return state / FILE_NAME


def load(state: Path) -> FailoverSettings:
    """The saved switch (off when there is no file); a SettingsError names a file it cannot use."""
    return FailoverSettings.load(path(state))


def save(state: Path, settings: FailoverSettings) -> None:
    settings.save(path(state))


__all__ = ["METRICS_PORT", "SERVICE_ACCOUNT", "FailoverSettings", "SettingsError", "load", "path", "save"]
