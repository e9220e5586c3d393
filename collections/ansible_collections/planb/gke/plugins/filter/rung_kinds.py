# planb.gke: the capacity kinds a rung can be, for the playbooks' and roles' Jinja.
"""Ansible filters ``planb.gke.rung_kinds`` and ``planb.gke.rung_kind``: the catalog's capacity kinds
(``planb.catalog.rung_kinds``, generated into module_utils), so no playbook or role lists kinds of its own::

    {{ 'name' | planb.gke.rung_kinds }}                          every kind, in the catalog's order
    {{ 'reservation_bound' | planb.gke.rung_kinds }}             the kinds whose fact is true
    {{ 'quota' | planb.gke.rung_kinds(among=['preemptible']) }}  the kinds whose fact is one of these
    {{ 'spot' | planb.gke.rung_kind }}                           one kind's entry ({} for a name planb does not know)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible.errors import AnsibleFilterError
from ansible_collections.planb.gke.plugins.module_utils import rung_kinds as catalog

#: The facts a kind's entry has (planb.catalog.rung_kinds.RungKind.facts).
FACTS = (
    "name",
    "summary",
    "doc_url",
    "settings",
    "quota",
    "provisioning_model",
    "queued",
    "one_per_ladder",
    "admission_means_capacity",
    "reservation_bound",
    "node_labels",
    "tolerations",
)


def rung_kinds(fact: object, among: object = None) -> list[str]:
    """The names of the kinds whose ``fact`` is true, or, given ``among`` (a list), is one of its values."""
    if fact not in FACTS:
        raise AnsibleFilterError(f"planb.gke.rung_kinds: {fact!r} is not a fact of a kind; one of {', '.join(FACTS)}")
    if among is None:
        return catalog.where(str(fact))
    if not isinstance(among, list):
        raise AnsibleFilterError(f"planb.gke.rung_kinds: among must be a list of values, got {among!r}")
    return [str(entry["name"]) for entry in catalog.kinds() if entry.get(str(fact)) in among]


def rung_kind(name: object) -> dict[str, Any]:
    """The entry of kind ``name`` ({} when the catalog has none of that name: the caller's check names it)."""
    return dict(catalog.kind(name) or {})


class FilterModule:
    """planb.gke capacity kind filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"rung_kinds": rung_kinds, "rung_kind": rung_kind}
