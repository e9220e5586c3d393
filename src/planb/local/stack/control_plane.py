"""The Kubernetes control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok) by kwokctl.

kwokctl's binary runtime runs the pinned binaries as host processes. Admission plugins are on
(``--kube-admission``): kwokctl turns them off by default, which silently disables webhooks.

Every component listens on 127.0.0.1 only: kwokctl's default bind address is 0.0.0.0, which would
put etcd and the API server on every interface. The address is set in a KwokctlConfiguration passed
with ``--config`` (there is no flag for it in kwokctl v0.8), which also keeps a user's
``~/.kwok/kwok.yaml`` out. kwokctl runs under umask 077: it writes its PKI keys with mode 0644, and
its files should be this user's alone.

Loopback is shared with every account on the machine, so etcd also wants a client certificate: kwokctl runs it
on plain http without authentication, where any local user could rewrite any object (a job's ConfigMap, which
the Ray head stand-in runs as this user). etcd's client and peer listeners are https with
``--client-cert-auth``/``--peer-client-cert-auth``, trusting only a CA of their own
(planb.local.tls.ensure_etcd_pki; the keys 0600 in the cluster's directory, inside the 0700 state directory), and
the API server presents that CA's client certificate. The flags go in as the configuration's componentsPatches
extraArgs. kwokctl appends an extraArg after its own flags (pkg/kwokctl/runtime/util.go, applyComponentPatch)
unless it says ``override: true``; then it replaces kwokctl's own flag of that name in place. kwokctl's
``--listen-client-urls=http://...`` and the other URLs, and the API server's ``--etcd-servers=http://...``,
are overridden, not repeated: etcd would keep the last of a repeated URL flag, but the API server's
``--etcd-servers`` is a string slice, to which a second flag adds a server rather than replacing it. As the
URLs carry etcd's ports, planb picks them, and with them every port kwokctl would pick (PORTS_BELOW):
kwokctl's own choice counts only other clusters' saved ports as taken, not the ones a configuration sets, and
would give kwok-controller etcd's port.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from planb import paths
from planb.kube import Kube, KubeError
from planb.local.process import pid_files, terminate
from planb.local.stack.errors import LocalStackError, StartupTimeoutError, ToolMissingError
from planb.local.stack.kwokctl_config import (
    APISERVER_PORT,
    BINARIES,
    CLUSTER_NAME,
    ETCD_PKI_DIR,
    PICKED_PORTS,
    EtcdEndpoint,
    kwok_stages,
    kwokctl_configuration,
    unused_ports,
)
from planb.local.stack.kwokctl_saved import SavedCluster
from planb.local.stack.port_watch import KwokctlRun, components_with_port_taken, run_until_port_taken
from planb.local.stack.ports import free_ports
from planb.local.statefile import write_atomic
from planb.local.tls import EtcdPKI, ensure_etcd_pki, private_dir

#: How many times `create` makes a cluster whose component could not bind its port (another process took it between
#: the pick and the bind), each time on newly picked ports.
CREATE_ATTEMPTS = 3
#: How long `create` waits, after kwokctl, for the API server to answer /readyz (kwokctl has waited already).
SERVING_WAIT = 30.0


@dataclass
class ControlPlane:
    """A kwokctl cluster whose work directory lives under planb's state directory.

    With `ports_by_kernel` every port, the API server's too, is one the kernel hands out for the moment (the
    throwaway clusters of tests and of planb.local.stack.snapshot): the local stack's fixed API port and its ports
    picked downwards from PORTS_BELOW would be picked alike by two clusters created at once."""

    state: Path
    apiserver_port: int = APISERVER_PORT
    ports_by_kernel: bool = False

    @classmethod
    def throwaway(cls, state: Path) -> ControlPlane:
        """A cluster for one test or one snapshot, on ports the kernel chooses at `create`."""
        return cls(state, apiserver_port=0, ports_by_kernel=True)

    @property
    def workdir(self) -> Path:
        return self.state / "kwok"

    @property
    def cluster_dir(self) -> Path:
        return self.workdir / "clusters" / CLUSTER_NAME

    @property
    def config_file(self) -> Path:
        return self.state / "kwokctl.yaml"

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["KWOK_WORKDIR"] = str(self.workdir)
        # kwokctl reads KWOK_* variables as defaults; keep stray ones out.
        for key in list(env):
            if key.startswith("KWOK_") and key != "KWOK_WORKDIR":
                del env[key]
        return env

    def _kwokctl(
        self, *args: str, timeout: float = 300, config: Path | None = None, watch: Path | None = None
    ) -> KwokctlRun:
        """kwokctl with `args`; with `watch`, stopped once a log there says a port was taken (port_watch)."""
        options = [f"--config={config}"] if config is not None else []
        argv = [str(paths.tool("kwokctl")), "--name", CLUSTER_NAME, *options, *args]
        run = run_until_port_taken(argv, env=self._env(), logs=watch, timeout=timeout)
        if run.returncode not in (0, None):
            raise LocalStackError(
                f"kwokctl {' '.join(args[:2])} failed (exit {run.returncode}):\n{run.stderr.strip()[-3000:]}"
            )
        return run

    def check_tools(self) -> None:
        for name in BINARIES:
            if not paths.tool(name).is_file():
                raise ToolMissingError(f"the pinned binary {paths.tool(name)}")

    def exists(self) -> bool:
        return (self.cluster_dir / "kwok.yaml").is_file()

    @property
    def etcd_dir(self) -> Path:
        """etcd's data directory (kwokctl's binary runtime: pkg/kwokctl/runtime, EtcdDataDirName)."""
        return self.cluster_dir / "etcd"

    def create(
        self,
        kubeconfig: Path,
        dry_run: bool = False,
        *,
        without: Sequence[str] = (),
        etcd_from: Path | None = None,
        wait_s: int = 120,
        timeout_s: int = 240,
    ) -> str:
        """Create and start the cluster, writing an admin kubeconfig to `kubeconfig`.

        `without` names kwokctl components not to run (``--disable``). With `etcd_from`, etcd starts from a copy
        of that data directory (a snapshot: planb.local.stack.snapshot) instead of an empty one; kwokctl's install only
        makes the directory if it is missing. With dry_run, kwokctl only prints the commands it would run (and creates
        nothing); that output is returned. kwokctl waits up to `wait_s` for the cluster, and gives up on the whole
        creation after `timeout_s` (an API server that cannot listen would hold kwokctl that long: it is stopped
        as soon as a component's log says its port was taken, planb.local.stack.port_watch). Then the API server
        must answer /readyz, or the cluster is deleted and StartupTimeoutError says why, with the components' last log
        lines. A component whose port was taken after the pick (another process bound it first) makes the cluster
        again on other ports, up to CREATE_ATTEMPTS times, unless it is the API server's fixed port; any component's
        log saying so stops the attempt, even where the API server would have answered, since the cluster would lack
        that component.
        """
        self.check_tools()
        kubeconfig.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if dry_run:
            return self._create_once(kubeconfig, True, without, None, (wait_s, timeout_s)).stdout
        for attempt in range(1, CREATE_ATTEMPTS + 1):
            run = self._create_once(kubeconfig, False, without, etcd_from, (wait_s, timeout_s))
            if not run.taken and not self.saved.etcd_secured():
                # A kwokctl that no longer has a flag an override names drops the override with a warning only.
                self.delete()
                raise LocalStackError(
                    "kwokctl did not start etcd on https with client certificates (its saved etcd flags lack them), "
                    "so the cluster was deleted: the pinned kwokctl and planb.local.stack.control_plane disagree"
                )
            if not run.taken and self.serving(kubeconfig, min(SERVING_WAIT, wait_s)):
                return run.stdout
            # kwokctl exits 0 when its wait for readiness fails: it only logs "Failed to wait for cluster to be
            # ready" (pkg/kwokctl/cmd/create/cluster/cluster.go, runE), so the API server is asked here.
            tails = self.log_tails()
            # The same reading of the logs as the watch's, which may have stopped kwokctl already.
            taken = sorted({*run.taken, *components_with_port_taken(self.cluster_dir / "logs")})
            self.delete()
            fixed_port_taken = taken == ["kube-apiserver"] and not self.ports_by_kernel  # no other port to try
            if not taken or fixed_port_taken or attempt == CREATE_ATTEMPTS:
                what = (
                    "kwokctl was stopped when a component's log said its port was taken"
                    if run.taken
                    else f"its API server did not answer /readyz on port {self.apiserver_port} after kwokctl"
                )
                raise StartupTimeoutError(
                    f"the control plane did not start: {what} (attempt {attempt} of {CREATE_ATTEMPTS}"
                    + (f"; a port was taken from {', '.join(taken)}" if taken else "")
                    + f"); the cluster was deleted. The components' last log lines:\n{_said(tails)}"
                )
        raise AssertionError("unreachable")  # pragma: no cover

    def _create_once(
        self, kubeconfig: Path, dry_run: bool, without: Sequence[str], etcd_from: Path | None, waits: tuple[int, int]
    ) -> KwokctlRun:
        """kwokctl's create on ports picked now, stopped when a component's log says its port was taken
        (planb.local.stack.port_watch); with `etcd_from`, etcd's data directory copied first."""
        if not dry_run:
            for directory in (self.workdir, self.workdir / "clusters", self.cluster_dir):
                private_dir(directory)  # as kwokctl makes them under umask 077
        pki = self.etcd_pki if dry_run else ensure_etcd_pki(self.etcd_pki.directory)
        if self.ports_by_kernel:
            self.apiserver_port, *others = free_ports(len(PICKED_PORTS) + 1)
        else:
            others = unused_ports(len(PICKED_PORTS), exclude=(self.apiserver_port,))
        picked = dict(zip(PICKED_PORTS, others, strict=True))
        configuration = kwokctl_configuration(
            EtcdEndpoint(pki, picked["etcdPort"], picked["etcdPeerPort"]),
            kwok_crds="kwok-controller" not in without,
            ports=picked,
        )
        write_atomic(self.config_file, yaml.safe_dump_all([configuration, *kwok_stages()]))
        if etcd_from is not None and not dry_run:
            if self.etcd_dir.exists():
                raise LocalStackError(f"{self.etcd_dir} exists already; a snapshot goes only into a new cluster")
            shutil.copytree(etcd_from, self.etcd_dir)
            self.etcd_dir.chmod(0o700)  # etcd wants its data directory private
        if not dry_run:
            shutil.rmtree(self.cluster_dir / "logs", ignore_errors=True)  # an earlier attempt's logs said PORT_TAKEN
        args = (
            "create",
            "cluster",
            "--runtime=binary",
            f"--kubeconfig={kubeconfig}",
            f"--kube-apiserver-port={self.apiserver_port}",
            f"--kube-apiserver-binary={paths.tool('kube-apiserver')}",
            f"--kube-controller-manager-binary={paths.tool('kube-controller-manager')}",
            f"--kube-scheduler-binary={paths.tool('kube-scheduler')}",
            f"--kwok-controller-binary={paths.tool('kwok')}",
            f"--etcd-binary={paths.tool('etcd')}",
            "--kube-admission",
            "--kube-authorization",
            *([f"--disable={','.join(without)}"] if without else []),
            f"--wait={waits[0]}s",
            f"--timeout={waits[1]}s",
        )
        if dry_run:
            return self._kwokctl("--dry-run", *args, config=self.config_file)
        return self._kwokctl(*args, config=self.config_file, watch=self.cluster_dir / "logs")

    def serving(self, kubeconfig: Path, timeout: float) -> bool:
        """True once the API server answers /readyz with "ok" through `kubeconfig`, within `timeout` seconds. The
        kubeconfig's CA and client certificate are this cluster's, so another cluster's server on the port fails."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                if Kube(kubeconfig).text("/readyz", timeout=5).strip() == "ok":
                    return True
            except (KubeError, OSError):
                pass
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.5)

    def log_tails(self, lines: int = 8) -> dict[str, str]:
        """The last lines of each component's log, by component (kwokctl's binary runtime writes the cluster's
        logs/<component>.log)."""
        out: dict[str, str] = {}
        for log in sorted((self.cluster_dir / "logs").glob("*.log")):
            with contextlib.suppress(OSError):
                out[log.stem] = "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
        return out

    @property
    def etcd_pki(self) -> EtcdPKI:
        """etcd's CA and certificates, and the API server's client certificate, in the cluster's directory."""
        return EtcdPKI(self.cluster_dir / ETCD_PKI_DIR)

    def start(self, kubeconfig: Path | None = None) -> None:
        """Start the existing cluster's stopped components; etcd's certificates renewed first when due (every
        component stopped before, so etcd and the API server start with the same new CA). With `kubeconfig`, the
        API server must then answer /readyz through it (kwokctl's start, like its create, exits 0 when its own wait
        fails: pkg/kwokctl/cmd/start/cluster/cluster.go, runE, logs the error only)."""
        if self.saved.etcd_secured() and self.etcd_pki.needs_renewal():
            running = self.component_pids()
            if running:
                self._kwokctl("stop", "cluster", timeout=120)
                # kwokctl's stop SIGKILLs each component but cannot wait for one that is not its child
                # (pkg/utils/exec/cmd.go, KillProcess: Wait gives ECHILD), and removes its pid file: a component still
                # exiting holds its port, and the one started next fails to bind it on a busy host.
                for pid in running.values():
                    terminate(pid)
            ensure_etcd_pki(self.etcd_pki.directory)
        self._kwokctl("start", "cluster", "--wait=120s")
        if kubeconfig is not None and not self.serving(kubeconfig, SERVING_WAIT):
            raise StartupTimeoutError(
                f"the control plane's API server did not answer /readyz on port {self.apiserver_port} after kwokctl "
                f"started it again (`planb local down` removes it). The components' last log lines:\n"
                + _said(self.log_tails())
            )

    @property
    def saved(self) -> SavedCluster:
        """What kwokctl saved for the existing cluster (planb.local.stack.kwokctl_saved)."""
        return SavedCluster(self.cluster_dir)

    def ports(self) -> dict[int, str]:
        """The ports the control plane will listen on: the saved ones, or the API port of a new cluster
        (kwokctl picks the others from free ports when it creates the cluster)."""
        return (self.saved.ports() if self.exists() else {}) or {self.apiserver_port: "kube-apiserver"}

    def delete(self) -> None:
        """Delete the cluster by kwokctl, then make sure every component is gone, by pid.

        The pids are read before kwokctl removes its pid files: it signals the components and
        returns without waiting for them to exit.
        """
        pids = self.component_pids()
        if self.exists():
            # A failed delete falls through to the pid sweep below.
            with contextlib.suppress(LocalStackError):
                self._kwokctl("delete", "cluster", timeout=120)
        for pid in (*pids.values(), *self.component_pids().values()):
            terminate(pid)

    def component_pids(self) -> dict[str, int]:
        """Pids of the running components, from kwokctl's pid files."""
        # kwokctl's pid files carry no start time: the executable must be one of ours instead.
        return pid_files(self.cluster_dir / "pids", (self.cluster_dir, paths.tools_dir() / "bin"))


def _said(tails: dict[str, str]) -> str:
    """Components' log tails (ControlPlane.log_tails) as an error message's last lines."""
    return "\n".join(f"--- {name}:\n{tail}" for name, tail in tails.items()) or "(no component logs)"
