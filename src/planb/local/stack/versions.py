"""What each real component of the local stack reports about its own version."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from planb import paths
from planb.local.stack.errors import LocalStackError
from planb.local.stack.kubectl import kubectl


def server_version(kubeconfig: Path) -> str:
    try:
        data = json.loads(kubectl(kubeconfig, ["version", "-o", "json"], timeout=15))
    except LocalStackError as exc:
        return f"unknown ({exc})"
    return str(data.get("serverVersion", {}).get("gitVersion", "unknown"))


def component_versions(kubeconfig: Path) -> dict[str, str]:
    """What each real component reports about its own version."""
    out: dict[str, str] = {"kube-apiserver": server_version(kubeconfig)}
    for name, args in (
        ("helm", ["version", "--short"]),
        ("kwokctl", ["--version"]),
        ("etcd", ["--version"]),
    ):
        try:
            proc = subprocess.run(
                [str(paths.tool(name)), *args], capture_output=True, text=True, timeout=30, check=False
            )
            out[name] = (proc.stdout or proc.stderr).strip().splitlines()[0]
        except (OSError, IndexError):
            out[name] = "unavailable"
    out["kueue"] = kueue_version_from_log(kubeconfig.parent / "kueue.log")
    return out


def kueue_version_from_log(log: Path) -> str:
    """Kueue logs its gitVersion at start-up ("Initializing")."""
    if not log.is_file():
        return "not running"
    # The log is appended to across restarts: the newest start-up line tells what runs now.
    for line in reversed(log.read_text().splitlines()):
        if '"Initializing"' in line and "gitVersion" in line:
            try:
                return str(json.loads(line[line.index("{") :]).get("gitVersion", "unknown"))
            except (ValueError, json.JSONDecodeError):
                break
    return "unknown"
