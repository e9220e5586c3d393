"""Dependencies as they are: what planb declares is what its code uses, no more and no less.

* ``pyproject.toml``'s ``[project] dependencies`` are the third-party distributions the product imports (an
  ``import`` or ``from`` statement, or a package named to ``importlib``, e.g. the discovery documents
  ``importlib.resources.files("googleapiclient.discovery_cache")`` reads), unpinned: requirements.txt pins them.
  Each extra of ``[project.optional-dependencies]`` is what its part of ``src/planb`` imports beyond the core:
  ``local`` the local wing's (``planb.local``), ``timeline`` the timeline's picture's
  (``planb.status.timeline_draw``). A module that only a part imports belongs to that part (``planb.tls``, whose
  cryptography only the local wing needs), so ``pip install planb`` pulls nothing of the extras.
* The failover controller's package (``src/planb/failover``, shipped in the queues chart's ConfigMap and run in a
  stock Python image) imports the standard library only.
* The planb.gke collection's ``galaxy.yml`` ``dependencies`` are the collections its roles, playbooks and plugins
  call by FQCN (modules, roles, filters, tests, lookups, module_utils), each with a range that admits the version
  the repository's ``requirements.yml`` installs.
* ``requirements.yml`` lists the collections the repository's playbooks, roles and molecule scenarios use.

``ansible.builtin`` (ansible-core) and ``planb.gke`` itself are never dependencies.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import re
import sys
import tomllib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible.galaxy.dependency_resolution.versioning import meets_requirements

from planb import paths

SRC = paths.REPO / "src" / "planb"
PYPROJECT = paths.REPO / "pyproject.toml"
COLLECTION = paths.REPO / "collections" / "ansible_collections" / "planb" / "gke"
GALAXY = COLLECTION / "galaxy.yml"
REQUIREMENTS_YML = paths.REPO / "requirements.yml"
#: The repository's own playbooks outside the collection (each imports one of the collection's).
REPO_PLAYBOOKS = [paths.REPO / "site.yml", *sorted((paths.REPO / "playbooks").glob("*.yml"))]
MOLECULE = paths.REPO / "molecule"

#: Collections that are no dependency: ansible-core's own and the collection itself.
NOT_DEPENDENCIES = frozenset({"ansible.builtin", "ansible.legacy", "planb.gke"})
#: importlib calls whose first argument names a module (or package) to load or read from.
IMPORTLIB_CALLS = frozenset({"import_module", "files", "find_spec", "as_file"})

_PART = r"[a-z_][a-z0-9_]*"
FQCN = re.compile(rf"^(?:group/)?({_PART}\.{_PART}\.{_PART})$")
#: FQCNs inside Jinja: a filter (``| ns.coll.name``), a test (``is ns.coll.name``), a lookup
#: (``lookup('ns.coll.name', ...)``) or a filter or test named to map, select, selectattr and the like.
JINJA_FQCN = re.compile(
    r"(?:\|[ \t]*|\bis\s+(?:not\s+)?"
    r"|\b(?:lookup|query|q|map|select|reject)\(\s*['\"]"
    r"|\b(?:map|selectattr|rejectattr)\(\s*['\"][^'\"]*['\"]\s*,\s*['\"])"
    rf"({_PART}\.{_PART}\.{_PART})\b"
)
#: Jinja in a template or a string: {{ expression }} and {% statement %}.
JINJA_BLOCK = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.S)
#: Keys whose values are bare Jinja expressions (no braces).
CONDITIONALS = frozenset({"when", "that", "changed_when", "failed_when", "until"})
TASK_LISTS = ("tasks", "pre_tasks", "post_tasks", "handlers", "block", "rescue", "always")


def _normalize(name: str) -> str:
    """PEP 503: runs of -, _ and . become one -, lower case."""
    return re.sub(r"[-_.]+", "-", name).lower()


# -- Python: src/planb -> pyproject.toml -------------------------------------------------------------------


def imported_modules(root: Path) -> dict[str, set[str]]:
    """Module -> the files under root that import it (statements and importlib's string arguments)."""
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
    """The modules neither in the standard library nor planb's own."""
    own = {"planb", "__future__", *sys.stdlib_module_names}
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
    """planb.tls joins the local wing, which alone imports it; what the product imports too stays in the core."""
    owner = parts()
    assert owner["src/planb/local/gke_emulator/discovery.py"] == "local"
    assert owner["src/planb/tls.py"] == "local"
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


def test_pyproject_leaves_versions_to_the_requirements_and_locks() -> None:
    pinned = [
        dep for deps in declared().values() for dep in deps if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", dep)
    ]
    assert pinned == [], f"pyproject.toml: {pinned} carry versions; requirements.txt pins, the locks hash"


def test_the_failover_controller_needs_the_standard_library_only() -> None:
    """The queues chart runs src/planb/failover from a ConfigMap in a stock Python image: nothing is installed."""
    found = third_party(imported_modules(SRC / "failover"))
    assert found == {}, f"src/planb/failover: the controller's pod has no {sorted(found)}; use the standard library"


# -- Ansible: FQCNs -> galaxy.yml and requirements.yml ---------------------------------------------------


def _jinja(node: Any, bare: bool = False) -> Iterator[str]:
    """The Jinja in a parsed YAML document: {{ }} and {% %} in any string, and conditionals' bare expressions."""
    if isinstance(node, str):
        yield from [node] if bare else JINJA_BLOCK.findall(node)
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _jinja(key)
            yield from _jinja(value, bare=key in CONDITIONALS)
    elif isinstance(node, list):
        for item in node:
            yield from _jinja(item, bare)


def _jinja_fqcns(expressions: Iterable[str]) -> set[str]:
    return {fqcn for expression in expressions for fqcn in JINJA_FQCN.findall(expression)}


def _fqcn(name: Any) -> str | None:
    match = FQCN.match(name.strip()) if isinstance(name, str) else None
    return match.group(1) if match else None


def _role_refs(roles: Any) -> Iterator[str]:
    for role in roles or []:
        name = role.get("role", role.get("name")) if isinstance(role, dict) else role
        if fqcn := _fqcn(name):
            yield fqcn


def _module_defaults(defaults: Any) -> Iterator[str]:
    items = defaults if isinstance(defaults, list) else [defaults]
    for item in items:
        if isinstance(item, dict):
            yield from filter(None, (_fqcn(key) for key in item))


def _tasks(tasks: Any) -> Iterator[str]:
    """The FQCNs a task list calls: modules and actions, included or imported roles, module_defaults."""
    for task in tasks or []:
        if not isinstance(task, dict):
            continue
        for key in TASK_LISTS:
            yield from _tasks(task.get(key))
        yield from _module_defaults(task.get("module_defaults"))
        for key, value in task.items():
            if key in ("action", "local_action"):
                action = value.get("module") if isinstance(value, dict) else str(value).split(" ", 1)[0]
                if fqcn := _fqcn(action):
                    yield fqcn
            elif fqcn := _fqcn(key):
                yield fqcn
                if fqcn in ("ansible.builtin.include_role", "ansible.builtin.import_role") and isinstance(value, dict):
                    yield from _role_refs([value.get("name")])


def _plays(plays: Any) -> Iterator[str]:
    for play in plays or []:
        if not isinstance(play, dict):
            continue
        for key in ("import_playbook", "ansible.builtin.import_playbook"):
            if key in play:
                yield "ansible.builtin.import_playbook"
                if fqcn := _fqcn(play[key]):
                    yield fqcn
        yield from (f"{name}._" for name in play.get("collections") or [])
        yield from _role_refs(play.get("roles"))
        yield from _module_defaults(play.get("module_defaults"))
        for key in TASK_LISTS:
            yield from _tasks(play.get(key))


def _yaml_fqcns(path: Path, kind: str) -> set[str]:
    """The FQCNs one YAML file uses: its structure (kind: plays, tasks, meta or data) and the Jinja in it."""
    doc = yaml.safe_load(path.read_text())
    found = _jinja_fqcns(_jinja(doc))
    if kind == "plays":
        found.update(_plays(doc))
    elif kind == "tasks":
        found.update(_tasks(doc))
    elif kind == "meta" and isinstance(doc, dict):
        found.update(_role_refs(doc.get("dependencies")))
        found.update(f"{name}._" for name in doc.get("collections") or [])
    return found


def _role_fqcns(roles: Path) -> set[str]:
    found: set[str] = set()
    for path in sorted([*roles.rglob("*.yml"), *roles.rglob("*.yaml")]):
        folder = path.relative_to(roles).parts[1]
        kind = {"tasks": "tasks", "handlers": "tasks", "meta": "meta"}.get(folder, "data")
        if kind == "meta" and path.stem != "main":
            kind = "data"
        found |= _yaml_fqcns(path, kind)
    for path in sorted(roles.rglob("*.j2")):
        found |= _jinja_fqcns(JINJA_BLOCK.findall(path.read_text()))
    return found


def _plugin_fqcns(plugins: Path) -> set[str]:
    """Other collections' module_utils or plugins imported, and documentation fragments extended."""
    found: set[str] = set()
    for path in sorted(plugins.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            modules: list[str] = []
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            for module in modules:
                parts = module.split(".")
                if parts[0] == "ansible_collections" and len(parts) >= 3:
                    found.add(f"{parts[1]}.{parts[2]}._")
            if (
                isinstance(node, ast.Assign)
                and [getattr(target, "id", None) for target in node.targets] == ["DOCUMENTATION"]
                and isinstance(node.value, ast.Constant)
            ):
                doc = yaml.safe_load(str(node.value.value))
                fragments = doc.get("extends_documentation_fragment") if isinstance(doc, dict) else None
                for fragment in [fragments] if isinstance(fragments, str) else fragments or []:
                    # ns.coll.fragment, or ns.coll.fragment.SECTION
                    if fqcn := _fqcn(".".join(str(fragment).split(".")[:3])):
                        found.add(fqcn)
    return found


def collection_fqcns() -> set[str]:
    """Every FQCN the planb.gke collection's roles, playbooks and plugins use."""
    found = _role_fqcns(COLLECTION / "roles") | _plugin_fqcns(COLLECTION / "plugins")
    playbooks = COLLECTION / "playbooks"
    for path in sorted(playbooks.rglob("*.yml")):
        found |= _yaml_fqcns(path, "data" if path.parent != playbooks else "plays")
    return found


def repository_fqcns() -> set[str]:
    """The collection's FQCNs and those of the repository's playbooks and molecule scenarios."""
    found = collection_fqcns()
    for path in REPO_PLAYBOOKS:
        found |= _yaml_fqcns(path, "plays")
    for path in sorted(MOLECULE.rglob("*.yml")):
        data = path.name == "molecule.yml" or {"vars", "host_vars", "group_vars"} & set(path.parts)
        found |= _yaml_fqcns(path, "data" if data else "plays")
    return found


def _collections(fqcns: Iterable[str]) -> set[str]:
    """kubernetes.core.helm -> kubernetes.core; ansible.builtin and planb.gke dropped."""
    return {".".join(fqcn.split(".")[:2]) for fqcn in fqcns} - NOT_DEPENDENCIES


def galaxy_dependencies() -> dict[str, str]:
    deps: dict[str, str] = yaml.safe_load(GALAXY.read_text()).get("dependencies") or {}
    return deps


def requirements_yml() -> dict[str, str]:
    entries = yaml.safe_load(REQUIREMENTS_YML.read_text()).get("collections") or []
    return {entry["name"]: str(entry.get("version", "*")) for entry in entries}


def test_the_scan_finds_the_collections_fqcns() -> None:
    """An empty or broken scan would make the tests below pass on nothing."""
    found = collection_fqcns()
    assert {"kubernetes.core.helm", "planb.gke.gke_cluster", "ansible.builtin.assert"} <= found, sorted(found)
    assert {"planb.gke.node_pool", "planb.gke.gke_node_pool"} <= found, "filters and modules: " + str(sorted(found))
    assert {"planb.gke.site"} <= repository_fqcns() - found, "site.yml imports planb.gke.site"


def test_galaxy_yml_declares_exactly_the_collections_the_collection_uses() -> None:
    used = _collections(collection_fqcns())
    deps = set(galaxy_dependencies())
    uses = {name: sorted(f for f in collection_fqcns() if f.startswith(name + ".")) for name in used - deps}
    assert uses == {}, f"collections/ansible_collections/planb/gke/galaxy.yml: add to dependencies: {uses}"
    assert deps - used == set(), (
        f"collections/ansible_collections/planb/gke/galaxy.yml: nothing in the collection uses {sorted(deps - used)}"
    )


def test_galaxy_yml_ranges_admit_what_requirements_yml_installs() -> None:
    pinned = requirements_yml()
    wrong = {
        name: f"galaxy.yml wants {wanted!r}, requirements.yml installs {pinned.get(name)!r}"
        for name, wanted in galaxy_dependencies().items()
        if name not in pinned or not meets_requirements(pinned[name], str(wanted))
    }
    assert wrong == {}, f"collections/ansible_collections/planb/gke/galaxy.yml (or requirements.yml): {wrong}"


def test_requirements_yml_lists_exactly_the_collections_the_repository_uses() -> None:
    used = _collections(repository_fqcns())
    listed = set(requirements_yml())
    assert used - listed == set(), f"requirements.yml: add {sorted(used - listed)}"
    assert listed - used == set(), (
        f"requirements.yml: no playbook, role or molecule scenario uses {sorted(listed - used)}; remove them"
    )
