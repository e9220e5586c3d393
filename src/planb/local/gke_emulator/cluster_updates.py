"""A cluster's in-place changes as GKE applies them: ClusterUpdate's ``desired*`` fields (clusters.update) and
clusters.setResourceLabels with its label fingerprint.

* ClusterUpdate (https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/ClusterUpdate): each ``desired*``
  field replaces the cluster's field of the same meaning; ``desiredMasterVersion`` is resolved as a create's version
  is (``gke_emulator.upgrades``) and makes the operation an ``UPGRADE_MASTER``.
* clusters.setResourceLabels (https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters/setResourceLabels):
  ``SetLabelsRequest.resourceLabels`` replaces the whole map, and ``labelFingerprint`` is "the fingerprint of the
  previous set of labels for this resource, used to detect conflicts" (the container v1 discovery document), which
  the cluster reads back as ``Cluster.labelFingerprint``. Google documents neither how it computes the fingerprint
  nor its answer to a stale one: the emulator's fingerprint is a hash of the sorted map and a stale one is answered
  400 FAILED_PRECONDITION (docs/local-mode.md, "Every known difference from Google").
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from planb.local.gke_emulator.errors import ApiError
from planb.local.gke_emulator.upgrades import resolve_version

Body = dict[str, Any]

#: ClusterUpdate's fields the emulator applies, each to the Cluster field it replaces whole.
REPLACED = {
    "desiredShieldedNodes": "shieldedNodes",
    "desiredWorkloadIdentityConfig": "workloadIdentityConfig",
    # No release channel's versions are modelled: the channel is recorded.
    "desiredReleaseChannel": "releaseChannel",
    # GKE cost allocation (https://cloud.google.com/kubernetes-engine/docs/how-to/cost-allocations).
    "desiredCostManagementConfig": "costManagementConfig",
    # https://cloud.google.com/kubernetes-engine/docs/how-to/authorized-networks
    "desiredMasterAuthorizedNetworksConfig": "masterAuthorizedNetworksConfig",
}


def apply_update(cluster: Body, update: Body) -> str:
    """ClusterUpdate ``update`` applied to ``cluster`` (in place); the operation's type."""
    op_type = "UPDATE_CLUSTER"
    if "desiredAddonsConfig" in update:
        cluster.setdefault("addonsConfig", {}).update(update["desiredAddonsConfig"])
    if "desiredGcfsConfig" in update:
        defaults = cluster.setdefault("nodePoolDefaults", {}).setdefault("nodeConfigDefaults", {})
        defaults["gcfsConfig"] = update["desiredGcfsConfig"]
    for field, target in REPLACED.items():
        if field in update:
            cluster[target] = dict(update[field] or {})
    if "desiredMasterVersion" in update:
        cluster["currentMasterVersion"] = resolve_version(update["desiredMasterVersion"])
        op_type = "UPGRADE_MASTER"
    return op_type


def label_fingerprint(labels: Body | None) -> str:
    """The emulator's ``labelFingerprint`` of a label map (16 hex digits of its sorted JSON's SHA-256)."""
    return hashlib.sha256(json.dumps(labels or {}, sort_keys=True).encode()).hexdigest()[:16]


def set_resource_labels(cluster: Body, request: Body) -> None:
    """SetLabelsRequest ``request`` applied to ``cluster`` (in place); a stale fingerprint is refused."""
    have = cluster.get("labelFingerprint") or label_fingerprint(cluster.get("resourceLabels"))
    given = str(request.get("labelFingerprint") or "")
    if given != have:
        raise ApiError(
            400,
            f"Label fingerprint {given!r} does not match the cluster's {have!r}: its labels changed since they were "
            "read. Read the cluster again and resend.",
            "FAILED_PRECONDITION",
        )
    labels = dict(request.get("resourceLabels") or {})
    cluster["resourceLabels"] = labels
    cluster["labelFingerprint"] = label_fingerprint(labels)
