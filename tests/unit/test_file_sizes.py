"""No hand-written Python file is over 400 lines, and none over 350 without a note saying why it holds one thing: a
module that grows past 350 is split by what it holds, or says in its module docstring (or, for a file whose first
lines are comments, such as an Ansible module, in those comments) "Holds one thing: ..." and why it stays one file.

Generated files say so in their first lines ("Do not edit") and are left out: the catalog's facts in the
collection, its copies of planb's standard-library modules. The chart's copies of training/ and the failover
controller are byte copies of files this test reads at their source.
"""

from __future__ import annotations

import ast
import itertools
import subprocess

from planb import paths

MAX_LINES = 400
#: Past this many lines a file needs NOTE.
AIM_LINES = 350
NOTE = "Holds one thing:"


def _tracked_python_files() -> list[str]:
    done = subprocess.run(
        ["git", "ls-files", "-z", "*.py"], cwd=paths.REPO, capture_output=True, check=True, timeout=60
    )
    return [name for name in done.stdout.decode().split("\0") if name]


def _generated(head: list[str]) -> bool:
    return any("do not edit" in line.lower() for line in head)


def _noted(text: str) -> bool:
    """Whether the module docstring, or the comment lines the file opens with, hold NOTE."""
    leading = itertools.takewhile(lambda line: line.startswith("#") or not line.strip(), text.splitlines())
    if any(NOTE in line for line in leading):
        return True
    try:
        docstring = ast.get_docstring(ast.parse(text)) or ""
    except SyntaxError:
        return False
    return NOTE in docstring


def _sizes() -> dict[str, tuple[int, bool]]:
    """Every hand-written Python file: its lines, and whether it carries the note."""
    files = _tracked_python_files()
    assert "training/train.py" in files and "src/planb/cli.py" in files  # the listing reads this checkout
    out = {}
    for name in files:
        path = paths.REPO / name
        if not path.exists():  # deleted in the work tree, not yet committed
            continue
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        if not _generated(lines[:3]):
            out[name] = (len(lines), len(lines) > AIM_LINES and _noted(text))
    return out


def test_no_hand_written_python_file_is_over_400_lines() -> None:
    over = {name: lines for name, (lines, _) in _sizes().items() if lines > MAX_LINES}
    assert over == {}, f"over {MAX_LINES} lines; split each by what it holds: {over}"


def test_a_hand_written_python_file_over_350_lines_says_why_it_holds_one_thing() -> None:
    unnoted = {name: lines for name, (lines, noted) in _sizes().items() if lines > AIM_LINES and not noted}
    assert unnoted == {}, (
        f"over {AIM_LINES} lines without a note: split each by what it holds, or say in its module docstring "
        f'"{NOTE} ..." and why it stays one file: {unnoted}'
    )


def test_the_note_is_read_from_the_docstring_or_the_opening_comments_only() -> None:
    assert _noted(f'"""A module.\n\n{NOTE} the one table, which Ansible reads from this file."""\nX = 1\n')
    assert _noted(f"#!/usr/bin/python\n# planb: a module.\n# {NOTE} its interface.\nDOCUMENTATION = ''\n")
    assert not _noted('"""A module that holds two things."""\n\nX = 1\n')
    assert not _noted(f'"""A module."""\n\n# {NOTE} said too late, in a comment further down.\nX = 1\n')
    assert not _noted(f'"""A module."""\n\nX = "{NOTE} in a string is no note"\n')


def test_a_generated_file_is_told_by_its_header() -> None:
    assert _generated(["# Generated from planb's catalog by `make values`. Do not edit:"])
    assert not _generated(['"""A module."""', "", "from __future__ import annotations"])
