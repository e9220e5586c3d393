# planb.gke: comparing a desired body with what GKE returns.
"""Leaf-by-leaf comparison of a desired body with the server's, ignoring server-only fields.

Node labels and taints are compared by key, over the keys the module manages only: GKE adds its own to
the pools it creates (``google.com/tpu`` and ``cloud.google.com/gke-queued`` taints, TPU and flex-start
labels; see planb's emulator, src/planb/local/gke_emulator/defaults.py, for the sources), and those are no difference.
Terraform's GKE provider does the same ("will only report drift on taint keys that are already managed").
"""

from __future__ import annotations

import json
from typing import Any

Body = dict[str, Any]
#: Maps compared as one value over the desired keys only (their keys hold dots, so they are not flattened).
WHOLE_MAPS = ("config.labels", "config.resourceLabels", "resourceLabels")
#: Maps and lists of which only the desired keys are compared: labels by key, taints by their "key". A pool's and a
#: cluster's resource labels too: GKE writes its own goog-gke-* keys on the pools it creates.
MANAGED_MAPS = ("config.labels", "config.resourceLabels", "resourceLabels")
MANAGED_LISTS = ("config.taints",)


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


def managed_part(path: str, want: Any, have: Any) -> Any:
    """The part of the server's value at ``path`` that the desired value manages (labels and taints by key)."""
    if path in MANAGED_MAPS and isinstance(want, dict) and isinstance(have, dict):
        return {key: value for key, value in have.items() if key in want}
    if path in MANAGED_LISTS and isinstance(want, list) and isinstance(have, list):
        keys = {item.get("key") for item in want}
        return [item for item in have if isinstance(item, dict) and item.get("key") in keys]
    return have


def merged_labels(desired: Body, current: Any) -> Body:
    """The whole label map to send: the server's labels (GKE's own among them) with the managed keys set."""
    return {**(current if isinstance(current, dict) else {}), **desired}


def merged_taints(desired: list[Body], current: Any) -> list[Body]:
    """The whole taint list to send: the server's taints of other keys (GKE's own among them), then the managed ones."""
    keys = {taint.get("key") for taint in desired}
    kept = [
        t for t in (current if isinstance(current, list) else []) if isinstance(t, dict) and t.get("key") not in keys
    ]
    return kept + list(desired)


def compare(desired: Body, current: Body) -> tuple[list[str], Body, Body]:
    """(differing paths, diff before, diff after) over the desired fields only (server-only fields ignored)."""
    changed: list[str] = []
    before: Body = {}
    after: Body = {}
    for path, want in leaves(desired).items():
        have = normalize(managed_part(path, want, dig(current, path)), want)
        before[path], after[path] = have, want
        if have != normalize(want, want):
            changed.append(path)
    return changed, nest(before), nest(after)
