"""Where the local stack's API server listens, and the guard of the processes that may act only on it.

The capacity simulator (and likewise the Ray head stand-in and the failover controller's local mode)
writes what only Google's services write on GKE: nodes, ProvisioningRequest states, a mutating pod
webhook. Pointed at a real cluster by a stray ``--kubeconfig`` or ``KUBECONFIG``, it would delete nodes
and answer real requests. `require_local` refuses to start unless the kubeconfig's current context names
the local stack's API server: ``https://127.0.0.1:PORT``, the loopback address and port the control plane
is started with (planb.local.stack.control_plane takes both from here), as kwokctl writes it into the
stack's kubeconfig (kwok v0.8.0 pkg/kwokctl/runtime/binary/cluster_context.go: the scheme, 127.0.0.1 and
the kube-apiserver port).

The refusal is planb's policy, not GKE's: GKE has no such rule.
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path

from planb import kubeconfig
from planb.errors import PlanbError
from planb.local import loopback

#: The only address the local control plane listens on.
ADDRESS = "127.0.0.1"
#: The local API server's port (kubeconfigs point at https://ADDRESS:PORT); PLANB_PORT_OFFSET moves it
#: (planb.local.loopback).
PORT = loopback.port(26443)
SERVER = f"https://{ADDRESS}:{PORT}"


class NotLocalStackError(PlanbError):
    """A local-only component was given a kubeconfig whose server is not the local stack's API server."""


#: Why the capacity simulator may act on the local stack only (each component passes its own reason).
SIMULATOR_REASON = (
    "it writes what only Google's services write on GKE (nodes, ProvisioningRequest states, pod webhooks) and must "
    "never act on another cluster"
)


def require_local(config: Path, component: str, because: str = SIMULATOR_REASON, port: int = PORT) -> str:
    """The kubeconfig's server if it is the local stack's API server (``https://ADDRESS:port``); else
    NotLocalStackError naming `component` and planb's reason, `because`."""
    server = kubeconfig.load(config).server
    try:
        parts = urllib.parse.urlsplit(server)
        same = (parts.scheme, parts.hostname, parts.port, parts.path.rstrip("/")) == ("https", ADDRESS, port, "")
    except ValueError:  # a port that is not a number
        same = False
    if not same or parts.username is not None or parts.query or parts.fragment:
        raise NotLocalStackError(
            f"{component} refuses to start: {config}'s server is {server!r}, not the local stack's API server "
            f"https://{ADDRESS}:{port}; planb's policy, because {because}. Fix: give the local stack's kubeconfig "
            "(planb local up writes it under .state/local)"
        )
    return server
