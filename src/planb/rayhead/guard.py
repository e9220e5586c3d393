"""The Ray head stand-in runs against the local stack's API server and nothing else.

It writes pod statuses (the submitter pods') and, for `run` payloads, executes what it reads from the
cluster on this machine, so a kubeconfig pointing elsewhere (a GKE cluster's, a colleague's) must never
get as far as its first request. `planb local up` starts it with the local stack's kubeconfig and API
server port (planb.localstack.parts); the kubeconfig's current server must be
``https://127.0.0.1:<that port>``, the one address the stack's API server listens on
(planb.localstack.control_plane's bind address) and the one kwokctl writes into the kubeconfig
(kubernetes-sigs/kwok pkg/kwokctl/runtime/binary/cluster_setup.go, finishInstall: the scheme,
utilsnet.LocalAddress and the API server port).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from planb import kubeconfig
from planb.errors import PlanbError

#: The local stack's API server listens on this address only (planb.localstack.control_plane.BIND_ADDRESS).
LOCAL_HOST = "127.0.0.1"


class NotLocalStackError(PlanbError):
    """The kubeconfig points at another API server than the local stack's."""


def require_local_apiserver(path: Path, port: int) -> str:
    """The kubeconfig's server when it is the local stack's API server; refused otherwise."""
    server = kubeconfig.load(path).server
    url = urlsplit(server)
    try:
        ours = url.scheme == "https" and url.hostname == LOCAL_HOST and url.port == port
    except ValueError:  # a port that is not a number
        ours = False
    if not ours:
        raise NotLocalStackError(
            f"planb's policy: the Ray head stand-in serves the local stack only, because it writes pod statuses "
            f"and runs job payloads on this machine from what it reads; the kubeconfig {path} points at "
            f"{server}, not the local stack's API server https://{LOCAL_HOST}:{port}. "
            "Fix: let 'planb local up' start it (with .state/local/kubeconfig)"
        )
    return server
