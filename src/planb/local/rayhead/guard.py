"""The Ray head stand-in runs against the local stack's API server and nothing else.

It writes pod statuses (the submitter pods') and, for `run` payloads, executes what it reads from the
cluster on this machine, so a kubeconfig pointing elsewhere (a GKE cluster's, a colleague's) must never
get as far as its first request. `planb local up` starts it with the local stack's kubeconfig and API
server port (planb.local.stack.parts); the kubeconfig's current server must be
``https://127.0.0.1:<that port>``, the one address the stack's API server listens on
(planb.local.stack.control_plane's bind address) and the one kwokctl writes into the kubeconfig
(kubernetes-sigs/kwok pkg/kwokctl/runtime/binary/cluster_setup.go, finishInstall: the scheme,
utilsnet.LocalAddress and the API server port).
"""

from __future__ import annotations

from pathlib import Path

from planb.local.apiserver import NotLocalStackError, require_local

__all__ = ["NotLocalStackError", "require_local_apiserver"]

REASON = "it writes pod statuses and runs job payloads on this machine from what it reads"


def require_local_apiserver(path: Path, port: int) -> str:
    """The kubeconfig's server when it is the local stack's API server; refused otherwise (planb's policy)."""
    return require_local(path, "The Ray head stand-in", REASON, port)
