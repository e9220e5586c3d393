"""The Kubernetes API's objects as planb reads them, with no client: plain dicts (``Obj``), an object's status
conditions by type, whether one is True and since when, and the API's RFC 3339 times. planb.kube reads the objects;
the interpreters (planb.status, the stand-ins) read what they say with these."""

from __future__ import annotations

import datetime
from typing import Any

#: An API object as its JSON decodes: one shape for every kind, core or custom.
Obj = dict[str, Any]


def conditions(obj: Obj) -> dict[str, Obj]:
    """An object's status conditions by type."""
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


def is_true(obj: Obj, kind: str) -> bool:
    return conditions(obj).get(kind, {}).get("status") == "True"


def parse_time(value: object) -> float | None:
    """An RFC 3339 time as the API writes it (``2026-11-29T10:00:00Z``), in seconds since the epoch; None when
    empty or not one."""
    text = str(value or "")
    if not text:
        return None
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def since(conds: dict[str, Obj], kind: str) -> float | None:
    """When the condition ``kind`` last became True (its lastTransitionTime); None while it is not True."""
    cond = conds.get(kind) or {}
    return parse_time(cond.get("lastTransitionTime")) if cond.get("status") == "True" else None
