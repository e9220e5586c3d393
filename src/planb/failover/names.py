"""The names the failover controller writes and planb reads back: annotations, reasons, labels, its message.

``planb status`` shows a moved job from these without importing the controller; the controller imports
them from here (the queues chart ships the whole planb.failover package), so both always agree.
"""

from __future__ import annotations

from collections.abc import Mapping

#: Set on the RayJob in the same patch as the affinity: the move happened (value: when, RFC 3339).
MOVED_ANNOTATION = "planb.dev/failover-moved-at"
#: The plan A flavor the job was moved away from, and the wait that triggered it.
FROM_ANNOTATION = "planb.dev/failover-from"
AFTER_ANNOTATION = "planb.dev/failover-after"
EVENT_REASON = "MovedToPlanB"
EVICTED_REASON = "PodsReadyTimeout"
#: The plan label planb's pools carry (a plan of K slices is K pools, each labelled with the plan); preferred when
#: plan A's flavor has several node labels. planb status reads it from here. planb.catalog.pool_layout, which labels
#: the pools, runs standalone in the collection and so writes it too (tests/unit/failover/test_names.py).
PLAN_LABEL = "planb.dev/plan"
#: GKE's accelerator node labels (TPU: accelerator and topology; GPU: accelerator), which the queues chart adds
#: to every plan's flavor (planb.profileLabels): the profile's shape, the same on every plan, so never the label
#: that tells plan A's pools apart. planb.catalog.tpu and .gpu name the same keys (tests/unit/failover/test_names.py).
PROFILE_LABELS = (
    "cloud.google.com/gke-tpu-accelerator",
    "cloud.google.com/gke-tpu-topology",
    "cloud.google.com/gke-accelerator",
)


def plan_label(node_labels: Mapping[str, str]) -> tuple[str, str] | None:
    """The node label of a plan's flavor that selects the plan's pools: planb.dev/plan when it has it, else its
    first key that is not one of the profile's accelerator labels; None when it has none."""
    if PLAN_LABEL in node_labels:
        return PLAN_LABEL, str(node_labels[PLAN_LABEL])
    keys = sorted(k for k in node_labels if k not in PROFILE_LABELS)
    return (keys[0], str(node_labels[keys[0]])) if keys else None


def human(seconds: float) -> str:
    """10m, 90s, 1h30m: how long plan A was given."""
    total = round(seconds)
    if total % 60:
        return f"{total}s"
    minutes = total // 60
    if minutes >= 60 and minutes % 60 == 0:
        return f"{minutes // 60}h"
    if minutes >= 60:
        return f"{minutes // 60}h{minutes % 60}m"
    return f"{minutes}m"


def move_message(after_seconds: float) -> str:
    return f"moved to plan B after {human(after_seconds)}: plan A had no capacity"
