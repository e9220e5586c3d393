"""Dependencies as they are: what planb declares is what its code uses, no more and no less.

* ``pyproject.toml``'s ``[project] dependencies`` are the third-party distributions the product imports (an
  ``import`` or ``from`` statement, or a package named to ``importlib``, e.g. the discovery documents
  ``importlib.resources.files("googleapiclient.discovery_cache")`` reads), unpinned: requirements.txt pins them.
  Each extra of ``[project.optional-dependencies]`` is what its part of ``src/planb`` imports beyond the core:
  ``local`` the local wing's (``planb.local``), ``timeline`` the timeline's picture's
  (``planb.status.timeline_draw``). A module that only a part imports belongs to that part (the local wing's sit
  under ``planb.local``: tests/unit/test_imports.py), so ``pip install planb`` pulls nothing of the extras.
* The failover controller's package (``src/planb/failover``, shipped in the queues chart's ConfigMap and run in a
  stock Python image) imports the standard library only.

The planb.gke collection's and requirements.yml's collections are tests/unit/test_collection_dependencies.py.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import re
import sys
import tomllib
from collections.abc import Iterable
from pathlib import Path

import pytest

from planb import paths

SRC = paths.REPO / "src" / "planb"
PYPROJECT = paths.REPO / "pyproject.toml"

#: importlib calls whose first argument names a module (or package) to load or read from.
IMPORTLIB_CALLS = frozenset({"import_module", "files", "find_spec", "as_file"})


def _normalize(name: str) -> str:
    """PEP 503: runs of -, _ and . become one -, lower case."""
    return re.sub(r"[-_.]+", "-", name).lower()


# -- Python: src/planb -> pyproject.toml -------------------------------------------------------------------


def imported_modules(root: Path) -> dict[str, set[str]]:
    """Module -> the files under root that import it (statements and importlib's string arguments)."""
    return {module: set(files) for module, files in _scan(root).items()}


@functools.cache
def _scan(root: Path) -> dict[str, set[str]]:
    """`imported_modules` of `root`, its files read and parsed once for the session's tests (callers get copies)."""
    found: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        names: list[str] = []
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.append(node.module)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in IMPORTLIB_CALLS
                and "importlib" in ast.unparse(node.func.value)
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                names.append(node.args[0].value)
        for name in names:
            found.setdefault(name, set()).add(str(path.relative_to(paths.REPO)))
    return found


def _top(module: str) -> str:
    return module.split(".", 1)[0]


def third_party(modules: dict[str, set[str]]) -> dict[str, set[str]]:
    """The modules neither in the standard library nor planb's own (its package, and the job's training/ modules)."""
    # training/'s scripts and its package planb_train are the job's own, which planb.build.aot loads from the checkout
    # (no distribution).
    job = {path.stem for path in (paths.REPO / "training").glob("*.py")} | {"planb_train"}
    own = {"planb", "__future__", *sys.stdlib_module_names, *job}
    return {name: files for name, files in modules.items() if _top(name) not in own}


def _owns(dist: str, module: str) -> bool:
    """Whether the distribution's files hold the module (a package folder or a .py file)."""
    stem = module.replace(".", "/")
    files = importlib.metadata.distribution(dist).files or []
    return any(str(file).startswith(stem + "/") or str(file) == stem + ".py" for file in files)


def distributions(modules: Iterable[str]) -> dict[str, str]:
    """Module -> the PEP 503 name of the installed distribution that provides it.

    A namespace package (``google``) is shared by several distributions: the one that holds the module decides.
    """
    provided = importlib.metadata.packages_distributions()
    out: dict[str, str] = {}
    for module in modules:
        dists = set(provided.get(_top(module), []))
        if len(dists) > 1:
            dists = {dist for dist in dists if _owns(dist, module)}
        assert len(dists) == 1, (
            f"src/planb imports {module!r}, which {len(dists)} installed distributions provide ({sorted(dists)}): "
            "install the project's dependencies (make setup)"
        )
        out[module] = _normalize(dists.pop())
    return out


def declared() -> dict[str, list[str]]:
    """pyproject.toml's dependencies as written: the core under CORE, then each extra under its name."""
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    return {CORE: project["dependencies"], **project.get("optional-dependencies", {})}


# -- Python: the core and the extras -------------------------------------------------------------------------

#: The part of src/planb whose imports are the core dependencies: the product, the failover controller and the
#: generators.
CORE = "core"
#: Each extra and the modules (with what is under them) whose imports it holds.
EXTRA_ROOTS = {"local": ("planb.local",), "timeline": ("planb.status.timeline_draw",)}


def _module_files() -> dict[str, str]:
    """Every planb module's dotted name -> its file, relative to the repository (as imported_modules names it)."""
    root = SRC.parent
    return {
        ".".join(p.relative_to(root).with_suffix("").parts).removesuffix(".__init__"): str(p.relative_to(paths.REPO))
        for p in SRC.rglob("*.py")
    }


def _importers() -> dict[str, set[str]]:
    """planb module -> the planb modules that import it (``from planb import x`` imports planb.x)."""
    files = _module_files()
    found: dict[str, set[str]] = {}
    for importer, file in files.items():
        for node in ast.walk(ast.parse((paths.REPO / file).read_text(), filename=file)):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            for name in names:
                if name in files:
                    found.setdefault(name, set()).add(importer)
    return found


@functools.cache
def parts() -> dict[str, str]:
    """File under src/planb -> the part whose dependencies it needs: CORE or an extra's name.

    An extra holds its roots and every module that only that extra's modules import (none other, not even a
    lazy import inside a function), so that the core never reaches it.
    """
    files = _module_files()
    part = {
        name: next(
            (extra for extra, roots in EXTRA_ROOTS.items() for root in roots if (name + ".").startswith(root + ".")),
            CORE,
        )
        for name in files
    }
    importers = _importers()
    moved = True
    while moved:
        moved = False
        for name in files:
            users = {part[user] for user in importers.get(name, set()) - {name}}
            if part[name] == CORE and len(users) == 1 and (extra := users.pop()) != CORE:
                part[name], moved = extra, True
    return {files[name]: owner for name, owner in part.items()}


@functools.cache
def needed() -> dict[str, dict[str, set[str]]]:
    """Part -> distribution -> the files of that part that import it; an extra's lists only what the core lacks."""
    owner = parts()
    found = third_party(imported_modules(SRC))
    dists = distributions(found)
    out: dict[str, dict[str, set[str]]] = {CORE: {}, **{extra: {} for extra in EXTRA_ROOTS}}
    for module, files in found.items():
        for file in files:
            out[owner[file]].setdefault(dists[module], set()).add(file)
    for extra in EXTRA_ROOTS:
        out[extra] = {dist: files for dist, files in out[extra].items() if dist not in out[CORE]}
    return out


def test_the_scan_finds_planbs_imports() -> None:
    """An empty or broken scan would make the tests below pass on nothing."""
    found = {_top(module) for module in third_party(imported_modules(SRC))}
    assert {"yaml", "urllib3", "cryptography", "googleapiclient", "matplotlib"} <= found, sorted(found)
    assert "planb" in {_top(module) for module in imported_modules(SRC)} and "json" not in found


def test_the_parts_follow_the_imports() -> None:
    """The local wing's modules (planb.local.tls, which imports cryptography) are the extra's; the product's stay in
    the core."""
    owner = parts()
    assert owner["src/planb/local/gke_emulator/discovery.py"] == "local"
    assert owner["src/planb/local/tls.py"] == "local"
    assert owner["src/planb/status/timeline_draw.py"] == "timeline"
    core = ("kube", "kubeconfig", "catalog/values", "status/cli", "status/report", "failover/controller", "cli")
    assert {name: owner[f"src/planb/{name}.py"] for name in core} == dict.fromkeys(core, CORE)


@pytest.mark.parametrize("part", [CORE, *EXTRA_ROOTS])
def test_pyproject_declares_exactly_what_each_part_imports(part: str) -> None:
    used = needed()[part]
    names = {_normalize(re.split(r"[\s\[<>=!~;@]", dep, maxsplit=1)[0]) for dep in declared().get(part, [])}
    missing = {dist: sorted(files) for dist, files in used.items() if dist not in names}
    unused = names - set(used)
    where = "[project] dependencies" if part == CORE else f"[project.optional-dependencies] {part}"
    assert (missing, unused) == ({}, set()), (
        f"pyproject.toml {where}: add what these files import: {missing}; "
        f"remove what this part of src/planb does not import (or the core already has): {sorted(unused)}"
    )


#: A dependency as pyproject.toml may write it: a name, with at most a lower bound (a floor below which planb is
#: unsafe, said in a comment there, e.g. urllib3's decompression fixes); requirements.txt pins, the locks hash.
DECLARED = re.compile(r"(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(>=(?P<floor>[0-9]+(\.[0-9]+)*))?")


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def test_pyproject_leaves_versions_to_the_requirements_and_locks() -> None:
    pinned = [dep for deps in declared().values() for dep in deps if not DECLARED.fullmatch(dep)]
    assert pinned == [], f"pyproject.toml: {pinned} carry versions; requirements.txt pins, the locks hash"


def test_each_floor_in_pyproject_is_met_by_the_locks() -> None:
    for lock in ("requirements.lock", "requirements-all.lock"):
        text = (paths.REPO / lock).read_text()
        for dep in declared()[CORE]:
            match = DECLARED.fullmatch(dep)
            if match is None or not match["floor"]:
                continue
            locked = re.search(rf"^{re.escape(match['name'])}==([0-9.]+)", text, re.MULTILINE | re.IGNORECASE)
            assert locked is not None, f"{lock}: no pin of {match['name']}"
            assert _version(locked[1]) >= _version(match["floor"]), f"{lock}: {locked[0]} is below pyproject's {dep}"


def test_the_failover_controller_needs_the_standard_library_only() -> None:
    """The queues chart runs src/planb/failover from a ConfigMap in a stock Python image: nothing is installed."""
    found = third_party(imported_modules(SRC / "failover"))
    assert found == {}, f"src/planb/failover: the controller's pod has no {sorted(found)}; use the standard library"


def test_urllib3_is_required_at_the_version_the_answer_cap_needs() -> None:
    """planb.kube_limits caps a region's answer in decoded bytes: urllib3 before 2.7 decompresses more than it is
    asked for (CVE-2025-66471, CVE-2025-66418; a Brotli second read, CVE-2026-44432)."""
    floors = [m["floor"] for dep in declared()[CORE] if (m := DECLARED.fullmatch(dep)) and m["name"] == "urllib3"]
    assert floors and floors[0] and _version(floors[0]) >= (2, 7), f"pyproject.toml: urllib3 floor {floors}"
