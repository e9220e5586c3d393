"""kwokctl's configuration for planb's control plane: every component on loopback, etcd behind client-certificate
TLS, the ports planb picks, the API server's flags and kwok's stages (planb.local.stack.control_plane runs it)."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from planb import paths
from planb.local import apiserver as local_apiserver
from planb.local import loopback
from planb.local.stack.errors import LocalStackError, ToolMissingError
from planb.local.tls import ETCD_NAME, EtcdPKI

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
#: A GOGC in the environment wins (the other components inherit it anyway): `make test` sets one, because there two
#: loaded cores, not memory, are what is short (hack/test.sh).
GO_RUNTIME_ENV = {"kube-apiserver": {"GOGC": os.environ.get("GOGC", "").strip() or "75"}}
#: kube-apiserver's flags beyond kwokctl's. `--watch-cache-sizes=RESOURCE#0` turns the watch cache off for
#: one resource (k8s.io/apiserver pkg/server/options/etcd.go, GetRESTOptions: a size of 0 leaves its storage
#: undecorated by a cacher). The cache keeps every CRD decoded, and each of its earlier versions in its event
#: window, about 150 MiB here. CRDs are read rarely after start-up (their informers in the API server and
#: Kueue's start-up probe), so lists and watches of them go to etcd instead; every other resource keeps its cache.
API_SERVER_ARGS = {"watch-cache-sizes": "customresourcedefinitions.apiextensions.k8s.io#0"}
#: The components that run once per local stack and so elect no leader (``--leader-elect=false``; both default to
#: true, k8s.io/component-base config/v1alpha1 RecommendedDefaultLeaderElectionConfiguration). On two loaded cores a
#: lease renewal can miss its 10 s deadline; the controller-manager then exits ("leaderelection lost") and, until
#: kwokctl restarts it, nothing garbage-collects, which made resets in the e2e tests time out. Kueue already runs
#: without election here (planb.local.stack.kueue).
SINGLE_INSTANCE = ("kube-controller-manager", "kube-scheduler")


#: etcd's certificates (planb.local.tls.ensure_etcd_pki), in the cluster's directory inside the state directory:
#: they live and go with the cluster (kwokctl's delete and `planb local down` remove that directory), a new cluster
#: gets a new CA.
ETCD_PKI_DIR = "etcd-pki"
#: The etcd member's name (kwokctl's ``--name=node0``), which ``--initial-cluster`` names.
ETCD_MEMBER = "node0"
#: The control plane's ports but the API server's are the first free ones below this, downwards, as kwokctl picks them
#: (pkg/utils/net/unused_port.go): below Linux's ephemeral range, so no outgoing connection holds one at a restart.
#: PLANB_PORT_OFFSET moves the start down (planb.local.loopback): two stacks started at once do not race for one port.
PORTS_BELOW = 32767 - loopback.offset()
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
            *({"name": name, "extraArgs": [{"key": "leader-elect", "value": "false"}]} for name in SINGLE_INSTANCE),
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
