"""How long something took, as `planb status` writes it (12s, 3m05s, 2h04m, 3d02h): in the phases and the queued
time lifecycle says of a job, and in the goodput block planb.status.detail prints."""

from __future__ import annotations


def duration(seconds: float) -> str:
    """12s, 3m05s, 2h04m, 3d02h."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"
