"""`planb local up|down|status`: the whole local stack, in order, idempotently.

The parts and how each starts are in planb.local.stack.parts, stopping them in planb.local.stack.teardown.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from planb.errors import PlanbError
from planb.kube import Kube
from planb.local import failover_settings
from planb.local.gke_emulator.background import default_port
from planb.local.rayhead import address as rayhead_address
from planb.local.stack import kuberay_layout, ports, statedir
from planb.local.stack.errors import LocalStackError
from planb.local.stack.kwokctl_config import BIND_ADDRESS
from planb.local.stack.logtails import log_tails
from planb.local.stack.parts import KUBERAY_METRICS_PORT, KUBERAY_PROBE_PORT, say
from planb.local.stack.snapshot import SWITCH, EtcdSnapshot, switched_off
from planb.local.stack.teardown import StackTeardown
from planb.local.stack.timeline import Timeline
from planb.local.stack.versions import component_versions, server_version

__all__ = ["Component", "LocalStack", "component_versions"]

CONTROL_PLANE_SPAN = "control plane (kwokctl: etcd, kube-apiserver, controllers, scheduler, kwok)"


@dataclass(frozen=True)
class Component:
    """One line of `planb local status`."""

    name: str
    running: bool
    detail: str


class LocalStack(StackTeardown):
    """The local stack: kwok control plane, CRDs, host Kueue and KubeRay, the GKE emulator and the
    capacity simulator; state under .state/local."""

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
                    tails = log_tails(self.state) if started else ""
                    note = f"{note}\n{tails}" if tails else note
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

    def check_tools(self) -> None:
        """Every binary and manifest directory `up` will use is there, before anything starts."""
        self.control_plane.check_tools()
        self.kueue.binary()
        self.kuberay_binary()
        self.crd_directories()
        kuberay_layout.from_env()

    def _up(self) -> bool:
        if self.kueue.cert_needs_renewal():
            say("renewing Kueue's webhook certificate (it expires soon); Kueue restarts with the new one ...")
            self.kueue.stop()
            _ = self.kueue.cert  # renews; install_crds below publishes the new CA bundle
        if self.is_up():
            self._warn_if_exposed()
            # A stack started before the layout existed, or switched since, shows PLANB_KUBERAY_LAYOUT again.
            self.show_kuberay_layout()
            say(f"already up (kubeconfig: {self.kubeconfig})")
            return False
        timeline = Timeline()
        with timeline.span("checks (ports, tools, state directory)"):
            ports.check_ports(self.needed_ports(), ours=self.pids())
            self.check_tools()
            statedir.create(self.state)
            self.state.chmod(0o700)  # keys and the admin kubeconfig live here
            self._warn_if_exposed()
        # The parts that need nothing of each other start side by side; each is waited on until it answers.
        # The GKE emulator needs no Kubernetes at all, so it starts with the control plane.
        with ThreadPoolExecutor(max_workers=8, thread_name_prefix="planb-up") as pool:
            parts: list[Future[None]] = [
                pool.submit(timeline.timed, "GKE emulator (start to healthz)", self.start_gke_emulator)
            ]
            snapshot = self.start_control_plane(timeline)
            say(f"control plane ready in {timeline.now():.1f} s")
            # These need the API server but no CRD: the stand-in watches pods and reads Ray objects only when
            # asked, the simulator's watch of ProvisioningRequests retries until their CRD is served, and the
            # ServiceAccount needs only the controller-manager. They start while the CRDs go in.
            parts += [
                pool.submit(timeline.timed, "default ServiceAccount", self.wait_default_service_account),
                pool.submit(timeline.timed, "Ray head stand-in (start to healthz)", self.start_rayhead),
                pool.submit(timeline.timed, "capacity simulator (start)", self.start_simulator),
            ]
            with timeline.span("CRDs, Kueue's namespace and webhook configurations"):
                self.install_crds(snapshot.crd_names() if snapshot else None)
            # What the API shows of the operator (PLANB_KUBERAY_LAYOUT): the chart's queues release records it.
            parts.append(pool.submit(timeline.timed, "KubeRay operator's layout", self.show_kuberay_layout))
            # Kueue (which probes the ProvisioningRequest and Ray APIs once at start), KubeRay and the failover
            # controller need the CRDs established, not each other.
            say("starting Kueue and the KubeRay operator ...")
            parts += [
                pool.submit(timeline.timed, "Kueue (start to readyz)", self.start_kueue),
                pool.submit(timeline.timed, "KubeRay operator (start to readyz)", self.start_kuberay),
                pool.submit(timeline.timed, "failover controller (start, when on)", self.start_failover),
            ]
            for part in parts:
                part.result()  # the first failure, after every part has finished or timed out
        self._report(timeline)
        return True

    def start_control_plane(self, timeline: Timeline) -> EtcdSnapshot | None:
        """kwokctl's cluster: created the first time (etcd from the toolchain's snapshot), started again after a
        stop; the snapshot it was created from, if it was created now from one."""
        if self.apiserver_ready():
            return None
        if self.control_plane.exists():
            with timeline.span(CONTROL_PLANE_SPAN):
                say("starting the existing control plane ...")
                self.control_plane.start(self.kubeconfig)
            return None
        with timeline.span("etcd snapshot (found, or made once per toolchain and CRD set)"):
            snapshot = self.etcd_snapshot()
        with timeline.span(CONTROL_PLANE_SPAN):
            say(
                "creating the control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok)"
                + (" with the CRDs in etcd from the snapshot ..." if snapshot else " ...")
            )
            if snapshot is None:
                self.control_plane.create(self.kubeconfig)
                return None
            with snapshot.in_use() as found:
                try:
                    self.control_plane.create(self.kubeconfig, etcd_from=snapshot.data_dir if found else None)
                except LocalStackError as exc:
                    if not found:
                        raise
                    raise LocalStackError(
                        f"{exc}\n(etcd started from the snapshot {snapshot.directory}. If the snapshot is at fault, "
                        f"remove that directory, or run with {SWITCH}=off)"
                    ) from exc
            return snapshot if found else None

    def etcd_snapshot(self) -> EtcdSnapshot | None:
        """The etcd data directory a new control plane starts from (planb.local.stack.snapshot), made first if this
        toolchain has none for these CRDs; None, said so, if it cannot be made or PLANB_ETCD_SNAPSHOT=off (the
        old name, PLANB_ETCD_SEED, still works): then the CRDs go into an empty etcd, as they would without
        snapshots."""
        switch = switched_off(os.environ)
        if switch is not None:
            say(f"{switch}=off: the CRDs go into an empty etcd")
            return None
        snapshot = EtcdSnapshot.for_stack()
        if not snapshot.exists():
            say("making the etcd snapshot for this toolchain's CRDs (once; every later up starts from it) ...")
            try:
                snapshot.make()
            except (PlanbError, OSError, subprocess.SubprocessError) as exc:
                say(f"could not make the etcd snapshot, so this up takes the CRDs into an empty etcd: {exc}")
                return None
        return snapshot

    def show_kuberay_layout(self) -> None:
        layout, version = kuberay_layout.from_env()
        if kuberay_layout.apply(Kube(self.kubeconfig), layout, version):
            say(f"KubeRay operator layout: {layout}" + (f" (ray-system, {version})" if layout == "in-cluster" else ""))

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
        if self.control_plane.exists() and self.control_plane.saved.bind_address() != BIND_ADDRESS:
            say(
                f"warning: this control plane was created listening on {self.control_plane.saved.bind_address()} "
                f"(every interface, etcd without authentication). Fix: 'planb local down' then 'planb local up' "
                f"re-creates it on {BIND_ADDRESS}."
            )
        elif self.control_plane.exists() and not self.control_plane.saved.etcd_secured():
            say(
                "warning: this control plane was created with etcd on plain HTTP (any local account can read and "
                "write it). Fix: 'planb local down' then 'planb local up' re-creates it with etcd behind client "
                "certificates."
            )

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
