"""`planb local up|down|status`: the whole local stack, in order, idempotently."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import yaml

from planb import paths
from planb.localstack.control_plane import ControlPlane
from planb.localstack.errors import LocalStackError, StartupTimeoutError, ToolMissingError
from planb.localstack.kubectl import kubectl
from planb.localstack.kueue import NAMESPACE, HostKueue


def say(msg: str) -> None:
    print(f"[planb local] {msg}", flush=True)


@dataclass(frozen=True)
class Component:
    """One line of `planb local status`."""

    name: str
    running: bool
    detail: str


class LocalStack:
    """The local stack: kwok control plane + CRDs + host Kueue, state under .state/local."""

    def __init__(self, state: Path | None = None) -> None:
        self.state = state or paths.state_dir() / "local"
        self.kubeconfig = self.state / "kubeconfig"
        self.control_plane = ControlPlane(self.state)
        self.kueue = HostKueue(self.state, self.kubeconfig)

    # ----------------------------------------------------------------- probes
    def apiserver_ready(self) -> bool:
        if not self.kubeconfig.is_file():
            return False
        try:
            kubectl(self.kubeconfig, ["get", "--raw", "/readyz"], timeout=10)
        except (LocalStackError, subprocess.TimeoutExpired):
            return False
        return True

    def is_up(self) -> bool:
        return self.apiserver_ready() and self.kueue.process.pid() is not None and self.kueue.ready()

    # -------------------------------------------------------------------- up
    def up(self) -> bool:
        """Bring the stack up; False (and nothing changed) when it already runs."""
        if self.is_up():
            say(f"already up (kubeconfig: {self.kubeconfig})")
            return False
        start = time.monotonic()
        self.control_plane.check_tools()
        self.state.mkdir(parents=True, exist_ok=True)
        if not self.apiserver_ready():
            if self.control_plane.exists():
                say("starting the existing control plane ...")
                self.control_plane.start()
            else:
                say("creating the control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok) ...")
                self.control_plane.create(self.kubeconfig)
        say(f"control plane ready in {time.monotonic() - start:.1f} s")
        self.install_crds()
        self.install_webhooks()
        say("starting Kueue as a host process ...")
        self.kueue.start()
        self.kueue.wait_ready()
        self.wait_default_service_account()
        say(f"up in {time.monotonic() - start:.1f} s; kubeconfig: {self.kubeconfig}")
        return True

    def install_crds(self) -> None:
        """CRDs from the pinned modules; the ProvisioningRequest CRD first (Kueue probes it once)."""
        manifests = paths.manifests_dir()
        groups = [
            ("ProvisioningRequest", manifests / "provisioningrequest"),
            ("KubeRay", manifests / "kuberay" / "crds"),
            ("Kueue", manifests / "kueue" / "crds"),
        ]
        for label, directory in groups:
            if not directory.is_dir():
                raise ToolMissingError(f"the {label} CRDs in {directory}")
            say(f"installing the {label} CRDs ...")
            kubectl(
                self.kubeconfig,
                ["apply", "--server-side", "--force-conflicts", "--field-manager=planb", "-f", str(directory)],
                timeout=180,
            )
        kubectl(
            self.kubeconfig,
            ["wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"],
            timeout=90,
        )
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
        kubectl(self.kubeconfig, ["apply", "-f", "-"], stdin=json.dumps(namespace))

    def install_webhooks(self) -> None:
        say("registering Kueue's webhooks at the loopback endpoint ...")
        docs = self.kueue.webhook_manifests()
        kubectl(self.kubeconfig, ["apply", "-f", "-"], stdin=yaml.safe_dump_all(docs))

    def wait_default_service_account(self, timeout: float = 60) -> None:
        """With admission on, pods need the `default` ServiceAccount (made by controller-manager)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                kubectl(self.kubeconfig, ["get", "serviceaccount", "default", "-n", "default"], timeout=10)
                return
            except LocalStackError:
                time.sleep(0.5)
        raise StartupTimeoutError("the default ServiceAccount did not appear; is kube-controller-manager running?")

    # ------------------------------------------------------------------ down
    def down(self) -> bool:
        """Stop every process the stack started, by pid, and remove its state."""
        if not self.state.exists():
            say("nothing to stop")
            return False
        if self.kueue.stop():
            say("stopped Kueue")
        self.control_plane.delete()
        say("stopped the control plane")
        shutil.rmtree(self.state, ignore_errors=True)
        say(f"removed {self.state}")
        return True

    # ---------------------------------------------------------------- status
    def status(self) -> list[Component]:
        cp_pids = self.control_plane.component_pids()
        rows = [Component(name, True, f"pid {pid}") for name, pid in sorted(cp_pids.items())]
        api = self.apiserver_ready()
        rows.append(Component("api-server", api, server_version(self.kubeconfig) if api else "not answering"))
        kpid = self.kueue.process.pid()
        if kpid is None:
            rows.append(Component("kueue", False, "not running"))
        else:
            state = "ready" if self.kueue.ready() else "starting"
            rows.append(Component("kueue", True, f"pid {kpid}, {state}, webhooks on 127.0.0.1"))
        return rows

    def pids(self) -> list[int]:
        """Every pid the stack runs (for tests and `down`)."""
        out = list(self.control_plane.component_pids().values())
        kpid = self.kueue.process.pid()
        if kpid is not None:
            out.append(kpid)
        return out


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
    out["kueue"] = kueue_version_from_log(paths.state_dir() / "local" / "kueue.log")
    return out


def kueue_version_from_log(log: Path) -> str:
    """Kueue logs its gitVersion at start-up ("Initializing")."""
    if not log.is_file():
        return "not running"
    for line in log.read_text().splitlines():
        if '"Initializing"' in line and "gitVersion" in line:
            try:
                return str(json.loads(line[line.index("{") :]).get("gitVersion", "unknown"))
            except (ValueError, json.JSONDecodeError):
                break
    return "unknown"


def wait_http(url: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return True
        except (urllib.error.URLError, OSError):
            time.sleep(0.5)
    return False
