"""What ships (the package, the chart, the collection) names the document or the behaviour it follows, never a
project issue by number: a reader of a wheel, a chart or a collection has no access to planb's issue tracker."""

from __future__ import annotations

import re

from planb import paths

SHIPPED = (
    paths.REPO / "src" / "planb",
    paths.REPO / "charts" / "planb",
    paths.REPO / "collections" / "ansible_collections" / "planb" / "gke",
)
TEXT = {".py", ".yml", ".yaml", ".md", ".tpl", ".json", ".txt", ".j2"}
ISSUE = re.compile(r"\b[Ii]ssue \d+")


def test_nothing_shipped_cites_an_issue_number() -> None:
    found = [
        f"{path.relative_to(paths.REPO)}:{number}: {line.strip()}"
        for root in SHIPPED
        for path in sorted(root.rglob("*"))
        if path.suffix in TEXT and path.is_file()
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if ISSUE.search(line)
    ]
    assert not found, "cite the document or the behaviour instead:\n" + "\n".join(found)
