# planb.gke: the GKE version a node pool needs of its cluster.
"""What a node pool of a TPU machine type needs of its cluster's GKE version: the generation's oldest for node pools
(TPU7x: 1.34.0-gke.2201000) and TPU flex-start's. validate.py checks them against the cluster_version option before
any API call, node_pool.py against the cluster GKE returns. The versions are ``versions``' (planb's catalog)."""

from __future__ import annotations

from typing import Any

from ansible_collections.planb.gke.plugins.module_utils._generated.machine_types import FACTS as MACHINE_TYPES
from ansible_collections.planb.gke.plugins.module_utils._generated.versions import (
    TPU_FLEX_START_MIN,
    TPU_MIN_VERSION,
    version_at_least,
    version_text,
)


def _tpu(machine_type: str | None) -> dict[str, Any] | None:
    facts = MACHINE_TYPES.get(machine_type or "")
    return facts if facts is not None and facts["kind"] == "tpu" else None


def tpu_version_problem(machine_type: str | None, version: str | None) -> str | None:
    """Why a pool of ``machine_type`` cannot join a cluster of ``version``: older than GKE's oldest for its TPU
    generation's node pools. None when it can, or when either is not known."""
    facts = _tpu(machine_type)
    minimum = TPU_MIN_VERSION.get(facts["generation"]) if facts else None
    if facts is None or minimum is None or not version or version_at_least(version, minimum[0]):
        return None
    return (
        f"TPU {facts['generation']} node pools need GKE {version_text(minimum[0])} or later, "
        f"the cluster version is {version} ({minimum[1]})"
    )


def flex_start_version_problem(machine_type: str | None, flex_start: bool | None, version: str | None) -> str | None:
    """Why a flex-start pool of TPU ``machine_type`` cannot join a cluster of ``version`` (older than TPU flex-start's
    oldest). None when it can, or when it is no TPU flex-start pool or the version is not known."""
    if not flex_start or _tpu(machine_type) is None or not version or version_at_least(version, TPU_FLEX_START_MIN):
        return None
    return f"TPU flex_start needs GKE {version_text(TPU_FLEX_START_MIN)} or later, the cluster version is {version}"
