# planb.gke: the capacity kinds a rung of the ladder can be, looked up in the catalog's generated copy.
"""The capacity kinds a rung can be (``reservation``, ``on-demand``, ``dws``, ``spot``), each one entry of
``planb.catalog.rung_kinds`` that ``make generate`` copies into ``_generated/rung_kinds.py``: its GKE pool settings,
the quota its pools draw on, the provisioning model of its VMs, whether it queues, whether a ladder holds one of it,
whether Kueue's admission means capacity, whether it is bound to a reservation, its flavor's labels and tolerations.

Every part of the collection that differs by kind reads these entries at call time (the ladder filter, the day-0
check, the playbooks' Jinja through the ``planb.gke.rung_kinds`` filter): a new kind is a new catalog entry.
"""

from __future__ import annotations

from typing import Any

from ansible_collections.planb.gke.plugins.module_utils._generated import rung_kinds as _generated


def kinds() -> list[dict[str, Any]]:
    """Every kind's entry, in the catalog's order."""
    return list(_generated.FACTS["kinds"])


def names() -> list[str]:
    """Every kind's name, in the catalog's order."""
    return [str(kind["name"]) for kind in kinds()]


def kind(name: object) -> dict[str, Any] | None:
    """The entry of kind ``name``, None when the catalog has none of that name."""
    return next((entry for entry in kinds() if entry["name"] == name), None)


def where(fact: str, value: object = True) -> list[str]:
    """The names of the kinds whose ``fact`` equals ``value`` (truthy when ``value`` is True), in order."""
    return [
        str(entry["name"])
        for entry in kinds()
        if (bool(entry.get(fact)) if value is True else entry.get(fact) == value)
    ]
