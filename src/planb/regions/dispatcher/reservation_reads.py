"""The keeper's reservation reads: which reservation a region's rung consumes, as the manager's own configuration names
it, and its room for a job, read from Compute Engine before the rung is offered
(``planb.regions.dispatcher.reservation_room`` reads the answer; the policy's rule 2 in
``planb.regions.dispatcher.offer_order`` uses it).

* **Which reservation.** planb's policy: the manager's configuration names it, never a region's objects.
  ``planb regions keep --reservation REGION/RUNG=[projects/PROJECT/]zones/ZONE/reservations/NAME`` (the regions
  playbook writes one per reservation plan of the inventory's regions: the plan's ``reservation`` and
  ``reservation_project``, the region's ``planb_zone``, the zone its pools are in) gives the reservation and the zone
  of the rung's pools. A region's ResourceFlavor may carry ``planb.dev/reservation`` (the chart writes it, for people
  to read); the keeper does not read it, because whoever administers a region would then choose where the keeper
  sends the manager's token (any project's reservation) and what it reads there (a reservation read with room
  scores 0.95).
* **In which projects.** planb's policy: the manager's project (``--project``) and the projects it names with
  ``--reservation-project`` only; a ``--reservation`` in another project is refused when the keeper starts, and
  ``google_read`` refuses one before any request, because the token the keeper holds is the manager's.
* **Where.** ``google_read`` GETs ``projects/P/zones/Z/reservations/NAME`` (compute v1 ``reservations.get``) in the
  pool's own zone and nowhere else: GKE's autoscaler matches a reservation only in the node group's zone
  (``reservation_room.ZONE``). A region is a MultiKueueCluster's name: one that is not a DNS-1123 name is not read
  (planb's policy, because it goes into a log line and a key, as a Google Cloud region is such a name).
* **How often.** ``Rooms`` keeps each read ``READ_TTL_S`` (30 s), planb's policy, because the keeper looks at every
  waiting job each tick, a reservation's room changes as VMs come and go (minutes), and one read serves every job
  that tick. A read that fails is no read: the pair is scored as without one (its ledger), and the keeper says why,
  once for as long as the same reason lasts.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

from planb.kube import KubeLimitError
from planb.regions.access.kubeconfig import is_dns_subdomain
from planb.regions.dispatcher.google_advice import Get
from planb.regions.dispatcher.ledger import Key
from planb.regions.dispatcher.reservation_room import ReservationRef, Room, RoomUnread

READ_TTL_S = 30.0
_NAME = r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?"
_PROJECT = r"[a-z][-a-z0-9]{4,28}[a-z0-9]"
_ZONE = r"[a-z]+-[a-z]+[0-9]+-(ai[0-9]+)?[a-z]"
_LABEL = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"
_SPEC = re.compile(
    rf"^(?P<region>{_LABEL})/(?P<rung>{_LABEL})="
    rf"(projects/(?P<project>{_PROJECT})/)?zones/(?P<zone>{_ZONE})/reservations/(?P<name>{_NAME})$"
)

#: One reservation's room for one pair (its region, its shape): raises RoomUnread when it cannot be read.
Read = Callable[[Key, ReservationRef], Room]


class ReservationSpecError(ValueError):
    """A ``--reservation`` that is not REGION/RUNG=[projects/PROJECT/]zones/ZONE/reservations/NAME, or names a
    project the keeper is not allowed to read in."""


def parse_reservation(spec: str, project: str, allowed: Collection[str] = ()) -> tuple[tuple[str, str], ReservationRef]:
    """``--reservation REGION/RUNG=[projects/PROJECT/]zones/ZONE/reservations/NAME``: the (region, rung) pair and the
    reservation its pools consume; without ``projects/PROJECT/`` the reservation is ``project``'s (``--project``). A
    project other than ``project`` and those ``allowed`` is refused (the module's docstring: planb's policy)."""
    match = _SPEC.fullmatch(spec)
    if match is None:
        raise ReservationSpecError(
            f"--reservation {spec!r} is not REGION/RUNG=[projects/PROJECT/]zones/ZONE/reservations/NAME (the region "
            "a MultiKueueCluster's name, the rung its flavor's, the zone its pools')"
        )
    owner = match["project"] or project
    if owner not in {project, *allowed}:
        raise ReservationSpecError(
            f"--reservation {spec!r} is in project {owner}, which the keeper may not read in: planb's policy is to "
            f"read reservations only in --project ({project or 'none given'}) and the projects --reservation-project "
            "names, because the keeper reads with the manager's token. Fix: add --reservation-project "
            f"{owner} if the manager is meant to read that project's reservations"
        )
    return (match["region"], match["rung"]), ReservationRef(owner, match["zone"], match["name"])


def _quoted(part: str) -> str:
    return urllib.parse.quote(part, safe="")


def google_read(get: Get, project: str, also: Collection[str] = ()) -> Read:
    """Compute Engine's ``reservations.get`` for a pair's reservation, in the zone of the pair's pools (the module's
    docstring). ``project`` is the manager's (``--project``), ``also`` the further projects it allows
    (``--reservation-project``): a reservation of any other project is not read, and no request is sent."""
    allowed = {project, *also}

    def read(key: Key, ref: ReservationRef) -> Room:
        if ref.project not in allowed:
            raise RoomUnread(f"not read: reservation {ref} is in project {ref.project}, not one the manager allows")
        for what, value in (("region", key.region), ("project", ref.project), ("zone", ref.zone)):
            if not is_dns_subdomain(value):
                raise RoomUnread(f"not read: the {what} {value!r} is not a DNS-1123 name, as a Google Cloud {what} is")
        path = "/compute/v1/" + "/".join(
            _quoted(p) for p in ("projects", ref.project, "zones", ref.zone, "reservations", ref.name)
        )
        try:
            status, body = get(path)
        except (OSError, KubeLimitError) as exc:
            raise RoomUnread(f"reservation {ref}: no answer: {exc}") from exc
        if status == 200:
            return Room.read(ref, body, key.shape)
        if status == 404:
            raise RoomUnread(f"reservation {ref} is not there: a pool consumes a reservation of its own zone")
        error = body.get("error")
        said = error.get("status") if isinstance(error, dict) else ""
        raise RoomUnread(f"reservation {ref}: {status} {said or ''}".rstrip())

    return read


@dataclass
class Rooms:
    """The reads of the last ``READ_TTL_S``, each reservation's room for a pair, or why it could not be read."""

    read: Read
    say: Callable[[str], None]
    seen: dict[tuple[Key, ReservationRef], tuple[float, Room | None]] = field(default_factory=dict)
    #: Why each pair's last read failed, so that a failure that lasts (a 403) is said once, not every read.
    said: dict[tuple[Key, ReservationRef], str] = field(default_factory=dict)

    def room(self, key: Key, ref: ReservationRef, now: float) -> Room | None:
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

    def full(self, reservations: Mapping[Key, ReservationRef], now: float) -> list[Key]:
        """The pairs whose reservation reads full now: what ``OfferPlan.due`` leaves unasked."""
        rooms = ((key, self.room(key, ref, now)) for key, ref in reservations.items())
        return [key for key, room in rooms if room is not None and not room.fits]
