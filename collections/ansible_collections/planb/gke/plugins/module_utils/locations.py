# planb.gke: where a TPU node pool may live (zones), shared by the node_locations filter and gke_node_pool.
"""Zones and node locations of TPU node pools: planb's policy based on Google's list of TPU zones.

A TPU slice lives in one zone, and each TPU generation is offered only in the zones Google's "TPU
regions and zones" page lists (https://cloud.google.com/tpu/docs/regions-zones). planb refuses,
before any API call, a TPU pool in a zone that list does not name for its generation, and a TPU pool
of a regional cluster that does not name its one zone (NodePool ``locations``). Both are planb's
policy, not refusals GKE documents; the zone list is the catalog's, dated, generated into
``machine_types.py`` (``zones``, ``zones_url``, ``zones_as_of``).

A flex-start or queued provisioning (DWS) TPU pool is also held to the zones GKE's flex-start page lists
for its generation (``flex_start_zones``, ``flex_start_zones_url``, ``flex_start_zones_as_of``). That one
is Google's requirement, not planb's policy, and its refusal says so (``flex_start_zone_problems``).
"""

from __future__ import annotations

from typing import Any

from ansible_collections.planb.gke.plugins.module_utils._generated.machine_types import FACTS as MACHINE_TYPES

POLICY = "planb's policy, based on Google's list"


def region_of(location: str) -> str:
    """The region of a zone (us-east5-b -> us-east5, us-central1-ai1a -> us-central1); a region is its own."""
    return "-".join(location.split("-")[:2])


def is_zone(location: str) -> bool:
    """Whether ``location`` is a zone (us-east5-b) rather than a region (us-east5)."""
    return location.count("-") >= 2


def tpu_facts(machine_type: str) -> dict[str, Any] | None:
    facts = MACHINE_TYPES.get(machine_type or "")
    return facts if facts is not None and facts["kind"] == "tpu" else None


def _source(facts: dict[str, Any]) -> str:
    return f"{facts['zones_url']}, as of {facts['zones_as_of']}"


def _offered(facts: dict[str, Any], region: str | None = None) -> str:
    zones = [z for z in facts["zones"] if region is None or region_of(z) == region]
    return ", ".join(zones) if zones else "none"


def zone_problems(machine_type: str, location: str, node_locations: list[str] | None, check_list: bool) -> list[str]:
    """What is wrong with where a pool of ``machine_type`` would live (empty when it is fine).

    ``location`` is the cluster's (zone or region), ``node_locations`` the pool's ``locations``.
    ``check_list`` false skips the zone list (for a zone Google added after the catalog's date)
    but not the rule that a TPU pool of a regional cluster names exactly one zone.
    """
    problems: list[str] = []
    region = region_of(location)
    for zone in node_locations or []:
        if not is_zone(zone) or region_of(zone) != region:
            problems.append(f"node_locations entry {zone!r} must be a zone of the cluster's region {region}")
    facts = tpu_facts(machine_type)
    if facts is None or problems:
        return problems
    generation = facts["generation"]
    if node_locations and len(node_locations) > 1:
        problems.append(
            f"a TPU {generation} slice lives in one zone: node_locations must name exactly one zone, not "
            f"{len(node_locations)} ({POLICY}); zones of {region} that offer TPU {generation}: "
            f"{_offered(facts, region)} ({_source(facts)})"
        )
        return problems
    if not node_locations and not is_zone(location):
        problems.append(
            f"location {location} is a region, and a TPU {generation} slice lives in one zone: a TPU pool of a "
            f"regional cluster needs node_locations with exactly one zone ({POLICY}). Zones of {region} that offer "
            f"TPU {generation}: {_offered(facts, region)}; every zone that does: {_offered(facts)} "
            f"({_source(facts)}). Or give a zone as the location, for a zonal cluster as the tutorial does"
        )
        return problems
    zone = node_locations[0] if node_locations else location
    if check_list and zone not in facts["zones"]:
        in_region = _offered(facts, region)
        problems.append(
            f"zone {zone} does not offer TPU {generation} ({machine_type}) in Google's list of TPU zones "
            f"({_source(facts)}); zones that do: {_offered(facts)}"
            + (f" (in {region}: {in_region})" if in_region != "none" else "")
            + f". This is {POLICY}, not a GKE refusal: if Google lists {zone} for TPU {generation} now, set "
            "check_tpu_zone false (playbooks: -e planb_check_tpu_zone=false)"
        )
    return problems


def flex_start_zone_problems(
    machine_type: str, location: str, node_locations: list[str] | None, check_list: bool
) -> list[str]:
    """Why a flex-start (DWS) pool of ``machine_type`` cannot live where it would (empty when it can).

    Only a TPU pool whose zone is known (a zonal cluster's, or the one zone of ``node_locations``) is
    checked; ``check_list`` false skips it, as it skips the TPU zone list (a zone Google added later).
    """
    facts = tpu_facts(machine_type)
    if facts is None or not facts["flex_start"] or not check_list:
        return []
    zone = node_locations[0] if node_locations and len(node_locations) == 1 else location
    if not is_zone(zone) or zone in facts["flex_start_zones"]:
        return []
    generation = facts["generation"]
    return [
        f"zone {zone} is not a zone where GKE offers flex-start for TPU {generation} ({machine_type}): GKE's "
        f"flex-start page lists {', '.join(facts['flex_start_zones']) or 'none'} "
        f'({facts["flex_start_zones_url"]}, "Requirements", as read {facts["flex_start_zones_as_of"]}). '
        "This is Google's requirement, not planb's policy. Fix: give this DWS rung's cluster (planb_zone) or TPU "
        f"pools (planb_tpu_zone) one of those zones, or leave the DWS rung out of the ladder in {zone}; if Google's "
        f"page lists {zone} for TPU {generation} now, set check_tpu_zone false (playbooks: "
        "-e planb_check_tpu_zone=false)"
    ]


def node_locations(machine_type: str, location: str, tpu_zone: str = "", check_list: bool = True) -> list[str]:
    """The ``locations`` a pool of ``machine_type`` gets in a cluster at ``location``.

    A zonal cluster's pools live in its zone: [] (GKE's default), or [tpu_zone] when it is that zone.
    A regional cluster's TPU pools get [tpu_zone], which must be given. Non-TPU pools: [tpu_zone] when
    given, else [] (GKE spreads them over the cluster's zones). Raises ValueError naming the fix.
    """
    wanted = [tpu_zone] if tpu_zone else None
    if wanted and is_zone(location) and tpu_zone != location:
        raise ValueError(
            f"tpu_zone {tpu_zone} differs from the zonal cluster's zone {location}: a zonal cluster's TPU pools "
            f"live in its zone; leave tpu_zone empty, or give the region {region_of(location)} as the location "
            f"for a regional cluster whose TPU pools live in {tpu_zone}"
        )
    problems = zone_problems(machine_type, location, wanted, check_list)
    if problems:
        hint = " (set planb_tpu_zone / gke_node_pool_tpu_zone to one of them)" if not is_zone(location) else ""
        raise ValueError("; ".join(problems) + hint)
    return wanted if wanted and not is_zone(location) else []
