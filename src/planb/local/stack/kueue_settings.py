"""How the host Kueue is configured: its settings (ports, frameworks, feature gates, the Configuration the kueue role
computed), saved beside the stack and read back, the flags' parsers, and the Configuration a host process gets, the
host-only settings laid over the role's. The process itself: planb.local.stack.kueue.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planb.local import loopback
from planb.local.stack.errors import LocalStackError
from planb.local.statefile import write_json

NAMESPACE = "kueue-system"

#: Gates local mode must set: the visibility API needs an aggregated API service and its own
#: certificates under /visibility, which a host process does not have.
HOST_REQUIRED_GATES = {"VisibilityOnDemand": False}


@dataclass(frozen=True)
class KueueSettings:
    """How the host Kueue is run."""

    # PLANB_PORT_OFFSET moves all three (planb.local.loopback).
    webhook_port: int = loopback.port(19443)
    health_port: int = loopback.port(19081)
    metrics_port: int = loopback.port(19080)
    frameworks: tuple[str, ...] = ("ray.io/rayjob", "ray.io/raycluster")
    feature_gates: dict[str, bool] = field(
        default_factory=lambda: {**HOST_REQUIRED_GATES, "ElasticJobsViaWorkloadSlices": True}
    )
    #: The Configuration the kueue role computed (the Kueue chart's default with planb's settings
    #: merged in); `configuration` lays the host-only settings on top. Empty: Kueue's own defaults.
    manager_config: dict[str, Any] = field(default_factory=dict)


def save_settings(settings: KueueSettings, path: Path) -> None:
    write_json(
        path,
        {
            "webhook_port": settings.webhook_port,
            "health_port": settings.health_port,
            "metrics_port": settings.metrics_port,
            "frameworks": list(settings.frameworks),
            "feature_gates": settings.feature_gates,
            "manager_config": settings.manager_config,
        },
        sort_keys=True,
    )


def load_settings(path: Path) -> KueueSettings:
    if not path.is_file():
        return KueueSettings()
    try:
        data = json.loads(path.read_text())
        data["frameworks"] = tuple(data.get("frameworks", ()))
        data["feature_gates"] = {**data.get("feature_gates", {}), **HOST_REQUIRED_GATES}
        if not isinstance(data.setdefault("manager_config", {}), dict):
            raise TypeError("manager_config is not a mapping")
        return KueueSettings(**data)
    except (ValueError, TypeError, AttributeError) as exc:
        raise LocalStackError(
            f"{path} is not a valid Kueue settings file ({exc}). Fix: delete it; 'planb local up' "
            f"then runs Kueue with its defaults."
        ) from exc


def host_feature_gates(requested: dict[str, bool]) -> dict[str, bool]:
    """The gates local mode adds; a request that contradicts them is refused with the reason."""
    for name, value in HOST_REQUIRED_GATES.items():
        if name in requested and requested[name] != value:
            raise LocalStackError(
                f"feature gate {name}={str(requested[name]).lower()} cannot run in local mode "
                f"(Kueue runs as a host process without the aggregated visibility API). "
                f"Fix: drop {name} from kueue_feature_gates for the local inventory."
            )
    return dict(HOST_REQUIRED_GATES)


def parse_feature_gates(text: str) -> dict[str, bool]:
    """`A=true,B=false` as Kueue's --feature-gates takes it; a typed error names a bad pair."""
    gates: dict[str, bool] = {}
    for pair in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = pair.partition("=")
        if not sep or value.lower() not in ("true", "false") or not name:
            raise LocalStackError(f"feature gate {pair!r} is not NAME=true or NAME=false")
        gates[name] = value.lower() == "true"
    return gates


def parse_manager_config(text: str) -> dict[str, Any]:
    """The JSON Configuration the kueue role passes; a typed error if it is not a mapping."""
    try:
        config = json.loads(text)
    except ValueError as exc:
        raise LocalStackError(f"--manager-config is not JSON ({exc})") from exc
    if not isinstance(config, dict):
        raise LocalStackError(f"--manager-config must be a JSON object (a Kueue Configuration), got {text[:80]!r}")
    return config


def _merged(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """`base` with `top` laid over it key by key (mappings merged, anything else replaced)."""
    out = dict(base)
    for key, value in top.items():
        below = out.get(key)
        out[key] = _merged(below, value) if isinstance(below, dict) and isinstance(value, dict) else value
    return out


def configuration(settings: KueueSettings, cert_dir: Path) -> dict[str, Any]:
    """Kueue's Configuration (config.kueue.x-k8s.io/v1beta2) for a host process.

    The host-only settings (loopback ports, our certificate directory, no leader election, no
    internal cert management) are laid over `settings.manager_config`; the rest of it stays.
    """
    return _merged(
        settings.manager_config,
        {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "namespace": NAMESPACE,
            "health": {"healthProbeBindAddress": f"127.0.0.1:{settings.health_port}"},
            "metrics": {"bindAddress": f"127.0.0.1:{settings.metrics_port}"},
            "webhook": {"host": "127.0.0.1", "port": settings.webhook_port, "certDir": str(cert_dir)},
            "leaderElection": {"leaderElect": False},
            "internalCertManagement": {"enable": False},
            "integrations": {"frameworks": list(settings.frameworks)},
        },
    )


def feature_gates_flag(gates: dict[str, bool]) -> str:
    return ",".join(f"{k}={'true' if v else 'false'}" for k, v in sorted(gates.items()))
