"""Tests match their tier: no file under tests/ imports another tier's support.

tests/support is split by who uses a helper, and each file under tests/ may import only these of its packages:

| file | may import |
|---|---|
| ``tests/unit/**`` | ``tests.support.unit``, ``tests.support.shared`` |
| ``tests/integration/**`` | ``tests.support.integration``, ``tests.support.shared`` |
| ``tests/e2e/**`` | ``tests.support.e2e``, ``tests.support.shared`` |
| ``tests/support/<tier>/**`` | its own tier's package, ``tests.support.shared`` |
| ``tests/support/shared/**`` | ``tests.support.shared`` only |
| ``tests/*.py`` (the root conftest, which every tier loads), other folders | ``tests.support.shared`` only |

A helper that two tiers use lives in ``tests.support.shared``; so does one that a shared helper imports. Besides
``import`` statements, a string that names a module under ``tests.support`` (``python -m tests.support.shared...``,
``importlib.import_module``) counts as an import (not in this file, whose strings are the check's own examples).
Every module of tests/support sits in one of the four packages.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

from planb import paths

TESTS = paths.REPO / "tests"
SUPPORT = TESTS / "support"
#: The tiers, each a folder of tests/ and a package of tests/support.
TIERS = ("unit", "integration", "e2e")
PACKAGES = (*TIERS, "shared")
#: A string constant that names a module under tests.support (`python -m tests.support.shared.failover.x`).
DOTTED = re.compile(r"tests\.support(?:\.\w+)*")
#: This file: its strings name modules as the check's examples, not as imports.
SELF = Path(__file__).resolve()


def allowed(path: Path) -> tuple[str, frozenset[str]]:
    """The rule for one file under tests/: its name and the tests.support packages the file may import."""
    parts = path.relative_to(TESTS).parts
    if parts[0] in TIERS:
        return f"tests/{parts[0]} imports tests.support.{parts[0]} and tests.support.shared", frozenset(
            {parts[0], "shared"}
        )
    if parts[0] == "support" and len(parts) > 2 and parts[1] in TIERS:
        return f"tests/support/{parts[1]} imports its own package and tests.support.shared", frozenset(
            {parts[1], "shared"}
        )
    if parts[0] == "support" and len(parts) > 2 and parts[1] == "shared":
        return "tests/support/shared imports only tests.support.shared", frozenset({"shared"})
    return f"tests/{'/'.join(parts[:-1]) or '*.py'} (no tier) imports only tests.support.shared", frozenset({"shared"})


def _package_of(path: Path) -> list[str]:
    return ["tests", *path.relative_to(TESTS).parent.parts]


def support_imports(path: Path, source: str | None = None) -> Iterator[tuple[int, str]]:
    """(line, dotted module) for every module under tests.support that the file imports or names in a string."""
    if source is None:
        yield from _file_support_imports(path)
        return
    yield from _parse_support_imports(path, source)


@functools.cache
def _file_support_imports(path: Path) -> tuple[tuple[int, str], ...]:
    """`support_imports` of a file as it is on disk, read and parsed once for the session's tests. Outside
    tests/support a file that never spells "support" cannot import it (every spelling of such an import, relative
    ones included, holds the word), so it is not parsed; a module of tests/support may reach it with `from . import`."""
    source = path.read_text()
    if "support" not in source and SUPPORT not in path.parents:
        return ()
    return tuple(_parse_support_imports(path, source))


def _parse_support_imports(path: Path, source: str) -> Iterator[tuple[int, str]]:
    tree = ast.parse(source)
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = _package_of(path)
                base = ".".join(package[: len(package) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            # `from tests.support import shared` imports the package tests.support.shared: join each name on.
            names = [f"{module}.{alias.name}" if module == "tests.support" else module for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and path.resolve() != SELF:
            if not DOTTED.fullmatch(node.value):
                continue
            names = [node.value]
        for name in names:
            if name == "tests.support" or name.startswith("tests.support."):
                yield node.lineno, name


def violations(path: Path, source: str | None = None) -> list[str]:
    """One line per import of `path` that its rule does not allow, naming the file, the import and the rule."""
    rule, packages = allowed(path)
    out = []
    for line, name in support_imports(path, source):
        parts = name.split(".")
        if len(parts) < 3 or parts[2] not in packages:
            where = f"{path.relative_to(paths.REPO)}:{line}"
            out.append(f"{where} imports {name}, but {rule} (a helper several tiers use goes to tests/support/shared)")
    return out


def test_every_file_imports_only_its_tiers_support() -> None:
    found = [line for path in sorted(TESTS.rglob("*.py")) for line in violations(path)]
    assert not found, "imports of another tier's support:\n" + "\n".join(found)


def test_every_support_module_sits_in_a_tier_package() -> None:
    """tests/support holds its __init__.py and the four packages; each package has an __init__.py."""
    loose = [
        str(path.relative_to(paths.REPO))
        for path in sorted(SUPPORT.iterdir())
        if path.name not in (*PACKAGES, "__init__.py", "__pycache__")
    ]
    assert not loose, f"move each into tests/support/{{{','.join(PACKAGES)}}}/ by who uses it: {loose}"
    missing = [package for package in PACKAGES if not (SUPPORT / package / "__init__.py").is_file()]
    assert not missing, f"tests/support/<package>/__init__.py missing for {missing}"


def test_every_support_import_names_a_module_that_exists() -> None:
    """A module moved between the packages leaves no import of its old place behind (strings included)."""
    dangling = []
    for path in sorted(TESTS.rglob("*.py")):
        for line, name in support_imports(path):
            target = paths.REPO.joinpath(*name.split("."))
            if not (target.with_suffix(".py").is_file() or (target / "__init__.py").is_file()):
                dangling.append(f"{path.relative_to(paths.REPO)}:{line}: {name}")
    assert not dangling, "imports of tests.support modules that do not exist:\n" + "\n".join(dangling)


def test_the_check_catches_a_unit_test_importing_e2e_support() -> None:
    """The checker itself: a unit test importing tests.support.e2e.stack, in each spelling, is named."""
    fake = TESTS / "unit" / "test_fake.py"
    source = (
        "import tests.support.e2e.stack\n"
        "from tests.support.e2e.stack import x\n"
        "from tests.support import e2e\n"
        "from tests.support.shared import molecule\n"
        "MODULE = 'tests.support.integration.gke.modules'\n"
    )
    found = violations(fake, source)
    assert [line.split(" imports ")[1].split(",")[0] for line in found] == [
        "tests.support.e2e.stack",
        "tests.support.e2e.stack",
        "tests.support.e2e",
        "tests.support.integration.gke.modules",
    ]
    where = fake.relative_to(paths.REPO)  # tests/unit/ and the fake's name, a file that does not exist
    assert found[0].startswith(f"{where}:1 imports tests.support.e2e.stack, but tests/unit imports")
    shared = SUPPORT / "shared" / "x.py"
    assert violations(shared, "from tests.support.unit.keeper_fakes import k\n")
    assert not violations(
        SUPPORT / "e2e" / "x.py", "from tests.support.e2e.waits import w\nimport tests.support.shared\n"
    )
    assert violations(TESTS / "conftest.py", "from tests.support.unit import keeper_fakes\n")
