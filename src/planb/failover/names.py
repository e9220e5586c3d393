"""The names the failover controller writes and planb reads back: annotations, reasons, labels, its message.

``planb status`` shows a moved job from these without importing the controller; the controller imports
them from here (the queues chart ships the whole planb.failover package), so both always agree.
"""

from __future__ import annotations

#: Set on the RayJob in the same patch as the affinity: the move happened (value: when, RFC 3339).
MOVED_ANNOTATION = "planb.dev/failover-moved-at"
#: The plan A flavor the job was moved away from, and the wait that triggered it.
FROM_ANNOTATION = "planb.dev/failover-from"
AFTER_ANNOTATION = "planb.dev/failover-after"
EVENT_REASON = "MovedToPlanB"
EVICTED_REASON = "PodsReadyTimeout"
#: The plan label planb's pools carry; preferred when plan A's flavor has several node labels.
PLAN_LABEL = "planb.dev/plan"


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
