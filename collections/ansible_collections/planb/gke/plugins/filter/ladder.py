# planb.gke: the capacity ladder (the inventory's planb_plans), checked and laid out as node pools.
"""Ansible filter ``planb.gke.plans``: the inventory's ordered list of plans, validated, each with its pools.

A plan is one rung of the capacity ladder: a kind of Google capacity (``reservation``, ``on-demand``,
``dws``, ``spot``), a number of slices of the profile, and the pool name its pools are named from. Kueue tries
the plans in list order (one ResourceFlavor per plan, named like the plan; charts/planb). This filter checks
the list before any API call and returns it normalised::

    {{ planb_plans | planb.gke.plans(profile=planb_profile, project=planb_project_id) }}

Each returned plan: ``name``, ``kind``, ``slices`` (int), ``nodepool``, ``reservation`` and
``reservation_project`` ('' unless kind reservation), ``rung`` (1 for the first), ``settings`` (the GKE
node pool settings of the kind, below) and ``pools`` (``planb.gke.node_pools``' list, each pool with
``plan_kind`` and ``settings`` added, so a play can loop over all pools of all plans).

GKE's settings per kind (``settings``; the keys are the gke_node_pool role's variables without its prefix) are the
kind's entry in planb's catalog (``planb.catalog.rung_kinds``, generated into module_utils: module_utils/rung_kinds.py),
like which kinds exist, which a ladder holds one of, and which consume a reservation. A reservation-bound plan's
pools consume one specific reservation: reservationAffinity SPECIFIC_RESERVATION with key
``compute.googleapis.com/reservation-name`` and the reservation's name, or ``projects/<project>/reservations/<name>``
for a reservation shared from another project (DOC_RESERVATIONS).

Every refusal names the entry (``planb_plans[i]``, its name) and the fix; those that are planb's own rule
say "planb's policy" and why.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ansible.errors import AnsibleFilterError
from ansible_collections.planb.gke.plugins.filter.catalog import PLAN_LABEL, node_pools, plan_pools
from ansible_collections.planb.gke.plugins.module_utils import rung_kinds
from ansible_collections.planb.gke.plugins.module_utils._generated.pool_layout import DOC_NODE_POOL_COUNT, MAX_SLICES
from ansible_collections.planb.gke.plugins.module_utils.credentials import PROJECT_ID

#: GKE: consuming a specific (or a shared) Compute Engine reservation in a node pool.
DOC_RESERVATIONS = "https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations"
#: The NodeConfig.reservationAffinity key that targets a reservation by name (GKE v1 NodeConfig).
RESERVATION_KEY = "compute.googleapis.com/reservation-name"
FIELDS = ("name", "kind", "slices", "nodepool", "reservation", "reservation_project")

#: A plan's name is a node label value (planb.dev/plan) and a Kueue ResourceFlavor's name: a DNS label (lowercase
#: letters, digits and '-', starting and ending with a letter or digit, at most 63), as roles/kueue_queues checks.
_PLAN_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
#: Compute Engine resource names (a reservation): RFC 1035, at most 63 characters.
_RESOURCE_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
_WHOLE = re.compile(r"^[0-9]+$")


def _fail(where: str, problem: str) -> AnsibleFilterError:
    return AnsibleFilterError(f"planb.gke.plans: {where}: {problem}")


def _where(index: int, item: object) -> str:
    name = item.get("name") if isinstance(item, dict) else None
    return f"planb_plans[{index}]" + (f" (plan {name!r})" if name else "")


def _slices(where: str, value: object) -> int:
    if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, str) and _WHOLE.fullmatch(value))):
        raise _fail(
            where,
            f"slices {value!r} must be a whole number of at least 1 (the default planb_plans takes the slices "
            "from planb_ondemand_slices and planb_dws_slices)",
        )
    count = int(value)
    if count < 1:
        raise _fail(
            where,
            f"slices {count} must be at least 1: planb's policy, because a rung of no slices has no node pool and "
            "an empty Kueue flavor that every job would have to skip; to drop a rung, remove it from planb_plans "
            "(its pools are then deleted only with the scale-down confirmation the play names). The default "
            "planb_plans takes the slices from planb_ondemand_slices and planb_dws_slices",
        )
    if count > MAX_SLICES:
        raise _fail(
            where,
            f"slices {count} is more than {MAX_SLICES}: planb's policy, because a multi-host plan is one node pool "
            f"per slice and GKE autoscales clusters of more than {MAX_SLICES} node pools with more latency "
            f"({DOC_NODE_POOL_COUNT}); split the capacity over more plans or clusters (the default planb_plans takes "
            "the slices from planb_ondemand_slices and planb_dws_slices)",
        )
    return count


def _reservation_fields(where: str, kind: str, item: dict[str, Any]) -> tuple[str, str]:
    reservation = str(item.get("reservation") or "")
    project = str(item.get("reservation_project") or "")
    bound = rung_kinds.where("reservation_bound")
    if kind not in bound:
        if reservation or project:
            raise _fail(
                where,
                f"reservation/reservation_project belong to kind {' or '.join(bound)} only, this plan is kind {kind}: "
                f"remove them, or make the plan kind: {bound[0]} to consume that reservation",
            )
        return "", ""
    if not reservation:
        raise _fail(
            where,
            f"kind {kind} needs reservation: <name>, the Compute Engine reservation its pools consume "
            f"(SPECIFIC_RESERVATION, {DOC_RESERVATIONS}); add reservation_project: <project> when it is shared "
            "from another project",
        )
    if not _RESOURCE_NAME.fullmatch(reservation):
        raise _fail(
            where,
            f"reservation {reservation!r} must be a Compute Engine reservation name: 1-63 lowercase letters, digits "
            "or hyphens, starting with a letter (give the owner project in reservation_project, not in the name)",
        )
    if project and not PROJECT_ID.fullmatch(project):
        raise _fail(
            where,
            f"reservation_project {project!r} must be a Google Cloud project ID (6-30 lowercase letters, digits or "
            "hyphens): the project that owns the shared reservation",
        )
    return reservation, project


def _check_item(index: int, item: object) -> dict[str, Any]:
    where = _where(index, item)
    if not isinstance(item, dict):
        raise _fail(where, f"each plan must be a mapping with name, kind, slices and nodepool, got {item!r}")
    unknown = sorted(set(item) - set(FIELDS))
    if unknown:
        raise _fail(where, f"unknown key(s) {', '.join(map(str, unknown))}; a plan has {', '.join(FIELDS)}")
    name = item.get("name")
    if not isinstance(name, str) or not _PLAN_NAME.fullmatch(name):
        raise _fail(
            where,
            f"name {name!r} must be a Kubernetes label value and a Kueue flavor name: 1-63 lowercase letters, digits "
            "or '-', starting and ending with a letter or digit (e.g. reserved, on-demand, dws, spot)",
        )
    kind = item.get("kind")
    if rung_kinds.kind(kind) is None:
        raise _fail(where, f"kind {kind!r} is not one planb knows: use one of {', '.join(rung_kinds.names())}")
    # nodepool may be left out: <name>-pool (the tutorial's on-demand-pool and dws-pool for plans on-demand and dws).
    nodepool = item.get("nodepool") or f"{name}-pool"
    if not isinstance(nodepool, str):
        raise _fail(
            where, f"nodepool {nodepool!r} must be the name the plan's pools are named from (<nodepool>-2, ...)"
        )
    reservation, project = _reservation_fields(where, str(kind), item)
    return {
        "name": name,
        "kind": kind,
        "slices": _slices(where, item.get("slices")),
        "nodepool": nodepool,
        "reservation": reservation,
        "reservation_project": project,
        "rung": index + 1,
    }


def _check_kinds(plans: list[dict[str, Any]]) -> None:
    seen: dict[str, str] = {}
    reservations: dict[str, str] = {}
    for index, plan in enumerate(plans):
        where = _where(index, plan)
        entry = rung_kinds.kind(plan["kind"]) or {}
        if entry.get("one_per_ladder"):
            if plan["kind"] in seen:
                raise _fail(
                    where,
                    f"a second plan of kind {plan['kind']} (plan {seen[plan['kind']]!r} is one): planb's policy "
                    f"allows one plan per kind except {' and '.join(rung_kinds.where('one_per_ladder', False))}, "
                    "because two rungs of the same kind and profile draw "
                    "on the same Google capacity, so the second only splits the first's quota; raise the first "
                    "plan's slices instead",
                )
            seen[plan["kind"]] = plan["name"]
        if entry.get("reservation_bound"):
            target = f"{plan['reservation_project'] or '(cluster project)'}/{plan['reservation']}"
            if target in reservations:
                raise _fail(
                    where,
                    f"reservation {plan['reservation']!r} is already plan {reservations[target]!r}'s: planb's policy, "
                    "because two rungs on one reservation would promise Kueue its capacity twice; give each "
                    "reservation one plan",
                )
            reservations[target] = plan["name"]


def _check_names(plans: list[dict[str, Any]]) -> None:
    names: dict[str, int] = {}
    for index, plan in enumerate(plans):
        if plan["name"] in names:
            raise _fail(
                _where(index, plan),
                f"plan name {plan['name']!r} is also planb_plans[{names[plan['name']]}]'s: each plan is one Kueue "
                "flavor and one node label value, so names must be unique",
            )
        names[plan["name"]] = index
    for index, plan in enumerate(plans):
        others = [p["nodepool"] for p in plans if p is not plan] + ["default-pool"]
        taken = plan_pools(others, plan["nodepool"])
        if taken:
            raise _fail(
                _where(index, plan),
                f"nodepool {plan['nodepool']!r} and {taken[0]!r} name each other's pools: this plan's pools are "
                f"{plan['nodepool']}, {plan['nodepool']}-2, ..., so a pool named {taken[0]} would be taken for one of "
                "them (and scaled down with it). Choose names that are not one another's prefix followed by "
                "-<number> (nor default-pool)",
            )


def _settings(plan: dict[str, Any], project: str) -> dict[str, Any]:
    entry = rung_kinds.kind(plan["kind"]) or {}
    settings = dict(entry["settings"])
    if entry["reservation_bound"]:
        owner = plan["reservation_project"]
        # A reservation of the cluster's project by name; one shared from another project as
        # projects/<owner>/reservations/<name> (DOC_RESERVATIONS; Compute Engine's ReservationAffinity.values).
        shared = bool(owner) and owner != project
        settings["reservation"] = (
            f"projects/{owner}/reservations/{plan['reservation']}" if shared else plan["reservation"]
        )
    settings["taints"] = [dict(t) for t in settings["taints"]]
    return settings


def plans(value: object, profile: str, project: str = "", machine_type: str | None = None) -> list[dict[str, Any]]:
    """The ladder ``value`` (planb_plans) checked and laid out (see the module docstring)."""
    if not isinstance(value, list) or not value:
        raise AnsibleFilterError(
            "planb.gke.plans: planb_plans must be a non-empty list of plans, each {name, kind, slices, nodepool} "
            f'(docs/capacity-ladder.md, "Describing the ladder in the inventory"), got {value!r}'
        )
    checked = [_check_item(index, item) for index, item in enumerate(value)]
    _check_names(checked)
    _check_kinds(checked)
    out = []
    for plan in checked:
        settings = _settings(plan, project)
        try:
            pools = node_pools(
                profile,
                name=plan["nodepool"],
                slices=plan["slices"],
                plan=plan["name"],
                flex_start=bool(settings["flex_start"]),
                machine_type=machine_type,
            )
        except AnsibleFilterError as exc:
            raise _fail(_where(plan["rung"] - 1, plan), str(exc)) from exc
        for pool in pools:
            pool.update(plan_kind=plan["kind"], settings=settings)
        out.append(dict(plan, settings=settings, pools=pools))
    return out


def surplus_pools(existing: object, ladder: list[dict[str, Any]]) -> list[str]:
    """The names of the cluster's pools (``existing``: GKE's node pools, or their names) the ladder leaves over.

    A pool is left over when no plan of ``ladder`` (``plans``' output) lays it out and either a plan's pool name
    names it (fewer slices: ``<nodepool>-3`` of a plan now of 2) or it carries the plan node label
    ``planb.dev/plan`` (a rung removed from the list, or a plan whose nodepool was renamed). GKE's default-pool
    and pools planb did not make are never left over. Ladder order, then the others by name.
    """
    if not isinstance(existing, list):
        raise AnsibleFilterError(f"planb.gke.surplus_pools: expected a list of node pools, got {existing!r}")
    wanted = {pool["name"] for plan in ladder for pool in plan["pools"]}
    labelled: dict[str, bool] = {}
    for pool in existing:
        if isinstance(pool, dict):
            labels = (pool.get("config") or {}).get("labels") or {}
            labelled[str(pool.get("name"))] = PLAN_LABEL in labels
        else:
            labelled[str(pool)] = False
    left = [name for name in labelled if name not in wanted and name != "default-pool"]
    out: list[str] = []
    for plan in ladder:
        out += [name for name in plan_pools(left, plan["nodepool"]) if name not in out]
    out += sorted(name for name in left if labelled[name] and name not in out)
    return out


class FilterModule:
    """planb.gke ladder filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"plans": plans, "surplus_pools": surplus_pools}
