"""DEVELOPING.md's package picture names every module of src/planb, and only modules that exist.

The rows of the tables in its section "The package picture of src/planb" start with a module's dotted name
(`` `planb.local.stack.snapshot` ``); ``__init__`` and ``__main__`` files are not listed.
"""

from __future__ import annotations

import re

from planb import paths

DEVELOPING = paths.REPO / "DEVELOPING.md"
SRC = paths.REPO / "src"
SECTION = "## The package picture of src/planb"
#: A table row whose first cell is one module's dotted name in backticks.
ROW = re.compile(r"^\|\s*`(?P<name>planb(?:\.\w+)*)`\s*\|")


def table_modules(text: str) -> list[str]:
    """The dotted names the section's table rows start with, in order (a name twice is kept twice)."""
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    section = text[start : end if end != -1 else len(text)]
    return [m["name"] for line in section.splitlines() if (m := ROW.match(line))]


def source_modules() -> set[str]:
    """Every module under src/planb, by dotted name, but the __init__ and __main__ files."""
    return {
        ".".join(path.relative_to(SRC).with_suffix("").parts)
        for path in SRC.glob("planb/**/*.py")
        if path.stem not in ("__init__", "__main__")
    }


def test_the_parser_reads_module_rows_only() -> None:
    text = "\n".join(
        [
            "# x",
            SECTION,
            "| module | what it holds |",
            "|---|---|",
            "| `planb.kube` | a client |",
            "| `planb.local.stack.ports` | who listens where, `planb.tls` in prose |",
            "not a row `planb.paths`",
            "## Next",
            "| `planb.process` | after the section |",
        ]
    )
    assert table_modules(text) == ["planb.kube", "planb.local.stack.ports"]


def test_every_module_of_src_planb_is_in_the_package_picture() -> None:
    listed = set(table_modules(DEVELOPING.read_text()))
    missing = sorted(source_modules() - listed)
    assert not missing, (
        f"DEVELOPING.md's package picture does not name {', '.join(missing)}. Fix: add a row "
        f"'| `{missing[0]}` | what it holds |' to the table of its wing in the section {SECTION[3:]!r}"
    )


def test_the_package_picture_names_only_modules_that_exist() -> None:
    listed = table_modules(DEVELOPING.read_text())
    gone = sorted(set(listed) - source_modules())
    assert not gone, (
        f"DEVELOPING.md's package picture names {', '.join(gone)}, which is not a module under src/planb "
        f"(or is an __init__/__main__ file). Fix: rename or remove its row in the section {SECTION[3:]!r}"
    )
    twice = sorted({name for name in listed if listed.count(name) > 1})
    assert not twice, f"DEVELOPING.md's package picture names {', '.join(twice)} twice. Fix: keep one row each"


def test_the_section_has_a_row_for_each_wing() -> None:
    listed = table_modules(DEVELOPING.read_text())
    for wing in ("planb.local.", "planb.build."):
        assert any(name.startswith(wing) for name in listed), f"no row of {wing[:-1]} in DEVELOPING.md"
    assert any(not name.startswith(("planb.local.", "planb.build.")) for name in listed)
