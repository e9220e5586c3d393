"""The Kubernetes control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok) by kwokctl.

kwokctl's binary runtime runs the pinned binaries as host processes. Admission plugins are on
(``--kube-admission``): kwokctl turns them off by default, which silently disables webhooks.

Every component listens on 127.0.0.1 only: kwokctl's default bind address is 0.0.0.0, which would
put etcd (plain HTTP, no authentication) and the API server on every interface. The address is set
in a KwokctlConfiguration passed with ``--config`` (there is no flag for it in kwokctl v0.8), which
also keeps a user's ``~/.kwok/kwok.yaml`` out. kwokctl runs under umask 077: it writes its PKI keys
with mode 0644, and its files should be this user's alone.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from planb import paths
from planb.local import apiserver as local_apiserver
from planb.local.stack.errors import LocalStackError, ToolMissingError
from planb.process import is_alive, terminate
from planb.statefile import write_atomic

CLUSTER_NAME = "planb"
BINARIES = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "etcd", "kwokctl")
#: The API server's port (kubeconfigs point at https://127.0.0.1:APISERVER_PORT; planb.local.apiserver).
APISERVER_PORT = local_apiserver.PORT
#: The only address the control plane listens on.
BIND_ADDRESS = local_apiserver.ADDRESS
#: Ports of kwokctl's saved configuration (kwok.yaml), by the component that listens on them.
_SAVED_PORTS = {
    "kubeApiserverPort": "kube-apiserver",
    "etcdPort": "etcd",
    "etcdPeerPort": "etcd (peer)",
    "kubeControllerManagerPort": "kube-controller-manager",
    "kubeSchedulerPort": "kube-scheduler",
    "kwokControllerPort": "kwok-controller",
}


#: kwok's default stages (hack/build-tools.sh copies them from the pinned kwok module), in kwokctl's
#: order. Naming any stage in the configuration replaces all of kwokctl's defaults, so all are given.
KWOK_STAGES = (
    "node-initialize.yaml",
    "node-heartbeat-with-lease.yaml",
    "pod-ready.yaml",
    "pod-complete.yaml",
    "pod-delete.yaml",
)
#: The container KubeRay gives a RayJob's submitter pod (K8sJobMode).
SUBMITTER_CONTAINER = "ray-job-submitter"


#: The Go runtime's settings for the control plane's processes, a small control plane's trade of a little
#: CPU for memory. kube-apiserver holds about 200 MiB live once planb's CRDs are in (their schemas, in
#: several forms, are most of it) and lets its heap grow to twice that before it collects (GOGC=100);
#: GOGC=75 collects at one and three quarters. Measured on two cores (docs/benchmarks-history.md, "The local
#: loop"): GOGC=50 took the API server 4 s more CPU to take in the CRDs than 100, and 75 with the CRDs' watch
#: cache off (API_SERVER_ARGS) keeps the idle stack under 1 GiB. A GOMEMLIMIT instead would make the runtime collect
#: without pause once the live heap passes it, as it does when a client first asks for the OpenAPI v2
#: document of all CRDs (helm does, at its first install).
GO_RUNTIME_ENV = {"kube-apiserver": {"GOGC": "75"}}
#: kube-apiserver's flags beyond kwokctl's. `--watch-cache-sizes=RESOURCE#0` turns the watch cache off for
#: one resource (k8s.io/apiserver pkg/server/options/etcd.go, GetRESTOptions: a size of 0 leaves its storage
#: undecorated by a cacher). The cache keeps every CRD decoded, and each of its earlier versions in its event
#: window, about 150 MiB here. CRDs are read rarely after start-up (their informers in the API server and
#: Kueue's start-up probe), so lists and watches of them go to etcd instead; every other resource keeps its cache.
API_SERVER_ARGS = {"watch-cache-sizes": "customresourcedefinitions.apiextensions.k8s.io#0"}


def kwokctl_configuration(*, kwok_crds: bool = True) -> dict[str, Any]:
    """The KwokctlConfiguration planb creates its cluster with.

    kwok-controller also serves pod logs (``--enable-crds=Logs``: a Logs object names the file a pod's log is
    read from; the Ray head stand-in writes its submitter pods', planb.local.rayhead.podlogs). The API server
    fetches a log from one of the node's addresses, at the kubelet port kwok sets to its own server's: kwok's
    node stages give a Hostname from ``--node-name`` (``localhost`` in kwokctl's binary runtime) and an
    InternalIP from ``--node-ip``, which that runtime passes empty. A second ``--node-ip=127.0.0.1`` (the flag
    parser keeps the last) makes the InternalIP loopback too, so whichever address type the API server
    prefers, it stays on this machine.

    Without `kwok_crds` kwokctl installs none of kwok's CRDs (a control plane without kwok-controller, an etcd
    snapshot's: kwokctl's own install of them updates an existing CRD without its resourceVersion and fails, so
    a snapshot must not hold them)."""
    return {
        "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
        "kind": "KwokctlConfiguration",
        "options": {"bindAddress": BIND_ADDRESS, "enableCRDs": ["Logs"] if kwok_crds else []},
        "componentsPatches": [
            *(
                {"name": name, "extraEnvs": [{"name": key, "value": value} for key, value in env.items()]}
                for name, env in GO_RUNTIME_ENV.items()
            ),
            {"name": "kwok-controller", "extraArgs": [{"key": "node-ip", "value": BIND_ADDRESS}]},
            {
                "name": "kube-apiserver",
                "extraArgs": [{"key": key, "value": value} for key, value in API_SERVER_ARGS.items()],
            },
        ],
    }


def kwok_stages(directory: Path | None = None) -> list[dict[str, Any]]:
    """kwok's default stages, but the pod-complete stage leaves RayJob submitter pods running.

    kwok completes every running pod a Job owns at once (its "fast" pod-complete stage). A RayJob's
    submitter pod runs until its Ray job ends, and KubeRay fails a RayJob whose submitter finished
    30 s before its Ray job did; the Ray head stand-in (planb.local.rayhead) ends these pods itself when
    their job ends. Everything else is kwok's stage as shipped (the node heartbeat's 600 s delay is
    already longer than kwokctl's 10 s status frequency, which kwokctl would otherwise raise it to).
    """
    directory = directory or paths.manifests_dir() / "kwok" / "stages"
    stages: list[dict[str, Any]] = []
    for name in KWOK_STAGES:
        path = directory / name
        if not path.is_file():
            raise ToolMissingError(f"kwok's default stage {path} (make tools copies it from the kwok module)")
        stage = yaml.safe_load(path.read_text())
        if stage["metadata"]["name"] == "pod-complete":
            stage["spec"]["selector"]["matchExpressions"].append(
                {"key": ".spec.containers.[].name", "operator": "NotIn", "values": [SUBMITTER_CONTAINER]}
            )
        stages.append(stage)
    return stages


@dataclass(frozen=True)
class ControlPlane:
    """A kwokctl cluster whose work directory lives under planb's state directory."""

    state: Path
    apiserver_port: int = APISERVER_PORT

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

    def _kwokctl(self, *args: str, timeout: float = 300, config: Path | None = None) -> str:
        binary = paths.tool("kwokctl")
        options = [f"--config={config}"] if config is not None else []
        proc = subprocess.run(
            [str(binary), "--name", CLUSTER_NAME, *options, *args],
            env=self._env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            umask=0o077,
        )
        if proc.returncode != 0:
            raise LocalStackError(
                f"kwokctl {' '.join(args[:2])} failed (exit {proc.returncode}):\n{proc.stderr.strip()[-3000:]}"
            )
        return proc.stdout

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
        self, kubeconfig: Path, dry_run: bool = False, *, without: Sequence[str] = (), etcd_from: Path | None = None
    ) -> str:
        """Create and start the cluster, writing an admin kubeconfig to `kubeconfig`.

        `without` names kwokctl components not to run (``--disable``). With `etcd_from`, etcd starts from a copy
        of that data directory (a snapshot: planb.local.stack.snapshot) instead of an empty one; kwokctl's install only
        makes the directory if it is missing. With dry_run, kwokctl only prints the commands it would run (and creates
        nothing); that output is returned.
        """
        self.check_tools()
        kubeconfig.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        configuration = kwokctl_configuration(kwok_crds="kwok-controller" not in without)
        write_atomic(self.config_file, yaml.safe_dump_all([configuration, *kwok_stages()]))
        if etcd_from is not None and not dry_run:
            if self.etcd_dir.exists():
                raise LocalStackError(f"{self.etcd_dir} exists already; a snapshot goes only into a new cluster")
            shutil.copytree(etcd_from, self.etcd_dir)
            self.etcd_dir.chmod(0o700)  # etcd wants its data directory private
        return self._kwokctl(
            *(["--dry-run"] if dry_run else []),
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
            "--wait=120s",
            "--timeout=240s",
            config=self.config_file,
        )

    def start(self) -> None:
        self._kwokctl("start", "cluster", "--wait=120s")

    def saved_options(self) -> dict[str, Any]:
        """The options kwokctl saved for the existing cluster ({} if none or unreadable)."""
        try:
            docs = list(yaml.safe_load_all((self.cluster_dir / "kwok.yaml").read_text()))
        except (OSError, yaml.YAMLError):
            return {}
        for doc in docs:
            if isinstance(doc, dict) and doc.get("kind") == "KwokctlConfiguration":
                options = doc.get("options") or {}
                return dict(options) if isinstance(options, dict) else {}
        return {}

    def ports(self) -> dict[int, str]:
        """The ports the control plane will listen on: the saved ones, or the API port of a new cluster
        (kwokctl picks the others from free ports when it creates the cluster)."""
        if not self.exists():
            return {self.apiserver_port: "kube-apiserver"}
        options = self.saved_options()
        out: dict[int, str] = {}
        for key, component in _SAVED_PORTS.items():
            port = options.get(key)
            if isinstance(port, int) and port > 0:
                out[port] = component
        return out or {self.apiserver_port: "kube-apiserver"}

    def bind_address(self) -> str:
        """The address the existing cluster's components bind (kwokctl's default is 0.0.0.0)."""
        return str(self.saved_options().get("bindAddress") or "0.0.0.0")

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
        out: dict[str, int] = {}
        pids = self.cluster_dir / "pids"
        if not pids.is_dir():
            return out
        for f in sorted(pids.glob("*.pid")):
            try:
                pid = int(f.read_text().strip())
            except ValueError:
                continue
            if is_alive(pid) and self._runs_our_binary(pid):
                out[f.stem] = pid
        return out

    def _runs_our_binary(self, pid: int) -> bool:
        """kwokctl's pid files carry no start time: check the executable is one of ours instead."""
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            return False
        roots = (str(self.cluster_dir.resolve()), str((paths.tools_dir() / "bin").resolve()))
        return exe.startswith(roots)
