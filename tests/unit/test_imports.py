"""The import rules of planb's packages and of the tests.

* planb's packages depend on each other in one direction only (no package imports one that imports it).
* The product is what runs on GKE: nothing under planb outside ``local/`` and ``build/`` is imported only by
  ``local/``. What only the stand-ins use lives in the local wing (``planb.local.tls``, ``planb.local.process``).
* The capacity simulator imports nothing of the local stack (``planb.local.stack``): it reads the cluster and
  the GKE emulator through their APIs, as GKE's autoscaler does.
* ``planb.status`` does not import the failover controller (a self-contained script that needs the
  ``kubernetes`` client); it reads the controller's names from ``planb.failover.names``.
* ``import planb.cli`` imports no sub-command's package; a sub-command's package is imported when it runs.
* No module under tests/ imports a test module (``test_*.py``) or a conftest: shared helpers live in
  tests/support/, and a conftest only brings in fixtures from there (which of its packages a tier may import:
  tests/unit/test_support_tiers.py).
* Every test file sits under tests/unit, tests/integration or tests/e2e: its folder is its tier.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterable
from pathlib import Path

from planb import paths
from planb.cli import COMMANDS

SRC = paths.REPO / "src"
TESTS = paths.REPO / "tests"
#: The packages of `planb`'s sub-commands (planb.cli imports each only when its command runs).
SUBCOMMAND_PACKAGES = (
    "planb.local.capacity",
    "planb.catalog",
    "planb.local.gke_emulator",
    "planb.local.stack",
    "planb.local.rayhead",
    "planb.status",
)


#: The wings below `planb` that hold no product code: the stand-ins and the generators.
WINGS = ("planb.local", "planb.build")


def _area(module: str) -> str:
    """planb.local.stack.parts -> planb.local.stack; planb.build.golden -> planb.build; planb.kube -> itself."""
    parts = module.split(".")
    return ".".join(parts[:3] if parts[:2] == ["planb", "local"] and len(parts) > 2 else parts[:2])


def _wing(module: str) -> str | None:
    return next((wing for wing in WINGS if module == wing or module.startswith(wing + ".")), None)


@functools.cache
def _imports(path: Path) -> frozenset[str]:
    """The planb modules a file imports by a statement; each file read and parsed once for the session's tests."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return frozenset(name for name in found if name.startswith("planb."))


