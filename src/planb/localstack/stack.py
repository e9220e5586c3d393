"""`planb local up|down|status`: the whole local stack, in order, idempotently."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from planb import paths
from planb.errors import PlanbError
from planb.gke.background import BackgroundEmulator
from planb.localstack.control_plane import ControlPlane
from planb.localstack.errors import LocalStackError, StartupTimeoutError, ToolMissingError
from planb.localstack.kubectl import kubectl
from planb.localstack.kueue import NAMESPACE, HostKueue
from planb.process import ManagedProcess

KUBERAY_METRICS_PORT = 19082
KUBERAY_PROBE_PORT = 19083


def say(msg: str) -> None:
    print(f"[planb local] {msg}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Component:
    """One line of `planb local status`."""

    name: str
    running: bool
    detail: str


class LocalStack:
    """The local stack: kwok control plane, CRDs, host Kueue and KubeRay, the GKE emulator and the
    capacity simulator; state under .state/local."""

    def __init__(self, state: Path | None = None) -> None:
        self.state = state or paths.state_dir() / "local"
        self.kubeconfig = self.state / "kubeconfig"
        self.control_plane = ControlPlane(self.state)
        self.kueue = HostKueue(self.state, self.kubeconfig)
        self.kuberay = ManagedProcess("kuberay-operator", self.state)
        self.simulator = ManagedProcess("capacity-simulator", self.state)
        # The emulator's files sit under the state root (.state/gke-emulator), beside this stack's.
        self.gke_emulator = BackgroundEmulator(self.state.parent)

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
        return (
            self.apiserver_ready()
            and self.kueue.process.pid() is not None
            and self.kueue.ready()
            and self.kuberay.pid() is not None
            and self.simulator.pid() is not None
            and self.gke_emulator.healthy()
        )

    # -------------------------------------------------------------------- up
    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One `up` or `down` at a time (tests and people may race)."""
        lock = self.state.parent / f".{self.state.name}.lock"
        lock.parent.mkdir(parents=True, exist_ok=True)
        with lock.open("w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield

    def up(self) -> bool:
        """Bring the stack up; False (and nothing changed) when it already runs.

        If a start from nothing fails part-way, what it started is stopped again, so a failure
        leaves nothing half-created; a stack that ran before is left for `planb local status`.
        """
        with self.locked():
            fresh = not self.state.exists()
            try:
                return self._up()
            except BaseException as exc:
                if fresh:
                    self._down()
                    note = "(the partly started stack was stopped and removed)"
                    if isinstance(exc, KeyboardInterrupt):
                        say(f"interrupted {note}")
                        raise
                    if isinstance(exc, (PlanbError, subprocess.SubprocessError, OSError)):
                        raise LocalStackError(f"{exc}\n{note}") from exc
                    raise
                if isinstance(exc, (subprocess.SubprocessError, OSError)):
                    raise LocalStackError(
                        f"{exc}\nFix: see 'planb local status', or 'planb local down' and up again"
                    ) from exc
                raise

    def _up(self) -> bool:
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
        self.start_kuberay()
        self.start_gke_emulator()
        self.start_simulator()
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

    def start_kuberay(self) -> None:
        """The KubeRay operator turns admitted (un-suspended) RayJobs into RayClusters and pods."""
        if self.kuberay.pid() is not None:
            return
        binary = paths.tool("kuberay-operator")
        if not binary.is_file():
            raise ToolMissingError(f"the KubeRay operator binary {binary}")
        say("starting the KubeRay operator as a host process ...")
        env = dict(os.environ, KUBECONFIG=str(self.kubeconfig))
        self.kuberay.start(
            [
                str(binary),
                f"--metrics-addr=127.0.0.1:{KUBERAY_METRICS_PORT}",
                f"--health-probe-bind-address=127.0.0.1:{KUBERAY_PROBE_PORT}",
                "--enable-leader-election=false",
            ],
            env=env,
        )
        if not wait_http(f"http://127.0.0.1:{KUBERAY_PROBE_PORT}/readyz", 60):
            raise StartupTimeoutError(f"the KubeRay operator did not become ready; see {self.kuberay.log_file}")

    def start_gke_emulator(self) -> None:
        """The local GKE API the Ansible modules talk to (planb's emulator)."""
        if self.gke_emulator.healthy():
            return
        say("starting the GKE emulator ...")
        self.gke_emulator.start()

    def start_simulator(self) -> None:
        """GKE's autoscaler and DWS, simulated: ProvisioningRequests and pending pods become KWOK nodes."""
        if self.simulator.pid() is not None:
            return
        say("starting the capacity simulator ...")
        self.simulator.start(
            [sys.executable, "-m", "planb.cli", "capacity", "run", "--kubeconfig", str(self.kubeconfig)]
        )

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
        with self.locked():
            return self._down()

    def _down(self) -> bool:
        if not self.state.exists():
            say("nothing to stop")
            return False
        if self.simulator.stop():
            say("stopped the capacity simulator")
        if self.kuberay.stop():
            say("stopped the KubeRay operator")
        if self.kueue.stop():
            say("stopped Kueue")
        # Always purge: a crashed emulator's clusters and pools must not come back with the next up.
        self.gke_emulator.stop(purge=True)
        say("stopped the GKE emulator and removed its state")
        self.control_plane.delete()
        say("stopped the control plane")
        # Local mode's other state: the simulator's switches and the kubeconfig site.yml copied.
        for path in (self.state, self.state.parent / "capacity", self.state.parent / "gke"):
            if path.exists():
                shutil.rmtree(path, ignore_errors=True)
                say(f"removed {path}")
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
        for proc in (self.kuberay, self.simulator):
            pid = proc.pid()
            rows.append(Component(proc.name, pid is not None, f"pid {pid}" if pid else "not running"))
        emulator = self.gke_emulator.running()
        if emulator is not None and self.gke_emulator.healthy():
            rows.append(Component("gke-emulator", True, f"pid {emulator[0]}, {emulator[1]}"))
        else:
            rows.append(Component("gke-emulator", False, "not answering"))
        return rows

    def pids(self) -> list[int]:
        """Every pid the stack runs (for `planb local status` and tests)."""
        out = list(self.control_plane.component_pids().values())
        for proc in (self.kueue.process, self.kuberay, self.simulator):
            pid = proc.pid()
            if pid is not None:
                out.append(pid)
        emulator = self.gke_emulator.running()
        if emulator is not None:
            out.append(emulator[0])
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


def wait_http(url: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return True
        except (urllib.error.URLError, OSError):
            time.sleep(0.5)
    return False
