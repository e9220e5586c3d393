"""docs/first-run.md's rule (issue 35): every step an operator takes is either tested here, with the test named, or
marked Google-only; and every test it names exists."""

from __future__ import annotations

import re

from planb import paths

PAGE = paths.REPO / "docs" / "first-run.md"
MARKS = ("**Tested", "**Google-only")


def _sections() -> dict[str, str]:
    parts = re.split(r"^## ", PAGE.read_text(), flags=re.M)[1:]
    return {part.splitlines()[0]: part for part in parts}


def test_every_step_is_marked_tested_or_google_only() -> None:
    sections = _sections()
    assert len(sections) >= 10, sorted(sections)
    unmarked = [title for title, text in sections.items() if not any(mark in text for mark in MARKS)]
    assert unmarked == [], f"steps with neither {' nor '.join(MARKS)}: {unmarked}"


def test_every_gcloud_command_sits_in_a_step_that_says_what_is_google_only() -> None:
    """gcloud acts on a real project; the page says which of its effects no machine here can test."""
    offending = []
    for title, text in _sections().items():
        blocks = re.findall(r"^```[a-z]*\n(.*?)^```", text, flags=re.M | re.S)
        commands = [line for block in blocks for line in block.splitlines() if line.lstrip().startswith("gcloud ")]
        if commands and "**Google-only" not in text:
            offending.append((title, commands))
    assert offending == []


def test_every_test_the_page_names_exists() -> None:
    named = set(re.findall(r"`(tests/[\w/]+\.py)", PAGE.read_text()))
    assert named, "the page names no test"
    missing = sorted(path for path in named if not (paths.REPO / path).is_file())
    assert missing == []
