"""The local stack's parts and how each starts: the control plane's CRDs, the host processes, their probes.

`planb.local.stack.stack.LocalStack` puts them together (`up` starts them side by side where nothing orders
them; `down` is in planb.local.stack.teardown).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import yaml

from planb import paths
from planb.kube import Kube, KubeError
from planb.local import apiserver as local_apiserver
from planb.local import failover_settings, loopback
from planb.local.gke_emulator.background import BackgroundEmulator, default_port
from planb.local.process import ManagedProcess
from planb.local.rayhead import address as rayhead_address
from planb.local.stack import crds, failover_access
from planb.local.stack.control_plane import ControlPlane
from planb.local.stack.errors import LocalStackError, StartupTimeoutError, ToolMissingError
from planb.local.stack.kueue import HostKueue
from planb.local.stack.kueue_settings import NAMESPACE
from planb.local.stack.kwokctl_config import APISERVER_PORT
from planb.local.statefile import flocked

KUBERAY_METRICS_PORT = loopback.port(19082)
KUBERAY_PROBE_PORT = loopback.port(19083)
#: The state directory's record of the CRD files this stack's etcd took in (planb.local.stack.crds.record).
CRDS_STAMP = "crds.applied"


def say(msg: str) -> None:
    print(f"[planb local] {msg}", file=sys.stderr, flush=True)


class StackParts:
    """The stack's parts, each started and probed on its own; state under .state/local."""

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
        # Asked in this process, not by `kubectl get --raw /readyz`: `up` asks at every call, and each test asks
        # `up` for its stack.
        try:
            return Kube(self.kubeconfig).text("/readyz").strip() == "ok"
        except (KubeError, OSError):
            return False

    # ---------------------------------------------------------------- starts
    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One `up` or `down` at a time (tests and people may race)."""
        with flocked(self.state.parent / f".{self.state.name}.lock"):
            yield

    def crd_directories(self) -> list[tuple[str, Path]]:
        """The CRD directories of the pinned modules, by whose they are, in apply order; each must be there."""
        return crds.directories()

    def kuberay_binary(self) -> Path:
        binary = paths.tool("kuberay-operator")
        if not binary.is_file():
            raise ToolMissingError(f"the KubeRay operator binary {binary}")
        return binary

    def install_crds(self, from_snapshot: frozenset[str] | None = None) -> None:
        """CRDs from the pinned modules, Kueue's namespace and its loopback webhooks, in one apply; every CRD is
        served before this returns (the ProvisioningRequest CRD must be before Kueue starts: Kueue probes it once).

        `from_snapshot` names the CRDs etcd started with (planb.local.stack.snapshot: the same files, taken in by
        the same apply when the snapshot was made, and keyed by their bytes); those are not applied again, only
        waited on. Nor are they when this stack's etcd already took in these very files (an `up` that restarts a
        part that stopped; the stamp `crds.applied` in the state directory, written after each install, says
        so). A server-side apply that changes nothing still costs the API server seconds of merging 5 MB of
        schemas.
        """
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
        manifests = crds.files()
        files_digest = crds.digest(manifests)
        stamp = self.state / CRDS_STAMP
        held = from_snapshot if from_snapshot is not None else crds.applied(stamp, files_digest)
        if held is None:
            say("installing the ProvisioningRequest, KubeRay and Kueue CRDs and Kueue's webhook configurations ...")
        elif from_snapshot is None:
            say("the CRDs are in etcd already; installing Kueue's namespace and webhook configurations ...")
        else:
            say("the CRDs came with etcd's snapshot; installing Kueue's namespace and webhook configurations ...")
        others = yaml.safe_dump_all([namespace, *self.kueue.webhook_manifests()])
        try:
            crds.apply(self.kubeconfig, manifests if held is None else [], stdin=others)
            served = crds.wait_served(self.kubeconfig, expected=held)
        except LocalStackError:
            if held is None or from_snapshot is not None:
                raise
            # The stamp said more than etcd holds (a CRD deleted by hand): every CRD goes in again.
            say("a CRD the stamp names is gone; installing every CRD again ...")
            crds.apply(self.kubeconfig, manifests, stdin=others)
            served = crds.wait_served(self.kubeconfig)
        crds.record(stamp, files_digest, served)

    def start_kuberay(self, binary: Path | None = None) -> None:
        """The KubeRay operator turns admitted (un-suspended) RayJobs into RayClusters and pods. `binary`: another
        build than the pinned one (the upgrade e2e test's previous pin, hack/upgrade-from.env)."""
        if self.kuberay.pid() is not None:
            return
        binary = binary or self.kuberay_binary()
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
        """The Ray head stand-in (planb.local.rayhead): Ray's job API for KubeRay, the submitter pods' work."""
        if self.rayhead.pid() is not None:
            return
        say("starting the Ray head stand-in (KWOK pods run no Ray) ...")
        self.rayhead.start(
            [
                sys.executable,
                "-m",
                "planb.cli",
                "local",
                "rayhead",
                "run",
                "--kubeconfig",
                str(self.kubeconfig),
                # It refuses any other API server than this stack's (planb.local.rayhead.guard).
                f"--apiserver-port={self.control_plane.apiserver_port}",
                # KWOK's pods run no Ray head: KubeRay copies the RayCluster's ready state into the RayJob (which
                # Kueue's PodsReady reads) only on its own later reads, sometimes past a short waitForPodsReady;
                # while failover is on the stand-in copies it at once (planb.local.rayhead.ray_ready).
                f"--failover-settings={failover_settings.path(self.state)}",
            ]
        )
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
                "local",
                "capacity",
                "run",
                "--kubeconfig",
                str(self.kubeconfig),
                # GKE's autoscaler reads node pools through GKE's API: here the emulator's.
                f"--gke-endpoint=http://127.0.0.1:{default_port()}",
            ]
        )

    def start_failover(self, module: str = "planb.failover") -> bool:
        """The failover controller (`python -m planb.failover`; a test names a double of its own), when its
        settings file switches it on; True if started."""
        settings = failover_settings.load(self.state)
        if not settings.enabled or self.failover.pid() is not None:
            return False
        say(f"starting the failover controller (plan A gets {settings.after_seconds:g} s) ...")
        # Its local mode acts on the local stack only (the controller itself imports nothing of planb).
        local_apiserver.require_local(
            self.kubeconfig,
            "The failover controller's local mode",
            "it moves jobs between plans on what it reads",
            self.control_plane.apiserver_port,
        )
        # The chart's ServiceAccount and Roles, as in the cluster: a fresh token of that account each start.
        access = failover_access.service_account_token(self.state, self.kubeconfig, settings.service_account)
        key, value = failover_access.plan_a_label(self.kubeconfig, settings.plan_a_flavor)
        self.failover.start(
            [
                sys.executable,
                "-m",
                module,
                *access.flags(),
                f"--after-seconds={settings.after_seconds:g}",
                f"--cluster-queues={settings.cluster_queues}",
                f"--namespaces={settings.namespaces}",
                f"--plan-a-flavor={settings.plan_a_flavor}",
                f"--plan-a-label={key}={value}",
                f"--metrics-port={settings.metrics_port}",
                # Kueue requeues an evicted Workload after 5 s (the role's backoffBaseSeconds); the eviction is seen
                # well before.
                "--poll-seconds=1",
            ]
        )
        return True

    def wait_default_service_account(self, timeout: float = 180) -> None:
        """With admission on, pods need the `default` ServiceAccount (made by controller-manager). The wait ends as
        soon as it appears (a few seconds on a quiet machine); 180 s, not 60, because a regions topology starts two
        more stacks while make test's other tiers fill both cores, and at a load of 7 to 13 the controller-manager
        took over 60 s (2026-12-04: the regions e2e topology and the regions demo failed their start so)."""
        # Asked in this process (one connection), not by a kubectl process a look: this runs while the API
        # server takes in the CRDs, and every CPU second counts then.
        kube = Kube(self.kubeconfig)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if kube.get("/api/v1/namespaces/default/serviceaccounts/default") is not None:
                    return
            except KubeError:
                pass
            time.sleep(0.2)
        raise StartupTimeoutError("the default ServiceAccount did not appear; is kube-controller-manager running?")


def wait_http(url: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return True
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    return False
