"""Where each TPU generation is offered: the zones Google lists, dated, with the page they come from.

A TPU slice lives in one zone, and each generation is offered only in the zones Google's "TPU
regions and zones" page lists. planb refuses a TPU node pool in any other zone before any API call:
that is **planb's policy based on Google's list**, not a refusal GKE documents, and the list below
is only as complete as the copy that was read (rows that could not be read are named in comments
and carried nowhere). A zone Google adds later is refused until this table is updated; the modules
and roles have a switch (``check_tpu_zone`` / ``gke_node_pool_check_tpu_zone``) to skip the check.

Flex-start: Google's Cloud TPU page "Request TPUs using flex-start" lists zones for the **Cloud TPU
queued-resources API** only, and the seed (Google's own GKE tutorial) runs GKE flex-start v6e in
us-east5-b, which that list does not name; there is no GKE flex-start zone list. So plan B is held
to the generation's TPU zones below, never to a flex-start zone list.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Google's TPU zone table (the "North America" rows; TPU7x, v6e, v5p, v5e, v4).
REGIONS_ZONES_URL = "https://cloud.google.com/tpu/docs/regions-zones"
#: The date the table was last updated, as the copy planb read it carries it.
REGIONS_ZONES_AS_OF = "2026-07-10"
#: Calendar-mode limitations (last updated 2025-12-18): lists v6e in asia-northeast1-b and
#: europe-west4-a and v5e in europe-west4-b, zones whose rows were cut off in every copy of the
#: table above that could be read.
CALENDAR_MODE_URL = "https://cloud.google.com/tpu/docs/calendar-mode-reservation"
CALENDAR_MODE_AS_OF = "2025-12-18"
#: The table's other variant (same page family), which adds the AI zone us-south1-ai1b for v6e.
TYPES_ZONES_URL = "https://cloud.google.com/tpu/docs/types-zones"


@dataclass(frozen=True)
class TpuZones:
    """The zones a TPU generation is offered in, and where each zone comes from."""

    generation: str
    zones: tuple[str, ...]
    #: zone -> the page that lists it.
    sources: dict[str, str]


def _zones(generation: str, **by_source: tuple[str, ...]) -> TpuZones:
    urls = {"table": REGIONS_ZONES_URL, "calendar": CALENDAR_MODE_URL, "types": TYPES_ZONES_URL}
    sources = {zone: urls[source] for source, zones in by_source.items() for zone in zones}
    return TpuZones(generation, tuple(sorted(sources)), sources)


# Not carried (could not be read in any stored copy): the Europe rows of v5p and v5e (except v5e's
# europe-west4-b from the calendar-mode page), every Asia Pacific row except v6e's asia-northeast1-b,
# and South America. The types-zones variant also lists "us-central1-ai1" for v6e, which is not a
# whole zone name in that copy, so it is not carried either.
TPU_ZONES: dict[str, TpuZones] = {
    entry.generation: entry
    for entry in (
        _zones("tpu7x", table=("us-central1-ai1a", "us-central1-c")),
        _zones(
            "v6e",
            table=("us-central1-b", "us-east1-d", "us-east5-a", "us-east5-b", "europe-west4-a"),
            calendar=("asia-northeast1-b",),
            types=("us-south1-ai1b",),
        ),
        _zones("v5p", table=("us-central1-a", "us-east5-a")),
        _zones("v5e", table=("us-central1-a", "us-south1-a", "us-west1-c", "us-west4-a"), calendar=("europe-west4-b",)),
        _zones("v4", table=("us-central2-b",)),
    )
}


def zones(generation: str) -> tuple[str, ...]:
    """The zones Google lists for TPU ``generation`` (empty for one the table does not hold)."""
    entry = TPU_ZONES.get(generation)
    return entry.zones if entry else ()


def region_of(location: str) -> str:
    """The region of a zone (``us-east5-b`` -> ``us-east5``, ``us-central1-ai1a`` -> ``us-central1``);
    a region is its own."""
    return "-".join(location.split("-")[:2])


def is_zone(location: str) -> bool:
    """Whether ``location`` names a zone (three dash-separated parts) rather than a region."""
    return location.count("-") >= 2
