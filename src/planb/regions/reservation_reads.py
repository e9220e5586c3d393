"""The keeper's reservation reads: which reservation a region's rung consumes, and its room for a job, read from
Compute Engine before the rung is offered (``planb.regions.reservation_room`` reads the answer; the policy's rule 2
in ``planb.regions.advice_order`` uses it).

* **Which reservation.** A reservation plan's ResourceFlavor carries the annotation ``planb.dev/reservation`` (the
  chart writes it from ``queues.ladder[].reservation`` and ``reservationProject``): the reservation as GKE's
  reservation affinity names it, ``NAME`` or ``projects/PROJECT/reservations/NAME`` for one shared from another
  project (https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations). ``flavor_reservations``
  reads them from a region's flavors; a flavor without it is no reservation the keeper reads.
* **Its room.** ``google_read`` GETs ``projects/P/zones/Z/reservations/NAME`` (compute v1 ``reservations.get``) in
  the zones of the pair's region where its machine type is offered (``dispatch.advice_zones``), the first found.
  A region is a MultiKueueCluster's name, as for the advice (``advice.ask``): one that is not a DNS-1123 name, as a
  Google Cloud region is, is not read (planb's policy, because it would go into the request's path). A reservation's
  name is unique within its zone only: where two zones of the region hold one of that name, the first zone in order
  is read (planb's policy, because a plan's pools name the reservation, not its zone).
* **How often.** ``Rooms`` keeps each read ``READ_TTL_S`` (30 s), planb's policy, because the keeper looks at every
  waiting job each tick, a reservation's room changes as VMs come and go (minutes), and one read serves every job
  that tick. A read that fails is no read: the pair is scored as without one (its ledger), and the keeper says why,
  once for as long as the same reason lasts.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field

from planb.kube import Kube, KubeLimitError
from planb.regions import dispatch as dp
from planb.regions.access import KUEUE
from planb.regions.advice import Get
from planb.regions.kubeconfig import is_dns_subdomain
from planb.regions.ledger import Key
from planb.regions.reservation_room import Room, RoomUnread

ANNOTATION = "planb.dev/reservation"
READ_TTL_S = 30.0
_NAME = r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?"
_REF = re.compile(rf"^(projects/(?P<project>[a-z][-a-z0-9]{{4,28}}[a-z0-9])/reservations/)?(?P<name>{_NAME})$")

#: One reservation's room for one pair (its region, its shape): raises RoomUnread when it cannot be read.
Read = Callable[[Key, str], Room]


def flavor_reservations(kube: Kube) -> dict[str, str]:
    """The reservation each of a region's ResourceFlavors consumes, by flavor name (its ``planb.dev/reservation``)."""
    found = {}
    for flavor in (kube.get(f"{KUEUE}/resourceflavors") or {}).get("items") or []:
        meta = flavor.get("metadata") or {}
        ref = (meta.get("annotations") or {}).get(ANNOTATION)
        if isinstance(ref, str) and ref and isinstance(meta.get("name"), str):
            found[meta["name"]] = ref
    return found


def _quoted(part: str) -> str:
    return urllib.parse.quote(part, safe="")


def google_read(get: Get, project: str) -> Read:
    """Compute Engine's ``reservations.get`` for a pair's reservation ``ref`` (the module's docstring)."""

    def read(key: Key, ref: str) -> Room:
        match = _REF.match(ref)
        if match is None:
            raise RoomUnread(f"{ANNOTATION} {ref!r} is not NAME or projects/PROJECT/reservations/NAME")
        owner, name = match.group("project") or project, match.group("name")
        for what, value in (("region", key.region), ("project", owner)):
            if not is_dns_subdomain(value):
                raise RoomUnread(f"not read: the {what} {value!r} is not a DNS-1123 name, as a Google Cloud {what} is")
        zones = dp.advice_zones(key)
        for zone in zones:
            path = f"/compute/v1/projects/{_quoted(owner)}/zones/{_quoted(zone)}/reservations/{_quoted(name)}"
            try:
                status, body = get(path)
            except (OSError, KubeLimitError) as exc:
                raise RoomUnread(f"reservation {name}: no answer from {zone}: {exc}") from exc
            if status == 200:
                return Room.read(name, body, key.shape)
            if status != 404:
                error = body.get("error")
                said = error.get("status") if isinstance(error, dict) else ""
                raise RoomUnread(f"reservation {name} in {zone}: {status} {said or ''}".rstrip())
        raise RoomUnread(f"reservation {name} of {owner} is in none of {key.region}'s zones ({', '.join(zones)})")

    return read


@dataclass
class Rooms:
    """The reads of the last ``READ_TTL_S``, each reservation's room for a pair, or why it could not be read."""

    read: Read
    say: Callable[[str], None]
    seen: dict[tuple[Key, str], tuple[float, Room | None]] = field(default_factory=dict)
    #: Why each pair's last read failed, so that a failure that lasts (a 403) is said once, not every read.
    said: dict[tuple[Key, str], str] = field(default_factory=dict)

    def room(self, key: Key, ref: str, now: float) -> Room | None:
        held = self.seen.get((key, ref))
        if held is not None and now - held[0] < READ_TTL_S:
            return held[1]
        try:
            room: Room | None = self.read(key, ref)
            self.said.pop((key, ref), None)
        except RoomUnread as exc:
            room = None
            if self.said.get((key, ref)) != str(exc):
                self.said[(key, ref)] = str(exc)
                self.say(f"{key}: its reservation's room was not read ({exc}); the pair is scored by its ledger")
        self.seen[(key, ref)] = (now, room)
        return room

    def full(self, reservations: dict[Key, str], now: float) -> list[Key]:
        """The pairs whose reservation reads full now: what ``OfferPlan.due`` leaves unasked."""
        rooms = ((key, self.room(key, ref, now)) for key, ref in reservations.items())
        return [key for key, room in rooms if room is not None and not room.fits]
