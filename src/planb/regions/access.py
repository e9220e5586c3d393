"""Reaching a region from the manager with the kubeconfig its MultiKueueCluster names (Kueue's own access).

Each region is a MultiKueueCluster on the manager whose ``spec.clusterSource.kubeConfig`` names a Secret in Kueue's
namespace (key ``kubeconfig``) or a file (Kueue v0.19.2, apis/kueue/v1beta2/multikueue_types.go#L58-L112). planb's
``multikueue`` role writes the Secret: a ServiceAccount token with MultiKueue's rights there (workloads, rayjobs,
rayclusters), CA inline. planb reads and deletes with exactly those rights, never more.
"""

from __future__ import annotations

import base64
import tempfile
from pathlib import Path

from planb.errors import UnreachableError
from planb.kube import Kube, KubeError, Obj

KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
#: Kueue's namespace on the manager, where the MultiKueueClusters' Secrets live (its configuration's `namespace`).
KUEUE_NAMESPACE = "kueue-system"


class RegionAccessError(UnreachableError):
    """The manager holds no usable kubeconfig for a region, or the region does not answer."""


def kubeconfig_source(cluster: Obj) -> tuple[str, str]:
    """A MultiKueueCluster's (locationType, location): ("Secret", name) or ("Path", file).

    Kueue takes exactly one of ``kubeConfig`` and ``clusterProfileRef`` (apis/kueue/v1beta2/multikueue_types.go#L82).
    planb's policy: a region reached through a ClusterProfile is refused by name, because planb's roles write only
    kubeconfig Secrets and planb does not read ClusterProfiles."""
    cluster_source = (cluster.get("spec") or {}).get("clusterSource") or {}
    name = str((cluster.get("metadata") or {}).get("name", ""))
    if cluster_source.get("clusterProfileRef") and not cluster_source.get("kubeConfig"):
        raise RegionAccessError(
            f"MultiKueueCluster {name} uses clusterProfileRef, which planb cannot read: give it a kubeConfig Secret "
            "(the planb.gke multikueue role writes one per region)"
        )
    source = cluster_source.get("kubeConfig") or {}
    return str(source.get("locationType") or "Secret"), str(source.get("location") or "")


def region_kube(manager: Kube, region: str) -> Kube:
    """A client for `region`, with the kubeconfig its MultiKueueCluster names (raises RegionAccessError)."""
    try:
        cluster = manager.get(f"{KUEUE}/multikueueclusters/{region}")
        if cluster is None:
            raise RegionAccessError(f"no MultiKueueCluster {region} on the manager")
        kind, location = kubeconfig_source(cluster)
        if kind == "Path":
            return Kube(Path(location))
        secret = manager.get(f"/api/v1/namespaces/{KUEUE_NAMESPACE}/secrets/{location}") if location else None
        data = ((secret or {}).get("data") or {}).get("kubeconfig")
        if not data:
            raise RegionAccessError(f"no kubeconfig Secret for {region} on the manager ({KUEUE_NAMESPACE}/{location})")
        # Kube reads the file (and writes its inline CA and keys to private files) when it is made.
        with tempfile.TemporaryDirectory(prefix="planb-region-") as folder:
            path = Path(folder) / "kubeconfig"
            path.write_bytes(base64.b64decode(data))
            path.chmod(0o600)
            return Kube(path)
    except KubeError as exc:
        raise RegionAccessError(f"{region}: {exc}") from exc
    except (OSError, ValueError) as exc:
        raise RegionAccessError(f"{region}: its kubeconfig cannot be used: {exc}") from exc
