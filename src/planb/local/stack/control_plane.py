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
(planb.tls.ensure_etcd_pki; the keys 0600 in the cluster's directory, inside the 0700 state directory), and
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
import socket
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from planb import paths
from planb.local import apiserver as local_apiserver
from planb.local.stack.errors import LocalStackError, ToolMissingError
from planb.process import is_alive, terminate
from planb.statefile import write_atomic
from planb.tls import ETCD_NAME, EtcdPKI, ensure_etcd_pki, private_dir

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


#: etcd's certificates (planb.tls.ensure_etcd_pki), in the cluster's directory inside the state directory: they live
#: and go with the cluster (kwokctl's delete and `planb local down` remove that directory), a new cluster gets a new CA.
ETCD_PKI_DIR = "etcd-pki"
#: The etcd member's name (kwokctl's ``--name=node0``), which ``--initial-cluster`` names.
ETCD_MEMBER = "node0"
#: The control plane's ports but the API server's are the first free ones below this, downwards, as kwokctl picks them
#: (pkg/utils/net/unused_port.go): below Linux's ephemeral range, so no outgoing connection holds one at a restart.
PORTS_BELOW = 32767
#: The options of the ports kwokctl would otherwise pick (pkg/kwokctl/runtime/binary: setupPorts), etcd's first.
PICKED_PORTS = ("etcdPort", "etcdPeerPort", "kwokControllerPort", "kubeControllerManagerPort", "kubeSchedulerPort")


@dataclass(frozen=True)
class EtcdEndpoint:
    """Where etcd listens (its client and peer ports, on BIND_ADDRESS) and the certificates it and its client use."""

    pki: EtcdPKI
    port: int
    peer_port: int

    @property
    def client_url(self) -> str:
        return f"https://{BIND_ADDRESS}:{self.port}"

    @property
    def peer_url(self) -> str:
        return f"https://{BIND_ADDRESS}:{self.peer_port}"


#: The endpoint the snapshot's key is computed with: a configuration's flags apart from one cluster's paths and ports.
RECIPE_ETCD = EtcdEndpoint(EtcdPKI(Path("/CLUSTER") / ETCD_PKI_DIR), 0, 0)


def _arg(key: str, value: str, *, override: bool = False) -> dict[str, Any]:
    return {"key": key, "value": value, **({"override": True} if override else {})}


def etcd_tls_args(etcd: EtcdEndpoint) -> dict[str, list[dict[str, Any]]]:
    """The extraArgs that put etcd's listeners on TLS with client certificates, by component.

    kwokctl's own URL flags are replaced (``override``); the rest are added after kwokctl's flags. The peer
    listener (one member, so no peer ever connects) is TLS too, with a client certificate of etcd's own name:
    on plain http any local user could send raft messages to it."""
    pki = etcd.pki
    return {
        "etcd": [
            _arg("listen-client-urls", etcd.client_url, override=True),
            _arg("advertise-client-urls", etcd.client_url, override=True),
            _arg("listen-peer-urls", etcd.peer_url, override=True),
            _arg("initial-advertise-peer-urls", etcd.peer_url, override=True),
            _arg("initial-cluster", f"{ETCD_MEMBER}={etcd.peer_url}", override=True),
            _arg("client-cert-auth", "true"),
            _arg("trusted-ca-file", str(pki.ca_crt)),
            _arg("cert-file", str(pki.server_crt)),
            _arg("key-file", str(pki.server_key)),
            _arg("peer-client-cert-auth", "true"),
            _arg("peer-trusted-ca-file", str(pki.ca_crt)),
            _arg("peer-cert-file", str(pki.server_crt)),
            _arg("peer-key-file", str(pki.server_key)),
            _arg("peer-cert-allowed-cn", ETCD_NAME),
        ],
        "kube-apiserver": [
            _arg("etcd-servers", etcd.client_url, override=True),
            _arg("etcd-cafile", str(pki.ca_crt)),
            _arg("etcd-certfile", str(pki.client_crt)),
            _arg("etcd-keyfile", str(pki.client_key)),
        ],
    }


def configuration_recipe(*, kwok_crds: bool = True) -> dict[str, Any]:
    """The configuration with RECIPE_ETCD: what an etcd snapshot's key holds of it (planb.local.stack.snapshot)."""
    return kwokctl_configuration(RECIPE_ETCD, kwok_crds=kwok_crds)


def unused_ports(count: int, *, below: int = PORTS_BELOW, exclude: Sequence[int] = ()) -> list[int]:
    """`count` ports nothing listens on, on loopback or any address, the highest first below `below` (kwokctl's way;
    another process may take one before etcd binds it, as with kwokctl's own choice)."""
    found: list[int] = []
    port = below
    while len(found) < count and port > 10000:
        port -= 1
        if port not in exclude and _port_unused(port):
            found.append(port)
    if len(found) < count:
        raise LocalStackError(f"no {count} free ports for the control plane below {below}")
    return found


def _port_unused(port: int) -> bool:
    for host in (BIND_ADDRESS, ""):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((host, port))
            except OSError:
                return False
    return True


def kwokctl_configuration(
    etcd: EtcdEndpoint, *, kwok_crds: bool = True, ports: Mapping[str, int] | None = None
) -> dict[str, Any]:
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
    a snapshot must not hold them).

    etcd listens at `etcd` with TLS and client certificates (etcd_tls_args); `ports` sets the other components' ports
    (options named in PICKED_PORTS)."""
    tls = etcd_tls_args(etcd)
    return {
        "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
        "kind": "KwokctlConfiguration",
        "options": {
            "bindAddress": BIND_ADDRESS,
            "enableCRDs": ["Logs"] if kwok_crds else [],
            **(ports or {}),
            "etcdPort": etcd.port,
            "etcdPeerPort": etcd.peer_port,
        },
        "componentsPatches": [
            *(
                {"name": name, "extraEnvs": [{"name": key, "value": value} for key, value in env.items()]}
                for name, env in GO_RUNTIME_ENV.items()
            ),
            {"name": "etcd", "extraArgs": tls["etcd"]},
            {"name": "kwok-controller", "extraArgs": [{"key": "node-ip", "value": BIND_ADDRESS}]},
            {
                "name": "kube-apiserver",
                "extraArgs": [
                    *({"key": key, "value": value} for key, value in API_SERVER_ARGS.items()),
                    *tls["kube-apiserver"],
                ],
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
        if not dry_run:
            for directory in (self.workdir, self.workdir / "clusters", self.cluster_dir):
                private_dir(directory)  # as kwokctl makes them under umask 077
        pki = self.etcd_pki if dry_run else ensure_etcd_pki(self.etcd_pki.directory)
        picked = dict(zip(PICKED_PORTS, unused_ports(len(PICKED_PORTS), exclude=(self.apiserver_port,)), strict=True))
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
        out = self._kwokctl(
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
        if not dry_run and not self.etcd_secured():
            # A kwokctl that no longer has a flag an override names drops the override with a warning only.
            self.delete()
            raise LocalStackError(
                "kwokctl did not start etcd on https with client certificates (its saved etcd flags lack them), so "
                "the cluster was deleted: the pinned kwokctl and planb.local.stack.control_plane disagree"
            )
        return out

    @property
    def etcd_pki(self) -> EtcdPKI:
        """etcd's CA and certificates, and the API server's client certificate, in the cluster's directory."""
        return EtcdPKI(self.cluster_dir / ETCD_PKI_DIR)

    def start(self) -> None:
        """Start the existing cluster's stopped components; etcd's certificates renewed first when due (every
        component stopped before, so etcd and the API server start with the same new CA)."""
        if self.etcd_secured() and self.etcd_pki.needs_renewal():
            if self.component_pids():
                self._kwokctl("stop", "cluster", timeout=120)
            ensure_etcd_pki(self.etcd_pki.directory)
        self._kwokctl("start", "cluster", "--wait=120s")

    def etcd_secured(self) -> bool:
        """The existing cluster's etcd requires client certificates on https (a cluster created by an older planb
        runs it on plain http, open to every local user, until it is deleted and created again)."""
        args = self._saved_args("etcd")
        return "--client-cert-auth=true" in args and not any(
            arg.startswith("--listen-client-urls=http://") for arg in args
        )

    def _saved_args(self, component: str) -> list[str]:
        """A component's arguments as kwokctl saved them for the existing cluster ([] if none or unreadable)."""
        try:
            docs = list(yaml.safe_load_all((self.cluster_dir / "kwok.yaml").read_text()))
        except (OSError, yaml.YAMLError):
            return []
        for doc in docs:
            if isinstance(doc, dict) and doc.get("kind") == "KwokctlConfiguration":
                for item in doc.get("components") or []:
                    if isinstance(item, dict) and item.get("name") == component:
                        return [str(arg) for arg in item.get("args") or []]
        return []

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
