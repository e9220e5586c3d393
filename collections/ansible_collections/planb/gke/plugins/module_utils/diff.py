# planb.gke: comparing a desired body with what GKE returns.
"""Leaf-by-leaf comparison of a desired body with the server's, ignoring server-only fields."""

from __future__ import annotations

import json
from typing import Any

Body = dict[str, Any]
#: Maps compared as one value (a label map is replaced whole, not merged).
WHOLE_MAPS = ("config.labels",)


def dig(body: Any, path: str, default: Any = None) -> Any:
    """The value at a dotted path of nested dicts, or ``default``."""
    for key in path.split("."):
        if not isinstance(body, dict) or key not in body:
            return default
        body = body[key]
    return body


def leaves(body: Body, prefix: str = "") -> Body:
    """Dotted leaf paths of a nested dict (lists and label maps are leaves)."""
    out: Body = {}
    for key, value in body.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value and path not in WHOLE_MAPS:
            out.update(leaves(value, path + "."))
        else:
            out[path] = value
    return out


def nest(flat: Body) -> Body:
    """The inverse of leaves()."""
    out: Body = {}
    for path, value in flat.items():
        node = out
        keys = path.split(".")
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = value
    return out


def normalize(value: Any, desired: Any) -> Any:
    """The server's value as comparable to the desired one (absent bool/int/str/map -> zero value)."""
    if value is None:
        for kind, zero in ((bool, False), (int, 0), (str, ""), (dict, {}), (list, [])):
            if isinstance(desired, kind):
                return zero
    if isinstance(desired, int) and not isinstance(desired, bool) and isinstance(value, str) and value.isdigit():
        return int(value)
    if isinstance(desired, list) and isinstance(value, list):
        return sorted(value, key=lambda item: json.dumps(item, sort_keys=True))
    return value


def compare(desired: Body, current: Body) -> tuple[list[str], Body, Body]:
    """(differing paths, diff before, diff after) over the desired fields only (server-only fields ignored)."""
    changed: list[str] = []
    before: Body = {}
    after: Body = {}
    for path, want in leaves(desired).items():
        have = normalize(dig(current, path), want)
        before[path], after[path] = have, want
        if have != normalize(want, want):
            changed.append(path)
    return changed, nest(before), nest(after)
