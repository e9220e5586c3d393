"""The planb.gke collection's dependencies as they are: what it declares is what it calls, no more and no less.

* ``galaxy.yml`` ``dependencies`` are the collections the collection's roles, playbooks and plugins call by FQCN
  (modules, roles, filters, tests, lookups, module_utils), each with a range that admits the version the
  repository's ``requirements.yml`` installs.
* ``requirements.yml`` lists the collections the repository's playbooks, roles and molecule scenarios use.

``ansible.builtin`` (ansible-core) and ``planb.gke`` itself are never dependencies. The Python side (pyproject.toml
against src/planb's imports) is tests/unit/test_dependencies.py.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml
from ansible.galaxy.dependency_resolution.versioning import meets_requirements

from planb import paths

COLLECTION = paths.REPO / "collections" / "ansible_collections" / "planb" / "gke"
GALAXY = COLLECTION / "galaxy.yml"
REQUIREMENTS_YML = paths.REPO / "requirements.yml"
#: The repository's own playbooks outside the collection (each imports one of the collection's).
REPO_PLAYBOOKS = [paths.REPO / "site.yml", *sorted((paths.REPO / "playbooks").glob("*.yml"))]
MOLECULE = paths.REPO / "molecule"

#: Collections that are no dependency: ansible-core's own and the collection itself.
NOT_DEPENDENCIES = frozenset({"ansible.builtin", "ansible.legacy", "planb.gke"})

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
    return set(_scan_collection())


@functools.cache
def _scan_collection() -> frozenset[str]:
    """`collection_fqcns`, its files read and parsed once for the session's tests."""
    found = _role_fqcns(COLLECTION / "roles") | _plugin_fqcns(COLLECTION / "plugins")
    playbooks = COLLECTION / "playbooks"
    for path in sorted(playbooks.rglob("*.yml")):
        found |= _yaml_fqcns(path, "data" if path.parent != playbooks else "plays")
    return frozenset(found)


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
