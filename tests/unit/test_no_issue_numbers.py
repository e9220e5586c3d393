"""Nothing in the repository cites a planb issue by its number: a reader of the code, a test, a doc, a wheel, a chart
or a collection has no access to planb's issue tracker, so each names the document or the behaviour it follows.

Every tracked text file is read (``git ls-files``; a file with a NUL byte is binary and skipped), its name included,
so a test file is named after what it tests. Another project's issue stays: ``kueue#<n>``, an owner/repo reference,
or a URL. The pattern is written so that this file's own text does not match it.
"""

from __future__ import annotations

import re
import subprocess

from planb import paths

#: The word, then its number: a space, a '#', or '_' or '-' as in a file name; never inside a word ("tissue").
ISSUE = re.compile(r"(?<![a-z])issues?(?: ?#?|[_-])\d+", re.IGNORECASE)


def _tracked_files() -> list[str]:
    done = subprocess.run(["git", "ls-files", "-z"], cwd=paths.REPO, capture_output=True, check=True, timeout=60)
    return [name for name in done.stdout.decode().split("\0") if name]


def test_nothing_tracked_cites_an_issue_number() -> None:
    files = _tracked_files()
    assert "src/planb/cli.py" in files and "README.md" in files  # the listing reads this checkout
    found = [f"{name}: the file's name" for name in files if ISSUE.search(name)]
    for name in files:
        path = paths.REPO / name
        if not path.is_file():  # deleted in the work tree, not yet committed
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        lines = data.decode("utf-8", errors="replace").splitlines()
        found += [f"{name}:{number}: {line.strip()}" for number, line in enumerate(lines, 1) if ISSUE.search(line)]
    assert not found, "name the document or the behaviour instead:\n" + "\n".join(found)


def test_the_pattern_catches_each_way_of_citing_one() -> None:
    word = "issue"  # built here, so that this file's text cites none
    for cited in (f"{word} 50", f"({word.title()} 38, item 5)", f"{word}s 50-53", f"{word} #50", f"test_{word}50.py"):
        assert ISSUE.search(cited), cited
    for other in ("kueue#10766", "kubernetes-sigs/kueue#123", "github.com/o/r/issues/12", "tissue 3", "an issue's"):
        assert not ISSUE.search(other), other
