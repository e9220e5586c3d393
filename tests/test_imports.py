"""planb's packages depend on each other in one direction only (no package imports one that imports it)."""

from __future__ import annotations

import ast
from pathlib import Path

from planb import paths

SRC = paths.REPO / "src"


def _area(module: str) -> str:
    """planb.localstack.stack -> planb.localstack; planb.process -> planb.process."""
    return ".".join(module.split(".")[:2])


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("planb.")}


def _area_edges() -> dict[str, set[str]]:
    modules = {
        ".".join(p.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__"): p for p in SRC.rglob("*.py")
    }
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        for target in _imports(path) & set(modules):
            if _area(target) != _area(name):
                edges.setdefault(_area(name), set()).add(_area(target))
    return edges


def _cycle_through(start: str, edges: dict[str, set[str]]) -> list[str] | None:
    stack: list[list[str]] = [[start]]
    while stack:
        path = stack.pop()
        for nxt in sorted(edges.get(path[-1], ())):
            if nxt == start:
                return [*path, start]
            if nxt not in path:
                stack.append([*path, nxt])
    return None


def test_no_two_packages_import_each_other() -> None:
    edges = _area_edges()
    assert edges["planb.localstack"] >= {"planb.gke", "planb.process"}  # the checker sees real imports
    cycles = {area: cycle for area in edges if (cycle := _cycle_through(area, edges))}
    assert cycles == {}


def test_no_test_module_imports_another() -> None:
    """Shared test helpers live in helper modules (conftest.py, helpers.py, fakes.py), never in a test_*.py."""
    tests = paths.REPO / "tests"
    offenders = []
    for path in sorted(tests.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom):
                module = node.module or ""
                names = [module, *(f"{module}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            found = {name for name in names if name.split(".")[-1].startswith("test_") and name.startswith("tests")}
            offenders += [f"{path.relative_to(tests)}: {name}" for name in sorted(found)]
    assert offenders == []
