"""The capacity kinds a rung can be (``planb.catalog.rung_kinds``), written where the chart reads them.

``make values`` runs it (a step of ``planb.build.generate``); a test fails when a copy is stale.

* ``files/rung-kinds.yaml``: per kind what the chart's ladder (``planb.ladder`` in ``_helpers.tpl``) reads of it:
  whether it queues (the ProvisioningRequest admission check, so ``dws.enabled``), whether it is bound to a
  reservation (its flavor names the reservation), its flavor's node labels and tolerations. ``planb.build.chart_files``
  lists it among the chart's generated files.
* ``values.schema.json``: the ``enum`` and ``description`` of ``queues.ladder[].kind`` and the rule that a
  reservation-bound kind needs ``reservation`` (the item's ``if``). The rest of the schema is hand-written; this
  module rewrites those keys alone, and the file as ``json.dumps(indent=2)`` writes it, the schema's own layout.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

from planb.catalog import rung_kinds
from planb.catalog.values import IndentedDumper
from planb.paths import REPO

CHART_DIR = REPO / "charts" / "planb"
RUNG_KINDS = CHART_DIR / "files" / "rung-kinds.yaml"
SCHEMA = CHART_DIR / "values.schema.json"
Kinds = tuple[rung_kinds.RungKind, ...]

_HEADER = (
    "# Generated from the planb catalog by `make values` (python -m planb.build.chart_kinds). Do not edit:\n"
    "# change src/planb/catalog/rung_kinds.py and run `make values`. The chart's ladder (planb.ladder) reads\n"
    "# it: kind -> queued, reservationBound, nodeLabels and tolerations of the kind's flavor.\n"
)


def table(kinds: Kinds | None = None) -> dict[str, dict[str, Any]]:
    """What the chart reads of each capacity kind, keyed by its name, in the catalog's order."""
    return {
        kind.name: {
            "queued": kind.queued,
            "reservationBound": kind.reservation_bound,
            "nodeLabels": dict(kind.node_labels),
            "tolerations": [dict(t) for t in kind.tolerations],
        }
        for kind in (rung_kinds.KINDS if kinds is None else kinds)
    }


def render_rung_kinds(kinds: Kinds | None = None) -> str:
    """files/rung-kinds.yaml's text."""
    return _HEADER + yaml.dump(table(kinds), Dumper=IndentedDumper, sort_keys=False, width=140)


def schema_with_kinds(text: str, kinds: Kinds | None = None) -> str:
    """The chart's values schema ``text`` with ``queues.ladder[].kind``'s enum and description, and the rule that a
    reservation-bound kind needs ``reservation``, written from the catalog's kinds."""
    kinds = rung_kinds.KINDS if kinds is None else kinds
    schema = json.loads(text)
    item = schema["properties"]["queues"]["properties"]["ladder"]["items"]
    item["properties"]["kind"]["enum"] = rung_kinds.names(kinds)
    item["properties"]["kind"]["description"] = f"how GKE provides the plan's capacity: {rung_kinds.described(kinds)}"
    item["if"] = {"properties": {"kind": {"enum": [kind.name for kind in kinds if kind.reservation_bound]}}}
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def expected(chart: Path = CHART_DIR, kinds: Kinds | None = None) -> dict[Path, str]:
    """Path -> wanted content of the chart's two copies of the kinds, in the chart at ``chart``."""
    schema = chart / SCHEMA.name
    return {
        chart / RUNG_KINDS.relative_to(CHART_DIR): render_rung_kinds(kinds),
        schema: schema_with_kinds(schema.read_text(), kinds),
    }


def write(chart: Path = CHART_DIR, kinds: Kinds | None = None) -> list[Path]:
    """(Re)write both copies in the chart at ``chart`` (a copy of the chart, for a test); returns their paths."""
    written = []
    for path, content in expected(chart, kinds).items():
        path.write_text(content)
        written.append(path)
    return written


if __name__ == "__main__":
    for written_path in write():
        print(f"wrote {written_path.relative_to(REPO)}")
    sys.exit(0)