def _modules() -> dict[str, Path]:
    """Every planb module's dotted name -> its file."""
    return {".".join(p.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__"): p for p in SRC.rglob("*.py")}


def _under(package: str) -> dict[str, Path]:
    return {name: path for name, path in _modules().items() if name == package or name.startswith(package + ".")}


def _reachable(start: set[str]) -> set[str]:
    """The planb modules `start` imports, directly or through others (the packages a dotted import runs too)."""
    modules = _modules()
    seen: set[str] = set()
    todo = list(start)
    while todo:
        name = todo.pop()
        if name in seen or name not in modules:
            continue
        seen.add(name)
        parts = name.split(".")
        todo.extend(".".join(parts[:i]) for i in range(2, len(parts)))  # planb.a.b runs planb.a first
        todo.extend(_imports(modules[name]) & set(modules))
    return seen


def _area_edges() -> dict[str, set[str]]:
    modules = _modules()
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
    assert edges["planb.local.stack"] >= {
        "planb.local.gke_emulator",
        "planb.local.process",
    }  # the checker sees real imports
    cycles = {area: cycle for area in edges if (cycle := _cycle_through(area, edges))}
    assert cycles == {}


def test_the_product_imports_nothing_of_the_local_wing_nor_of_the_generators() -> None:
    product = {name: path for name, path in _modules().items() if _wing(name) is None}
    assert {"planb.catalog.values", "planb.status.report", "planb.failover.controller", "planb.cli"} <= set(product)
    offenders = {name: sorted(target for target in _imports(path) if _wing(target)) for name, path in product.items()}
    assert {name: found for name, found in offenders.items() if found} == {}
    # ... nor through others: what the product's modules reach.
    assert sorted(m for m in _reachable(set(product)) if _wing(m)) == []


def _importers() -> dict[str, set[str]]:
    """planb module -> the planb modules that import it: by a statement (``import planb.a.b`` runs planb.a too), or
    by name in planb.cli's COMMANDS, which planb.cli imports (importlib) when that command runs."""
    modules = _modules()
    by_name = {"planb.cli": {command.module for command in COMMANDS}}
    found: dict[str, set[str]] = {}
    for name, path in modules.items():
        for target in (_imports(path) | by_name.get(name, set())) & set(modules):
            parts = target.split(".")
            for end in range(2, len(parts) + 1):
                found.setdefault(".".join(parts[:end]), set()).add(name)
    return found


def _entry_points() -> set[str]:
    """The modules something outside Python runs: pyproject's [project.scripts] and every ``__main__``."""
    scripts = tomllib.loads((paths.REPO / "pyproject.toml").read_text())["project"]["scripts"]
    return {target.split(":")[0] for target in scripts.values()} | {m for m in _modules() if m.endswith(".__main__")}


def _only_the_local_wing_imports(names: Iterable[str]) -> dict[str, list[str]]:
    """Of `names`, those that are no entry point and whose importers all lie under planb.local, with them."""
    importers, entry_points = _importers(), _entry_points()
    found = {name: importers.get(name, set()) - {name} for name in names if name not in entry_points}
    return {
        name: sorted(users) for name, users in found.items() if users and all(_wing(u) == "planb.local" for u in users)
    }


def test_no_product_module_is_imported_only_by_the_local_wing() -> None:
    """Nothing under planb outside local/ and build/ is imported only by local/.

    A product module holds the rule when a module outside planb.local imports it (a product module, or a
    generator of planb.build), or when it is an entry point: pyproject's [project.scripts] (``planb`` runs
    planb.cli) or a ``__main__`` (the queues chart runs ``python -m planb.failover``); an entry point is the
    product's own even when the local wing runs or imports it too. A module planb.cli's COMMANDS names counts
    as imported by planb.cli. Tests and hack/ are no importers: a module only they and the stand-ins use is
    the local wing's. A module nothing imports and nothing runs is not this rule's case.
    """
    product = sorted(name for name in _modules() if _wing(name) is None)
    assert {"planb.kube", "planb.paths", "planb.status.cli"} <= set(product)  # the checker sees real modules
    assert _only_the_local_wing_imports(product) == {}, "move these into planb.local (src/planb/local/)"


def test_the_checker_sees_a_module_only_the_local_wing_imports() -> None:
    """The rule above can fail: planb.local.tls, read as if it stood on the product's side, is one."""
    found = _only_the_local_wing_imports(["planb.local.tls", "planb.kube", "planb.failover.__main__"])
    assert list(found) == ["planb.local.tls"]
    assert "planb.local.stack.kueue" in found["planb.local.tls"]


def test_the_checker_sees_the_local_wing_import_the_product() -> None:
    """The rule above can fail: the local wing does import the product, and the checker sees it."""
    reached = _reachable(set(_under("planb.local")))
    assert {"planb.catalog", "planb.local.gke_emulator.rules"} <= reached


def test_the_capacity_simulator_imports_nothing_of_the_local_stack() -> None:
    offenders = {
        name: sorted(target for target in _imports(path) if _area(target) == "planb.local.stack")
        for name, path in _under("planb.local.capacity").items()
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_status_does_not_import_the_failover_controller() -> None:
    assert "planb.failover.names" in _reachable(set(_under("planb.status")))  # the checker follows real imports
    assert "planb.failover.controller" not in _reachable(set(_under("planb.status")))


def test_importing_the_cli_imports_no_subcommand_package() -> None:
    code = "import json, sys, planb.cli; print(json.dumps(sorted(m for m in sys.modules if m.startswith('planb'))))"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout))
    assert "planb.cli" in loaded
    assert sorted(m for m in loaded if _area(m) in SUBCOMMAND_PACKAGES) == []


def _test_modules_imported(path: Path) -> set[str]:
    """The test modules (tests/**/test_*.py) one file under tests/ imports, as paths relative to the repo."""
    package = path.parent
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[tuple[Path, str]] = []  # (directory the dotted name starts in, dotted name)
        if isinstance(node, ast.Import):
            names = [(paths.REPO, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = paths.REPO if node.level == 0 else package.parents[node.level - 2] if node.level > 1 else package
            module = node.module or ""
            names = [(base, module)] + [(base, f"{module}.{alias.name}".lstrip(".")) for alias in node.names]
        for base, dotted in names:
            if not dotted:
                continue
            target = base.joinpath(*dotted.split(".")).with_suffix(".py")
            is_test_or_conftest = target.name.startswith("test_") or target.name == "conftest.py"
            if is_test_or_conftest and target.is_file() and TESTS in target.parents:
                found.add(str(target.relative_to(paths.REPO)))
    return found


def test_no_test_module_imports_another() -> None:
    offenders = {
        str(path.relative_to(paths.REPO)): sorted(found)
        for path in sorted(TESTS.rglob("*.py"))
        if (found := _test_modules_imported(path))
    }
    assert offenders == {}, "move what these share into tests/support/"


def test_every_test_file_sits_in_a_tier_folder() -> None:
    tiers = {"unit", "integration", "e2e"}
    found = {path.relative_to(TESTS).parts[0] for path in TESTS.rglob("test_*.py")}
    assert "unit" in found  # the check sees real files
    assert (
        sorted(
            str(p.relative_to(paths.REPO))
            for p in TESTS.rglob("test_*.py")
            if p.relative_to(TESTS).parts[0] not in tiers
        )
        == []
    )
