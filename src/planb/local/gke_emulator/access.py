"""How a client reaches a RUNNING cluster: the ``endpoint`` and ``masterAuth.clusterCaCertificate`` it reads.

GKE's v1 discovery document (container.v1.json, as google-api-python-client ships it) calls
``Cluster.endpoint`` "the IP address of this cluster's master endpoint" and
``MasterAuth.clusterCaCertificate`` the "Base64-encoded public certificate that is the root of trust for the
cluster"; both are output only, and a client such as ``gcloud container clusters get-credentials`` writes them
into a kubeconfig (``server: https://<endpoint>``, ``certificate-authority-data``).

Every emulated cluster stands for the one local API server, so each reads:

* while the local stack's kubeconfig exists: its current context's server (``host:port``, the scheme dropped)
  and its CA, whether the kubeconfig carries the CA as ``certificate-authority-data`` or names a file in
  ``certificate-authority`` (as kwokctl writes it), read again whenever either file changed (its size, change time
  or inode): the capacity simulator's clusters.list twice a second parsed the kubeconfig's YAML each time, a third
  of the idle emulator's CPU;
* otherwise: the address the local stack's API server listens on (``LOCAL_APISERVER``) and a CA the emulator
  makes once and keeps in its state directory (``<state>/gke-emulator/cluster-ca/ca.crt``, made by
  ``planb.local.tls.ensure_serving_cert``, whose serving pair nothing serves), so a RUNNING cluster always has both,
  as on GKE.

The endpoint carries a port, which GKE's never does (GKE serves on 443).
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from planb.local import apiserver as local_apiserver
from planb.local.tls import ensure_serving_cert

#: Where the local stack's API server listens (``planb.local.apiserver``, which the control plane starts it on;
#: PLANB_PORT_OFFSET moves it).
LOCAL_APISERVER = f"{local_apiserver.ADDRESS}:{local_apiserver.PORT}"


@dataclass(frozen=True)
class ClusterAccess:
    """A cluster's ``endpoint`` (host:port) and its base64 PEM CA, as GKE's Cluster body carries them."""

    endpoint: str
    ca_data: str


def _current_cluster(doc: Any) -> dict[str, Any] | None:
    """The cluster entry the kubeconfig's current context names (the first one when no context says)."""
    if not isinstance(doc, dict):
        return None
    clusters = [c for c in doc.get("clusters") or [] if isinstance(c, dict)]
    name = None
    for context in doc.get("contexts") or []:
        if isinstance(context, dict) and context.get("name") == doc.get("current-context"):
            name = (context.get("context") or {}).get("cluster")
    chosen = next((c for c in clusters if c.get("name") == name), clusters[0] if clusters else None)
    entry = (chosen or {}).get("cluster")
    return entry if isinstance(entry, dict) else None


#: Each file's size, change time and inode ((-1, -1, -1) while it is missing): what a write of it changes.
Stamp = tuple[int, int, int]
#: The last read of each kubeconfig: the stamps of it and of the CA file it named, the CA file, what they gave.
_READS: dict[Path, tuple[Stamp, Stamp, Path | None, ClusterAccess | None]] = {}


def _stamp(file: Path | None) -> Stamp:
    try:
        found = file.stat() if file is not None else None
    except OSError:
        found = None
    return (found.st_size, found.st_ctime_ns, found.st_ino) if found is not None else (-1, -1, -1)


def from_kubeconfig(kubeconfig: Path) -> ClusterAccess | None:
    """The local stack's server and CA from its kubeconfig; None while it does not exist or names neither. Read again
    only when the kubeconfig or the CA file it names changed since the last read (each stamped before it is read)."""
    last = _READS.get(kubeconfig)
    if last is not None and last[0] == _stamp(kubeconfig) and last[1] == _stamp(last[2]):
        return last[3]
    stamp = _stamp(kubeconfig)
    ca_file, ca_stamp, access = None, _stamp(None), None
    try:
        cluster = _current_cluster(yaml.safe_load(kubeconfig.read_text()))
    except (OSError, yaml.YAMLError):
        cluster = None
    if cluster and cluster.get("server"):
        if not cluster.get("certificate-authority-data") and cluster.get("certificate-authority"):
            ca_file = Path(str(cluster["certificate-authority"]))
            ca_file = ca_file if ca_file.is_absolute() else kubeconfig.parent / ca_file
            ca_stamp = _stamp(ca_file)
        access = _access(cluster, ca_file)
    _READS[kubeconfig] = (stamp, ca_stamp, ca_file, access)
    return access


def _access(cluster: dict[str, Any], ca_file: Path | None) -> ClusterAccess:
    """The endpoint and CA of the kubeconfig's cluster entry (its CA read from `ca_file` when it names one)."""
    endpoint = re.sub(r"^https?://", "", str(cluster["server"])).rstrip("/")
    ca_data = str(cluster.get("certificate-authority-data") or "")
    if ca_file is not None:
        try:
            ca_data = base64.b64encode(ca_file.read_bytes()).decode()
        except OSError:
            ca_data = ""
    return ClusterAccess(endpoint, ca_data)


def emulator_ca(emulator_root: Path) -> str:
    """The base64 PEM of the CA the emulator keeps under its state folder (made on first use, renewed near expiry)."""
    cert = ensure_serving_cert(emulator_root / "cluster-ca", common_name="planb-gke-emulator")
    return base64.b64encode(cert.ca_crt.read_bytes()).decode()


def cluster_access(kubeconfig: Path, emulator_root: Path) -> ClusterAccess:
    """What every RUNNING cluster reads: the local stack's while it exists, else LOCAL_APISERVER and our CA."""
    local = from_kubeconfig(kubeconfig)
    return local if local is not None else ClusterAccess(LOCAL_APISERVER, emulator_ca(emulator_root))
