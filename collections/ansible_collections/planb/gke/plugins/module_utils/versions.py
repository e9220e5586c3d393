# Generated: a copy of src/planb/catalog/versions.py made by `make values`. Do not edit:
# change that file and regenerate; tests/unit/catalog/test_collection_facts.py fails when this is stale.
"""GKE versions: how one is read and compared with a minimum, and the minimums GKE documents for TPU node pools.

A GKE version is ``major.minor``, ``major.minor.patch`` or ``major.minor.patch-gke.N`` (1.34, 1.34.1,
1.34.1-gke.1829001: https://cloud.google.com/kubernetes-engine/versioning). A shorter version stands for
its newest release, so 1.34 is at least 1.34.0-gke.2201000.

This file is the one hand-written copy of these rules. The GKE emulator (``planb.local.gke_emulator.rules``)
imports it; ``make values`` copies it verbatim into the planb.gke collection
(``plugins/module_utils/versions.py``), whose input validation uses the copy, so it imports nothing but the
standard library.
"""

from __future__ import annotations

import re

#: GKE's Ironwood (TPU7x) page: "Ironwood (TPU7x) is available in GKE Standard clusters that run version
#: 1.34.0-gke.2201000 and later"; also the workload policy that replaces --tpu-topology.
DOC_IRONWOOD = "https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood"
#: GKE's TPU flex-start page: the oldest version whose TPU node pools may use flex-start.
DOC_TPU_FLEX = "https://cloud.google.com/kubernetes-engine/docs/how-to/tpu-flex-start"
#: GKE version from which TPU node pools may use flex-start (DOC_TPU_FLEX).
TPU_FLEX_START_MIN = (1, 33, 0, 1712000)
#: TPU generation -> (oldest GKE version whose Standard clusters run its node pools, the page that says so).
TPU_MIN_VERSION: dict[str, tuple[tuple[int, int, int, int], str]] = {"tpu7x": ((1, 34, 0, 2201000), DOC_IRONWOOD)}

_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+)(?:-gke\.(\d+))?)?$")


def parse_version(version: object) -> tuple[int, ...] | None:
    """(major, minor[, patch[, gke]]) of a GKE version, None when it is not one."""
    match = _VERSION.fullmatch(str(version))
    if not match:
        return None
    return tuple(int(part) for part in match.groups() if part is not None)


def version_at_least(version: object, minimum: tuple[int, ...]) -> bool:
    """Whether every version matching ``version`` (a prefix like 1.34 counts as its newest) is >= ``minimum``."""
    parsed = parse_version(version)
    if parsed is None:
        return False
    given = len(parsed)
    if parsed[:given] != minimum[:given]:
        return parsed[:given] > minimum[:given]
    return True  # equal on every component given: a prefix stands for its newest release


def version_text(version: tuple[int, int, int, int]) -> str:
    """(1, 34, 0, 2201000) -> '1.34.0-gke.2201000'."""
    major, minor, patch, gke = version
    return f"{major}.{minor}.{patch}-gke.{gke}"
