"""Every generated file, written again from its source, in the order one feeds the next.

1. the shipped profiles' values files, charts/planb/values/*.yaml (planb.catalog.values, from the catalog);
2. the chart's copies of training/*.py and the failover controller, charts/planb/files (chart_files), and of the
   capacity kinds, files/rung-kinds.yaml and the schema's kind enum (chart_kinds);
3. the collection's catalog facts, its module_utils (collection);
4. the golden files, tests/golden (golden: the CLI's output and `helm template`, which read 1 and 2);
5. the chart's README, charts/planb/README.md (chart_docs: helm-docs over values.yaml's comments).

``make generate`` runs it (``python -m planb.build.generate``); ``make verify`` (planb.build.verify) runs it and
then fails on any difference from the commit. Steps 4 and 5 run the pinned helm and helm-docs (``make
chart-tools``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from planb import paths
from planb.build import chart_docs, chart_files, chart_kinds, collection, golden
from planb.catalog import values

#: (what, the step writing it): run in this order.
STEPS: Sequence[tuple[str, Callable[[], list[Path]]]] = (
    ("profiles' values files", lambda: values.write_all(paths.REPO / "charts" / "planb" / "values")),
    ("chart's copies of the job and controller", chart_files.write_all),
    ("chart's capacity kinds", lambda: chart_kinds.write()),
    ("collection's catalog facts", collection.write),
    ("golden files", golden.write),
    ("chart README", lambda: [chart_docs.write()]),
)


def run(say: Callable[[str], None] = print) -> list[Path]:
    """Run every step; the files written."""
    written: list[Path] = []
    for what, step in STEPS:
        files = step()
        say(f"[planb generate] {what}: {len(files)} file(s)")
        written.extend(files)
    return written


def main() -> int:
    run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
