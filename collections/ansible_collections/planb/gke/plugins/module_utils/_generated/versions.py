# Generated: a copy of src/planb/catalog/versions.py made by `make values`. Do not edit:
# change that file and regenerate; tests/unit/catalog/test_collection_facts.py fails when this is stale.
"""GKE versions: how one is read and compared with a minimum, and the minimums GKE documents for TPU node pools.

A GKE version is ``major.minor``, ``major.minor.patch`` or ``major.minor.patch-gke.N`` (1.34, 1.34.1,
1.34.1-gke.1829001: https://cloud.google.com/kubernetes-engine/versioning). A shorter version stands for
its newest release, so 1.34 is at least 1.34.0-gke.2201000.

This file is the one hand-written copy of these rules. The GKE emulator (``planb.local.gke_emulator.rules``)
imports it; ``make values`` copies it verbatim into the planb.gke collection
(``plugins/module_utils/_generated/versions.py``), whose input validation uses the copy, so it imports nothing but the
standard library.
"""

from __future__ import annotations

import re

#: GKE's Ironwood (TPU7x) page: "Ironwood (TPU7x) is available in GKE Standard clusters that run version
#: 1.34.0-gke.2201000 and later"; also the workload policy that replaces --tpu-topology.
DOC_IRONWOOD = "https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood"
#: GKE's TPU flex-start page: the oldest version whose TPU node pools may use flex-start.
DOC_TPU_FLEX = "https://cloud.google.com/kubernetes-engine/docs/how-to/tpu-flex-start"
#: GKE version from which TPU node pools may use flex-start (DOC_TPU_FLEX).
TPU_FLEX_START_MIN = (1, 33, 0, 1712000)
#: TPU generation -> (oldest GKE version whose Standard clusters run its node pools, the page that says so).
TPU_MIN_VERSION: dict[str, tuple[tuple[int, int, int, int], str]] = {"tpu7x": ((1, 34, 0, 2201000), DOC_IRONWOOD)}

#: GKE's Spot VMs page, "Termination and graceful shutdown of Spot VMs": at the preemption notice GKE gives the node's
#: pods 30 s by default, the first 15 to non-system pods and the last 15 to system-critical ones, and a Standard node
#: pool may extend that to 120 s when its cluster's control plane runs 1.35.0-gke.1171000 or later ...
DOC_SPOT_TERMINATION = "https://cloud.google.com/kubernetes-engine/docs/concepts/spot-vms"
#: ... through the pool's node system config (``gcloud container node-pools create|update --system-config-from-file``):
#: ``kubeletConfig.shutdownGracePeriodSeconds`` (0, 30 or 120) and ``shutdownGracePeriodCriticalPodsSeconds`` (less).
DOC_NODE_SYSTEM_CONFIG = "https://cloud.google.com/kubernetes-engine/docs/how-to/node-system-config"
#: A Spot node's shutdown after the preemption notice, by default, and the part of it kept for system-critical pods.
SPOT_SHUTDOWN_SECONDS = 30
SPOT_CRITICAL_PODS_SECONDS = 15
#: The longest shutdown a Spot pool may ask for, and the oldest control plane that grants it (DOC_SPOT_TERMINATION).
SPOT_EXTENDED_SHUTDOWN_SECONDS = 120
SPOT_EXTENDED_SHUTDOWN_MIN = (1, 35, 0, 1171000)

_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+)(?:-gke\.(\d+))?)?$")


def parse_version(version: object) -> tuple[int, ...] | None:
    """(major, minor[, patch[, gke]]) of a GKE version, None when it is not one."""
    match = _VERSION.fullmatch(str(version))
    if not match:
        return None
    return tuple(int(part) for part in match.groups() if part is not None)


def version_at_least(version: object, minimum: tuple[int, ...]) -> bool:
    """Whether every version matching ``version`` (a prefix like 1.34 counts as its newest) is >= ``minimum``."""
    parsed = parse_version(version)
    if parsed is None:
        return False
    given = len(parsed)
    if parsed[:given] != minimum[:given]:
        return parsed[:given] > minimum[:given]
    return True  # equal on every component given: a prefix stands for its newest release


def version_text(version: tuple[int, int, int, int]) -> str:
    """(1, 34, 0, 2201000) -> '1.34.0-gke.2201000'."""
    major, minor, patch, gke = version
    return f"{major}.{minor}.{patch}-gke.{gke}"


def spot_shutdown_seconds(kubelet_config: object, control_plane_version: object) -> tuple[int, int]:
    """(the shutdown, the part of it kept for system-critical pods) GKE gives a Spot pool's nodes after a preemption
    notice: the pool's ``kubeletConfig`` (GKE v1 NodeKubeletConfig) extended to SPOT_EXTENDED_SHUTDOWN_SECONDS on a
    control plane at SPOT_EXTENDED_SHUTDOWN_MIN or later, else SPOT_SHUTDOWN_SECONDS of which
    SPOT_CRITICAL_PODS_SECONDS. A non-system pod gets the difference at most, whatever its
    terminationGracePeriodSeconds (DOC_SPOT_TERMINATION)."""
    config = kubelet_config if isinstance(kubelet_config, dict) else {}
    asked = config.get("shutdownGracePeriodSeconds")
    if asked == SPOT_EXTENDED_SHUTDOWN_SECONDS and version_at_least(control_plane_version, SPOT_EXTENDED_SHUTDOWN_MIN):
        critical = config.get("shutdownGracePeriodCriticalPodsSeconds")
        if isinstance(critical, int) and not isinstance(critical, bool) and 0 <= critical < asked:
            return asked, critical
        return asked, SPOT_CRITICAL_PODS_SECONDS
    return SPOT_SHUTDOWN_SECONDS, SPOT_CRITICAL_PODS_SECONDS
