"""Cluster versions in the local GKE API: what a requested version resolves to, and GKE's own upgrade.

A cluster's version is asked for as a prefix ("1.34") or in full; ``resolve_version`` gives the concrete one.
``auto_upgrade`` is the emulator-only switch that stands for GKE upgrading a release channel's cluster by itself.
"""

from __future__ import annotations

from typing import Any

from planb.local.gke_emulator import rules
from planb.local.gke_emulator.errors import ApiError
from planb.local.gke_emulator.store import Store

Body = dict[str, Any]

#: What a version prefix resolves to when a cluster is created ("1.34" -> newest 1.34 patch).
NEWEST_PATCH = {32: "1.32.9-gke.1108000", 33: "1.33.5-gke.1308000", 34: "1.34.1-gke.1829001", 35: "1.35.0-gke.1215000"}
LATEST_MINOR = 34


def resolve_version(version: str | None) -> str:
    """The concrete version a cluster gets for a requested version (prefix or full)."""
    if not version or version in ("latest", "-"):
        return NEWEST_PATCH[LATEST_MINOR]
    parsed = rules.parse_version(version)
    if parsed is None:
        raise ApiError(400, f"Version {version!r} is invalid.")
    if len(parsed) >= 3:
        return version if len(parsed) == 4 else f"{version}-gke.1000000"
    if parsed[0] != 1 or parsed[1] not in NEWEST_PATCH:
        raise ApiError(400, f"Master version {version!r} is unsupported.")
    return NEWEST_PATCH[parsed[1]]


def auto_upgrade(store: Store, request: Body) -> Body:
    """GKE's own upgrade of a cluster on a release channel (emulator-only switch, ``POST /planb/v1/upgrades``).

    GKE upgrades a channel's clusters by itself, the control plane first and then the nodes
    (https://cloud.google.com/kubernetes-engine/docs/concepts/release-channels, "What versions are available in a
    channel"; https://cloud.google.com/kubernetes-engine/docs/concepts/cluster-upgrades), and never downgrades
    one: a version older than the cluster's is refused (400). A pool whose
    ``maintenancePolicy.exclusionUntilEndOfSupport`` is enabled keeps its nodes' version (container v1
    NodePoolMaintenancePolicy; https://cloud.google.com/kubernetes-engine/docs/concepts/maintenance-windows-and-exclusions).
    Which versions a channel offers on which date is not modelled: the switch stands for an upgrade GKE made
    later, to the version named.
    """
    name = str(request.get("cluster") or "")
    cluster = store.clusters.get(name)
    if cluster is None:
        raise ApiError(404, f"Not found: {name}.")
    version = resolve_version(str(request.get("version") or ""))
    have, want = rules.parse_version(cluster["currentMasterVersion"]), rules.parse_version(version)
    if have is None or want is None or want <= have:
        raise ApiError(400, f"Cannot upgrade {name} from {cluster['currentMasterVersion']} to {version}.")
    cluster["currentMasterVersion"] = cluster["currentNodeVersion"] = version
    for key, pool in store.node_pools.items():
        excluded = ((pool.get("maintenancePolicy") or {}).get("exclusionUntilEndOfSupport") or {}).get("enabled")
        if key.startswith(name + "/") and not excluded:
            pool["version"] = version
    store.save()
    return {"cluster": name, "currentMasterVersion": version}
