"""What of a Compute Engine reservation is in use, counted from the emulator's node pools that consume it.

Compute Engine reports a reservation's use in its body, output only (compute v1 discovery document):
``specificReservation.inUseCount`` ("Indicates how many instances are in use") and
``aggregateReservation.inUseResources`` ("List of resources currently in use", ``{accelerator {acceleratorType,
acceleratorCount}}``). The emulator counts them when a reservation is read (``reservations.get`` and ``list``), from
the node pools that consume it by name: a pool with ``reservationAffinity`` ``SPECIFIC_RESERVATION`` naming it
(``NAME``, or ``projects/P/reservations/NAME`` for a shared one), in the reservation's zone, each VM of the pool's
managed instance groups (their ``targetSize``, the pool's node count: ``initialNodeCount``, then ``setSize``) one
instance in use, or for a TPU pool its machine type's chips. So a reservation filled by its pools reads full, as on
Google, and planb's keeper can be shown one (docs/local-mode.md).

Not counted: a pool with ``ANY_RESERVATION`` affinity (Compute Engine's default, which could consume a reservation
that does not require a name; planb's pools never use it), and VMs outside GKE. The count is the pools' size, not
VMs running: the emulator creates no VM.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from planb.catalog import tpu
from planb.local.gke_emulator.instance_groups import groups_of, pool_zone
from planb.local.gke_emulator.reservation_rules import RESERVATION_KEY, accelerator_family
from planb.local.gke_emulator.store import Store

Body = dict[str, Any]
_POOL = re.compile(r"^projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/clusters/[^/]+/nodePools/[^/]+$")
_REF = re.compile(r"^(?:projects/(?P<project>[^/]+)/reservations/)?(?P<name>[^/]+)$")


def _consumed(pool_name: str, pool: Body) -> str | None:
    """The reservation (projects/P/zones/Z/reservations/N) a pool consumes by name, or None."""
    where = _POOL.fullmatch(pool_name)
    affinity = (pool.get("config") or {}).get("reservationAffinity") or {}
    values = affinity.get("values") or []
    if where is None or affinity.get("consumeReservationType") != "SPECIFIC_RESERVATION" or len(values) != 1:
        return None
    ref = _REF.fullmatch(str(values[0]))
    if affinity.get("key") != RESERVATION_KEY or ref is None:
        return None
    zone = pool_zone(pool, where["location"])
    return f"projects/{ref['project'] or where['project']}/zones/{zone}/reservations/{ref['name']}"


def _vms(store: Store, pool_name: str) -> int:
    return sum(int(store.instance_groups[g].get("targetSize") or 0) for g in groups_of(store, pool_name))


def with_use(store: Store, name: str, body: Body) -> Body:
    """``body``, the reservation ``name`` (projects/P/zones/Z/reservations/N) as stored, with what its pools use."""
    shown = copy.deepcopy(body)
    vms = chips = 0
    for pool_name, pool in store.node_pools.items():
        if _consumed(pool_name, pool) != name:
            continue
        count = _vms(store, pool_name)
        vms += count
        found = tpu.find_machine(str((pool.get("config") or {}).get("machineType") or ""))
        chips += count * (found[1].chips_per_vm if found is not None else 0)
    if isinstance(shown.get("specificReservation"), dict):
        shown["specificReservation"]["inUseCount"] = str(vms)
    aggregate = shown.get("aggregateReservation")
    if isinstance(aggregate, dict):
        aggregate.pop("inUseResources", None)
        kinds = [(r.get("accelerator") or {}).get("acceleratorType") for r in aggregate.get("reservedResources") or []]
        if chips and kinds:
            # The chips in use are of the reservation's family: a pool of another cannot consume it (reservation_rules).
            used = next((k for k in kinds if accelerator_family(k)), kinds[0])
            aggregate["inUseResources"] = [{"accelerator": {"acceleratorType": used, "acceleratorCount": chips}}]
    return shown
