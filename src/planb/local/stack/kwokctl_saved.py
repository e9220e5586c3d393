"""What kwokctl saved for an existing cluster (the KwokctlConfiguration in its ``kwok.yaml``), and what planb reads
from it: a component's arguments, the options, the ports the components listen on, the address they bind, and
whether etcd takes client certificates. The cluster itself, made and run by kwokctl: planb.local.stack.control_plane.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from planb.local.stack.kwokctl_config import _SAVED_PORTS


@dataclass(frozen=True)
class SavedCluster:
    """The configuration kwokctl saved in `cluster_dir`; each read is of the file as it is now."""

    cluster_dir: Path

    def configuration(self) -> dict[str, Any]:
        """The KwokctlConfiguration kwokctl saved for the existing cluster ({} if none or unreadable). Read with
        libyaml where PyYAML has it: `up` reads it on every call, and the pure-Python parser took 30 ms a read."""
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        try:
            docs = list(yaml.load_all((self.cluster_dir / "kwok.yaml").read_text(), Loader=loader))
        except (OSError, yaml.YAMLError):
            return {}
        found = [d for d in docs if isinstance(d, dict) and d.get("kind") == "KwokctlConfiguration"]
        return found[0] if found else {}

    def args(self, component: str) -> list[str]:
        """A component's arguments as kwokctl saved them for the existing cluster ([] if none or unreadable)."""
        for item in self.configuration().get("components") or []:
            if isinstance(item, dict) and item.get("name") == component:
                return [str(arg) for arg in item.get("args") or []]
        return []

    def options(self) -> dict[str, Any]:
        """The options kwokctl saved for the existing cluster ({} if none or unreadable)."""
        options = self.configuration().get("options") or {}
        return dict(options) if isinstance(options, dict) else {}

    def etcd_secured(self) -> bool:
        """The existing cluster's etcd requires client certificates on https (a cluster created by an older planb
        runs it on plain http, open to every local user, until it is deleted and created again)."""
        args = self.args("etcd")
        return "--client-cert-auth=true" in args and not any(
            arg.startswith("--listen-client-urls=http://") for arg in args
        )

    def ports(self) -> dict[int, str]:
        """The saved ports, port -> component ({} if none or unreadable)."""
        options = self.options()
        out: dict[int, str] = {}
        for key, component in _SAVED_PORTS.items():
            port = options.get(key)
            if isinstance(port, int) and port > 0:
                out[port] = component
        return out

    def bind_address(self) -> str:
        """The address the existing cluster's components bind (kwokctl's default is 0.0.0.0)."""
        return str(self.options().get("bindAddress") or "0.0.0.0")
