"""The keeper's reservation reads (planb.regions.reservation_reads) against the GKE emulator's Compute Engine
``reservations.get`` over HTTP: the reservation found in its region's zones, its room for the job's shape, and a
reservation that is not there or a region that is no region's name not read."""

from __future__ import annotations

import pytest

from planb.local.gke_emulator.emulator import RunningEmulator
from planb.regions.advice import http_get
from planb.regions.ledger import Key
from planb.regions.reservation_reads import google_read
from planb.regions.reservation_room import RoomUnread
from tests.support.integration.gke.gke_api import call
from tests.support.integration.gke.reservation_cases import aggregate

PROJECT = "planb-test"


def test_a_tpu_reservation_is_found_in_the_regions_zones_and_read_for_the_jobs_chips(emulator: RunningEmulator) -> None:
    status, op = call(
        emulator,
        "POST",
        f"/compute/v1/projects/{PROJECT}/zones/us-east5-b/reservations",
        {
            "name": "tpu-res",
            **aggregate(32),
        },
    )
    assert status == 200 and op["status"] == "DONE", op
    read = google_read(http_get(emulator.url), PROJECT)
    # us-east5's zones for ct6e are us-east5-a and -b: -a answers 404, -b holds it. The emulator counts no VM
    # against a reservation (inUseResources absent; docs/local-mode.md), so all 32 chips are free.
    two = read(Key("us-east5", "reserved", "ct6e-standard-4t:4"), "tpu-res")
    assert (two.reservation, two.free, two.need, two.unit, two.fits) == ("tpu-res", 32, 16, "chips", True)
    assert not read(Key("us-east5", "reserved", "ct6e-standard-4t:12"), "tpu-res").fits  # 48 chips
    shared = f"projects/{PROJECT}/reservations/tpu-res"
    assert read(Key("us-east5", "reserved", "ct6e-standard-4t:8"), shared).fits  # named with its project


@pytest.mark.parametrize(
    ("key", "ref", "says"),
    [
        (Key("europe-west4", "reserved", "ct6e-standard-4t:4"), "tpu-res", "tpu-res of planb-test is in none of"),
        (Key("us-east5", "reserved", "ct6e-standard-4t:4"), "projects/other-project/reservations/x", "x of other"),
        (Key("../us-east5", "reserved", "ct6e-standard-4t:4"), "tpu-res", "is not a DNS-1123 name"),
        (Key("us-east5", "reserved", "ct6e-standard-4t:4"), "Tpu_Res", "is not NAME or projects/PROJECT"),
    ],
)
def test_a_reservation_that_cannot_be_read_says_why(emulator: RunningEmulator, key: Key, ref: str, says: str) -> None:
    with pytest.raises(RoomUnread, match=says.replace(".", r"\.")):
        google_read(http_get(emulator.url), PROJECT)(key, ref)
