"""The regions keeper's ConfigMap (``<config>-keeper`` in Kueue's namespace on the manager): the manager's origin read
from it, or why the keeper acts on nothing without one, and the regions it lists as quarantined
(planb.regions.keeper.reads reads both)."""

from __future__ import annotations

import json

from planb.kube import Obj
from planb.regions.access.kueue_objects import DEFAULT_ORIGIN

#: The keeper's ConfigMap (in Kueue's namespace on the manager, written only by the operator's regions playbook and
#: the keeper): ``origin``, the manager Kueue's multiKueue.origin. planb's policy: not an annotation of the
#: MultiKueueConfig, because whoever may edit that config (a batch admin) would then choose which regions the keeper
#: cleans and adds back.
ORIGIN_KEY = "origin"
#: ``quarantined``: the regions the keeper took out of the MultiKueueConfig (a JSON list), so they come back; not an
#: annotation of the config either, for the same reason (planb.regions.keeper.quarantine).
QUARANTINED_KEY = "quarantined"
#: Where earlier planb kept the quarantine list; no longer read (see above), only removed when the keeper writes.
OLD_QUARANTINED = "planb.dev/quarantined-regions"


def quarantined(state: Obj) -> list[str]:
    """The regions the keeper took out of the MultiKueueConfig (its ConfigMap's ``quarantined``), in the order they
    left."""
    text = (state.get("data") or {}).get(QUARANTINED_KEY, "")
    try:
        names = json.loads(text) if text else []
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes: the keeper goes on
        return []
    return [str(n) for n in names] if isinstance(names, list) else []


#: ``waiting``: what each quarantined region waits for (a JSON object, region to line), written by the keeper when it
#: changes, for ``planb status``.
WAITING_KEY = "waiting"


def stored_waiting(state: Obj) -> dict[str, str]:
    """What each quarantined region waits for, as the keeper last wrote it ({} when nothing, or when what is there is
    not a JSON object of strings)."""
    text = (state.get("data") or {}).get(WAITING_KEY, "")
    try:
        found = json.loads(text) if isinstance(text, str) and text else {}
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes: the keeper goes on
        return {}
    if not isinstance(found, dict):
        return {}
    return {str(k): str(v) for k, v in found.items() if isinstance(v, str)}


def origin_of(state: Obj) -> str:
    """This manager's origin value as the regions playbook wrote it in the keeper's ConfigMap ("" without one)."""
    return str((state.get("data") or {}).get(ORIGIN_KEY) or "")


class KeeperStateError(RuntimeError):
    """The keeper's ConfigMap is missing or names no origin: the keeper would not know what is its manager's."""


def checked_origin(state: Obj | None, origin_setting: str, name: str) -> tuple[Obj, str]:
    """The ConfigMap `name` (namespace/name, as read: None when missing) and this manager's origin (`origin_setting`
    if given, else the ConfigMap's); raises KeeperStateError when there is none, or it is Kueue's default."""
    origin = origin_setting or origin_of(state or {})
    if state is None or not origin:
        raise KeeperStateError(
            f"the ConfigMap {name} on the manager "
            f"{'names no origin' if state is not None else 'is missing'}: the keeper acts on nothing, because it "
            "would not know which of a region's objects its manager's Kueue made. Fix: converge the manager with "
            "the regions playbook (site.yml's last play), which gives its Kueue an origin of its own and writes it "
            "there"
        )
    if origin == DEFAULT_ORIGIN:
        raise KeeperStateError(
            f"the manager's origin is {origin!r}, Kueue's default (kueue v0.19.2 "
            "apis/config/v1beta2/defaults.go#L49), which every manager left at its default shares: planb's policy: "
            "the keeper acts on nothing, because it would delete in a region what another manager made. Fix: "
            "give the manager's Kueue an origin of its own (the regions playbook does) and pass it with --origin "
            "or write it in that ConfigMap"
        )
    return state, origin
