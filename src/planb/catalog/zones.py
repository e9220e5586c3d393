"""Where each TPU generation is offered: the zones Google lists, dated, with the page they come from.

A TPU slice lives in one zone, and each generation is offered only in the zones Google's "TPU
regions and zones" page lists. planb refuses a TPU node pool in any other zone before any API call:
that is **planb's policy based on Google's list**, not a refusal GKE documents, and the list below
is only as complete as the copy that was read (rows that could not be read are named in comments
and carried nowhere). A zone Google adds later is refused until this table is updated; the modules
and roles have a switch (``check_tpu_zone`` / ``gke_node_pool_check_tpu_zone``) to skip the check.

Flex-start (plan B, a DWS rung): GKE's flex-start page ("About flex-start provisioning", section
"Requirements") lists the zones where GKE offers flex-start TPUs, per generation. A DWS rung in any
other zone is refused before any API call, as **Google's requirement**, not planb's policy; the list
below is the one planb read, dated (``FLEX_START_ZONES``). The Cloud TPU page "Request TPUs using
flex-start" is a different list, for the Cloud TPU queued-resources API, and is not used. GPUs are
held to no flex-start zone list: GKE's page lists zones for TPUs only.
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


#: GKE's flex-start page; its "Requirements" section lists, per TPU generation, the zones flex-start supports.
FLEX_START_ZONES_URL = "https://cloud.google.com/kubernetes-engine/docs/concepts/provisioning-model"
#: The date planb read that list (a stored copy of the page; the copy carries no "last updated" date).
FLEX_START_ZONES_AS_OF = "2026-12-04"

#: TPU generation -> the zones GKE's flex-start page lists for it: "To run TPUs, use GKE version
#: 1.33.0-gke.1712000 or later. Flex-start supports the following version and zones", then three items, then
#: "TPU v3 and v4 are not supported". The copy read had lost each item's generation label, so each is named
#: by the TPU zone table above, which it must agree with: asia-northeast1-b is a zone of v6e alone, us-west4-a
#: of v5e alone, and the third item (us-east5-a, after v6e's own item) of v5p. TPU7x is not on the page, as
#: planb's catalog already says (tpu.TPU7X.flex_start is false). A generation missing here gets no flex-start.
FLEX_START_ZONES: dict[str, tuple[str, ...]] = {
    "v6e": ("asia-northeast1-b", "us-east5-a", "us-east5-b"),
    "v5e": ("us-west4-a",),
    "v5p": ("us-east5-a",),
}


def flex_start_zones(generation: str) -> tuple[str, ...]:
    """The zones GKE's flex-start page lists for TPU ``generation`` (empty for one it does not list)."""
    return FLEX_START_ZONES.get(generation, ())


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
