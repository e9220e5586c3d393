"""`planb local up|down|status`: the whole local stack, in order, idempotently."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import yaml

from planb import paths
from planb.errors import PlanbError
from planb.failover import settings as failover_settings
from planb.gke.background import BackgroundEmulator, default_port
from planb.localstack import ports, statedir
from planb.localstack.control_plane import APISERVER_PORT, BIND_ADDRESS, ControlPlane
from planb.localstack.errors import LocalStackError, StartupTimeoutError, ToolMissingError
from planb.localstack.kubectl import kubectl
from planb.localstack.kueue import NAMESPACE, HostKueue
from planb.localstack.timeline import Timeline
from planb.process import ManagedProcess
from planb.rayhead import address as rayhead_address

#: CRDs of the pinned modules the stack leaves out: KubeRay runs its RayCronJob controller only behind its
#: RayCronJob feature gate (off; ray-operator main.go), and Kueue integrates no RayCronJob, so nothing here
#: watches one; its schema alone is 0.7 MB of the API server's OpenAPI.
SKIPPED_CRDS = frozenset({"ray.io_raycronjobs.yaml"})

KUBERAY_METRICS_PORT = 19082
KUBERAY_PROBE_PORT = 19083

#: What planb writes in each state directory `down` cleans (globs); in a directory planb did not
#: create (PLANB_STATE_DIR pointed at a home directory, say) nothing else is removed.
LOCAL_FILES = (
    "kubeconfig",
    "kwokctl.yaml",
    "kwok/clusters/planb",
    "kueue-certs",
    "kueue-config.yaml",
    "kueue-settings.json",
    "kueue-settings.tmp",
    "kueue-etc.json",
    "kueue-etc.tmp",
    "failover.json",
    "failover.tmp",
    "up-timings.json",
    "up-timings.json.tmp",
    "*.pid",
    "*.log",
    "*.tmp",
)
#: The capacity simulator's switches and the kubeconfigs the gke_cluster role writes (local inventory).
SIBLING_FILES = {
    "capacity": ("settings.json", "settings.tmp", "*.tmp"),
    "gke": ("*.kubeconfig",),
    # The Ray head stand-in's payload settings, each job's output and the files its `--run` payloads ran from.
    "rayhead": ("settings.json", "settings.tmp", "*.tmp", "logs", "work"),
}


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

    def __init__(self, state: Path | None = None, apiserver_port: int = APISERVER_PORT) -> None:
        self.state = state or paths.state_dir() / "local"
        self.kubeconfig = self.state / "kubeconfig"
        self.control_plane = ControlPlane(self.state, apiserver_port)
        self.kueue = HostKueue(self.state, self.kubeconfig)
        self.kuberay = ManagedProcess("kuberay-operator", self.state)
        # KWOK pods run nothing: this answers KubeRay's Ray job API and does what submitter pods do.
        self.rayhead = ManagedProcess("ray-head-stand-in", self.state)
        self.simulator = ManagedProcess("capacity-simulator", self.state)
        # Stockout-aware failover: runs only while `planb local failover` has switched it on.
        self.failover = ManagedProcess("failover-controller", self.state)
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
            and self.rayhead.pid() is not None
            and self.simulator.pid() is not None
            and self.gke_emulator.healthy()
            and (self.failover.pid() is not None or not failover_settings.load(self.state).enabled)
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
                    started = self.state.exists()
                    note = "(the partly started stack was stopped and removed)" if started else "(nothing was started)"
                    try:
                        self._down(quiet=True)
                    except LocalStackError as cleanup:
                        note = f"(stopping the partly started stack failed too: {cleanup})"
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
        if self.kueue.cert_needs_renewal():
            say("renewing Kueue's webhook certificate (it expires soon); Kueue restarts with the new one ...")
            self.kueue.stop()
            _ = self.kueue.cert  # renews; install_crds below publishes the new CA bundle
        if self.is_up():
            self._warn_if_exposed()
            say(f"already up (kubeconfig: {self.kubeconfig})")
            return False
        timeline = Timeline()
        with timeline.span("checks (ports, tools, state directory)"):
            ports.check_ports(self.needed_ports(), ours=self.pids())
            self.control_plane.check_tools()
            statedir.create(self.state)
            self.state.chmod(0o700)  # keys and the admin kubeconfig live here
            self._warn_if_exposed()
        # The parts that need nothing of each other start side by side; each is waited on until it answers.
        # The GKE emulator needs no Kubernetes at all, so it starts with the control plane.
        with ThreadPoolExecutor(max_workers=8, thread_name_prefix="planb-up") as pool:
            parts: list[Future[None]] = [
                pool.submit(timeline.timed, "GKE emulator (start to healthz)", self.start_gke_emulator)
            ]
            with timeline.span("control plane (kwokctl: etcd, kube-apiserver, controllers, scheduler, kwok)"):
                self.start_control_plane()
            say(f"control plane ready in {timeline.now():.1f} s")
            # Needs only the controller-manager: waited on beside the rest.
            parts.append(pool.submit(timeline.timed, "default ServiceAccount", self.wait_default_service_account))
            with timeline.span("CRDs, Kueue's namespace and webhook configurations"):
                self.install_crds()
            # Kueue, KubeRay, the stand-in, the simulator and the failover controller need the CRDs, not each other.
            say("starting Kueue, the KubeRay operator, the Ray head stand-in and the capacity simulator ...")
            parts += [
                pool.submit(timeline.timed, "Kueue (start to readyz)", self.start_kueue),
                pool.submit(timeline.timed, "Ray head stand-in (start to healthz)", self.start_rayhead),
                pool.submit(timeline.timed, "KubeRay operator (start to readyz)", self.start_kuberay),
                pool.submit(timeline.timed, "capacity simulator (start)", self.start_simulator),
                pool.submit(timeline.timed, "failover controller (start, when on)", self.start_failover),
            ]
            for part in parts:
                part.result()  # the first failure, after every part has finished or timed out
        self._report(timeline)
        return True

    def start_control_plane(self) -> None:
        """kwokctl's cluster: created the first time, started again after a stop."""
        if self.apiserver_ready():
            return
        if self.control_plane.exists():
            say("starting the existing control plane ...")
            self.control_plane.start()
        else:
            say("creating the control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok) ...")
            self.control_plane.create(self.kubeconfig)

    def start_kueue(self) -> None:
        self.kueue.start()
        self.kueue.wait_ready()

    def _report(self, timeline: Timeline) -> None:
        """The parts' timings on stderr and in up-timings.json; the summary line last."""
        with contextlib.suppress(OSError):
            timeline.write(self.state / "up-timings.json")
        say("timings (seconds from the start of up):\n" + timeline.table())
        say(f"up in {timeline.total():.1f} s; kubeconfig: {self.kubeconfig}")

    def needed_ports(self) -> dict[int, str]:
        """The ports `up` will listen on, for the parts not running yet (port -> component)."""
        needed: dict[int, str] = {}
        if not self.apiserver_ready():
            needed.update(self.control_plane.ports())
        if self.kueue.process.pid() is None:
            settings = self.kueue.settings
            needed[settings.webhook_port] = "Kueue webhooks"
            needed[settings.health_port] = "Kueue health probe"
            needed[settings.metrics_port] = "Kueue metrics"
        if self.rayhead.pid() is None:
            needed[rayhead_address.PORT] = "Ray head stand-in"
        if self.kuberay.pid() is None:
            needed[KUBERAY_METRICS_PORT] = "KubeRay operator metrics"
            needed[KUBERAY_PROBE_PORT] = "KubeRay operator health probe"
        if not self.gke_emulator.healthy():
            needed[default_port()] = "GKE emulator"
        failover = failover_settings.load(self.state)
        if failover.enabled and self.failover.pid() is None:
            needed[failover.metrics_port] = "failover controller metrics"
        return needed

    def _warn_if_exposed(self) -> None:
        """A control plane created by an older planb listens on every interface: say how to fix it."""
        if self.control_plane.exists() and self.control_plane.bind_address() != BIND_ADDRESS:
            say(
                f"warning: this control plane was created listening on {self.control_plane.bind_address()} "
                f"(every interface, etcd without authentication). Fix: 'planb local down' then 'planb local up' "
                f"re-creates it on {BIND_ADDRESS}."
            )

    def install_crds(self) -> None:
        """CRDs from the pinned modules, Kueue's namespace and its loopback webhooks, in one apply.

        The ProvisioningRequest CRD must exist before Kueue starts (Kueue probes it once); every CRD
        is Established before this returns.
        """
        manifests = paths.manifests_dir()
        groups = [
            ("ProvisioningRequest", manifests / "provisioningrequest"),
            ("KubeRay", manifests / "kuberay" / "crds"),
            ("Kueue", manifests / "kueue" / "crds"),
        ]
        for label, directory in groups:
            if not directory.is_dir():
                raise ToolMissingError(f"the {label} CRDs in {directory}")
        say("installing the ProvisioningRequest, KubeRay and Kueue CRDs and Kueue's webhook configurations ...")
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
        files = [
            arg
            for _, directory in groups
            for path in sorted(directory.glob("*.yaml"))
            if path.name not in SKIPPED_CRDS
            for arg in ("-f", str(path))
        ]
        kubectl(
            self.kubeconfig,
            ["apply", "--server-side", "--force-conflicts", "--field-manager=planb", *files, "-f", "-"],
            stdin=yaml.safe_dump_all([namespace, *self.kueue.webhook_manifests()]),
            timeout=180,
        )
        kubectl(
            self.kubeconfig,
            ["wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"],
            timeout=90,
        )

    def start_kuberay(self) -> None:
        """The KubeRay operator turns admitted (un-suspended) RayJobs into RayClusters and pods."""
        if self.kuberay.pid() is not None:
            return
        binary = paths.tool("kuberay-operator")
        if not binary.is_file():
            raise ToolMissingError(f"the KubeRay operator binary {binary}")
        say("starting the KubeRay operator as a host process ...")
        # KubeRay's dashboard client (Go's default transport) sends the Ray job API requests for
        # <head service>.<namespace>.svc.cluster.local, which nothing resolves here, to the stand-in;
        # Go never proxies loopback, so the API server on 127.0.0.1 is reached directly.
        proxy = f"http://127.0.0.1:{rayhead_address.PORT}"
        env = dict(os.environ, KUBECONFIG=str(self.kubeconfig), HTTP_PROXY=proxy, http_proxy=proxy)
        env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
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

    def start_rayhead(self) -> None:
        """The Ray head stand-in (planb.rayhead): Ray's job API for KubeRay, the submitter pods' work."""
        if self.rayhead.pid() is not None:
            return
        say("starting the Ray head stand-in (KWOK pods run no Ray) ...")
        self.rayhead.start([sys.executable, "-m", "planb.cli", "rayhead", "run", "--kubeconfig", str(self.kubeconfig)])
        if not wait_http(f"http://127.0.0.1:{rayhead_address.PORT}/healthz", 30):
            raise StartupTimeoutError(f"the Ray head stand-in did not start; see {self.rayhead.log_file}")

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
            [
                sys.executable,
                "-m",
                "planb.cli",
                "capacity",
                "run",
                "--kubeconfig",
                str(self.kubeconfig),
                # GKE's autoscaler reads node pools through GKE's API: here the emulator's.
                f"--gke-endpoint=http://127.0.0.1:{default_port()}",
            ]
        )

    def start_failover(self) -> bool:
        """The failover controller (planb.failover), when its settings file switches it on; True if started."""
        settings = failover_settings.load(self.state)
        if not settings.enabled or self.failover.pid() is not None:
            return False
        say(f"starting the failover controller (plan A gets {settings.after_seconds:g} s) ...")
        self.failover.start(
            [
                sys.executable,
                "-m",
                "planb.failover.controller",
                "--kubeconfig",
                str(self.kubeconfig),
                f"--after-seconds={settings.after_seconds:g}",
                f"--plan-a-flavor={settings.plan_a_flavor}",
                f"--metrics-port={settings.metrics_port}",
            ]
        )
        return True

    def wait_default_service_account(self, timeout: float = 60) -> None:
        """With admission on, pods need the `default` ServiceAccount (made by controller-manager)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                kubectl(self.kubeconfig, ["get", "serviceaccount", "default", "-n", "default"], timeout=10)
                return
            except LocalStackError:
                time.sleep(0.2)
        raise StartupTimeoutError("the default ServiceAccount did not appear; is kube-controller-manager running?")

    # ------------------------------------------------------------------ down
    def down(self) -> bool:
        """Stop every process the stack started, by pid, and remove its state."""
        with self.locked():
            return self._down()

    def _down(self, quiet: bool = False) -> bool:
        """Stop each part independently, then remove the state; every failure is reported at the end.

        One part that cannot be stopped (or an emulator whose state cannot be purged) does not keep
        the others running. The state (pid files) is kept if a process could not be stopped, so
        a second `down` can finish the job.
        """
        if not self.state.exists():
            if not quiet:
                say("nothing to stop")
            return False
        failures: list[str] = []

        def step(what: str, action: Callable[[], object]) -> None:
            try:
                action()
            except Exception as exc:  # each part's stop is independent; all are reported
                failures.append(f"{what}: {exc}")

        for label, process in (
            ("the failover controller", self.failover),
            ("the capacity simulator", self.simulator),
            ("the KubeRay operator", self.kuberay),
            ("the Ray head stand-in", self.rayhead),
            ("Kueue", self.kueue.process),
        ):
            step(f"stopping {label}", functools.partial(_stop_process, process, label))
        # Always purge: a crashed emulator's clusters and pools must not come back with the next up.
        step("stopping the GKE emulator", self._stop_emulator)
        step("stopping the control plane", self._stop_control_plane)
        stopped = not failures
        step("removing Kueue's metrics certificate", self._remove_metrics_cert)
        if stopped:
            step("removing the state", self._remove_state)
        if failures:
            kept = "" if stopped else f"; the state in {self.state} is kept so 'planb local down' can retry"
            raise LocalStackError("planb local down stopped what it could, but:\n  " + "\n  ".join(failures) + kept)
        return True

    def _stop_emulator(self) -> None:
        self.gke_emulator.stop(purge=True)
        say("stopped the GKE emulator and removed its state")

    def _stop_control_plane(self) -> None:
        self.control_plane.delete()
        left = self.control_plane.component_pids()
        if left:
            raise LocalStackError(f"still running after delete: {left}")
        say("stopped the control plane")

    def _remove_metrics_cert(self) -> None:
        for path in self.kueue.remove_metrics_cert():
            say(f"removed {path}")

    def _remove_state(self) -> None:
        """This stack's state and local mode's other state, but only what planb put there."""
        targets: list[tuple[Path, tuple[str, ...]]] = [(self.state, LOCAL_FILES)]
        targets += [(self.state.parent / name, known) for name, known in SIBLING_FILES.items()]
        for path, known in targets:
            if not path.exists():
                continue
            left = statedir.remove(path, known)
            if left:
                names = ", ".join(p.name for p in left[:5]) + (" ..." if len(left) > 5 else "")
                say(f"kept {path}: planb did not create it and it holds files planb did not write ({names})")
            else:
                say(f"removed {path}")

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
        for proc in (self.kuberay, self.rayhead, self.simulator):
            pid = proc.pid()
            rows.append(Component(proc.name, pid is not None, f"pid {pid}" if pid else "not running"))
        emulator = self.gke_emulator.running()
        if emulator is not None and self.gke_emulator.healthy():
            rows.append(Component("gke-emulator", True, f"pid {emulator[0]}, {emulator[1]}"))
        else:
            rows.append(Component("gke-emulator", False, "not answering"))
        if failover_settings.load(self.state).enabled or self.failover.pid() is not None:
            fpid = self.failover.pid()
            rows.append(Component(self.failover.name, fpid is not None, f"pid {fpid}" if fpid else "not running"))
        return rows

    def pids(self) -> list[int]:
        """Every pid the stack runs (for `planb local status` and tests)."""
        out = list(self.control_plane.component_pids().values())
        for proc in (self.kueue.process, self.kuberay, self.rayhead, self.simulator, self.failover):
            pid = proc.pid()
            if pid is not None:
                out.append(pid)
        emulator = self.gke_emulator.running()
        if emulator is not None:
            out.append(emulator[0])
        return out


def _stop_process(process: ManagedProcess, label: str) -> None:
    if process.stop():
        say(f"stopped {label}")


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
            time.sleep(0.1)
    return False
