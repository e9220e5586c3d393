"""DEVELOPING.md's google.cloud table holds for the google.cloud the pinned Ansible bundle installs.

The section "Why planb ships its own GKE modules (google.cloud compared)" says, need by need, what google.cloud's
four overlapping modules have, and why planb.gke ships its own. This test reads the table between its markers and
checks every claim against the installed collection: each module's ``DOCUMENTATION`` (read from the file with ast,
never imported), its source, and ``module_utils/gcp_utils.py``. When a bundle upgrade brings a google.cloud that has
what a "no" cell says it lacks (or lacks what a "yes" cell names), the test names the cell, so the decision is
reopened instead of going stale. The planb.gke column is checked against planb's own modules the same way.
"""

from __future__ import annotations

import ast
import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

from planb import paths

DEVELOPING = paths.REPO / "DEVELOPING.md"
PLANB = paths.REPO / "collections/ansible_collections/planb/gke/plugins"
START = re.compile(r"<!-- google\.cloud table: google\.cloud (?P<version>\S+) -->")
END = "<!-- end google.cloud table -->"
GOOGLE_MODULES = ("gcp_container_cluster", "gcp_container_node_pool", "gcp_storage_bucket", "gcp_serviceusage_service")
TOKEN = re.compile(r"`([^`]+)`")
VERDICT = re.compile(r"^(yes|no|n/a)\b")


def google_cloud() -> Path:
    """The google.cloud collection the pinned ``ansible`` bundle installed."""
    root = Path(str(metadata.distribution("ansible").locate_file("ansible_collections/google/cloud")))
    assert (root / "MANIFEST.json").is_file(), f"the ansible bundle has no google.cloud at {root}"
    return root


def documentation(tree: ast.Module, name: str = "DOCUMENTATION") -> dict[str, Any]:
    """The YAML of a module-level string assignment (DOCUMENTATION), parsed."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            assert isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            loaded = yaml.safe_load(node.value.value)
            assert isinstance(loaded, dict)
            return loaded
    raise AssertionError(f"no {name} string")


def option_paths(options: dict[str, Any] | None, prefix: str = "") -> set[str]:
    """Every option and suboption, as a dotted path (``config.workload_meta_config.mode``)."""
    found: set[str] = set()
    for name, spec in (options or {}).items():
        found.add(prefix + name)
        found |= option_paths((spec or {}).get("suboptions"), f"{prefix}{name}.")
    return found


@dataclass
class Module:
    """What the test reads of one module: its documented options, its argument spec's names and its code."""

    name: str
    doc: dict[str, Any]
    tree: ast.Module
    argspec_names: set[str] = field(default_factory=set)
    helpers_text: str = ""

    @property
    def options(self) -> set[str]:
        return option_paths(self.doc.get("options"))

    def names(self) -> set[str]:
        """Every option name, documented (each path's last part) or in an argument spec (the module's, GcpModule's)."""
        return {path.rsplit(".", 1)[-1] for path in self.options} | self.argspec_names

    def functions(self) -> set[str]:
        return {n.name for n in ast.walk(self.tree) if isinstance(n, ast.FunctionDef)}

    def strings(self) -> list[str]:
        return [n.value for n in ast.walk(self.tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]

    def calls(self) -> list[ast.Call]:
        return [n for n in ast.walk(self.tree) if isinstance(n, ast.Call)]

    def attribute_support(self, attribute: str) -> bool:
        support = ((self.doc.get("attributes") or {}).get(attribute) or {}).get("support", "none")
        return support in ("full", "partial")


def keyword_names(tree: ast.AST) -> set[str]:
    return {n.arg for n in ast.walk(tree) if isinstance(n, ast.keyword) and n.arg}


def google_module(name: str) -> Module:
    root = google_cloud() / "plugins"
    tree = ast.parse((root / "modules" / f"{name}.py").read_text(encoding="utf-8"))
    helpers = (root / "module_utils" / "gcp_utils.py").read_text(encoding="utf-8")
    gcp_module = next(n for n in ast.walk(ast.parse(helpers)) if isinstance(n, ast.ClassDef) and n.name == "GcpModule")
    main = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main")
    names = keyword_names(main) | keyword_names(gcp_module)
    return Module(name, documentation(tree), tree, argspec_names=names, helpers_text=helpers)


@functools.cache
def planb_module(name: str) -> Module:
    """A planb.gke module, its options merged with those of the planb.gke doc fragments it extends."""
    tree = ast.parse((PLANB / "modules" / f"{name}.py").read_text(encoding="utf-8"))
    doc = documentation(tree)
    options = dict(doc.get("options") or {})
    for fragment in doc.get("extends_documentation_fragment") or []:
        parts = fragment.split(".")
        if parts[:2] != ["planb", "gke"]:
            continue
        fragment_tree = ast.parse((PLANB / "doc_fragments" / f"{parts[2]}.py").read_text(encoding="utf-8"))
        cls = next(n for n in fragment_tree.body if isinstance(n, ast.ClassDef))
        body = ast.Module(body=list(cls.body), type_ignores=[])
        options.update(
            documentation(body, parts[3].upper() if len(parts) > 3 else "DOCUMENTATION").get("options") or {}
        )
    return Module(name, {**doc, "options": options}, tree)


# -- the code-level needs: what the module's code says, as supported (True) or not -------------------------------


def _check_mode(module: Module) -> bool:
    passed = any(
        kw.arg == "supports_check_mode" and isinstance(kw.value, ast.Constant) and kw.value.value is True
        for call in module.calls()
        for kw in call.keywords
    )
    return passed or module.attribute_support("check_mode")


def _diff(module: Module) -> bool:
    reads = any(isinstance(n, ast.Attribute) and n.attr == "_diff" for n in ast.walk(module.tree))
    returns = any(kw.arg == "diff" for call in module.calls() for kw in call.keywords)
    return reads or returns or module.attribute_support("diff_mode")


#: An option that could move the API's base URL (enable_private_endpoint is the cluster's own endpoint, not the API's).
ENDPOINT_OPTION = re.compile(r"(?<!private_)endpoint|url|host|universe_domain")


def _endpoint(module: Module) -> bool:
    by_option = any(ENDPOINT_OPTION.search(name) for name in module.names())
    return by_option or any(word in module.helpers_text.lower() for word in ("endpoint", "base_url", "universe_domain"))


def _waits(module: Module) -> bool:
    return any(name.startswith("wait_for") for name in module.functions())


def _update(module: Module) -> bool:
    """False when update() sends the body encode_request() wraps in the create request's key (cluster, nodePool)."""
    if "update" not in module.functions():
        return True
    encode = next(
        (n for n in ast.walk(module.tree) if isinstance(n, ast.FunctionDef) and n.name == "encode_request"), None
    )
    keys = [
        k.value
        for n in ast.walk(encode or ast.Module(body=[], type_ignores=[]))
        if isinstance(n, ast.Return) and isinstance(n.value, ast.Dict)
        for k in n.value.keys
        if isinstance(k, ast.Constant)
    ]
    return not set(keys) & {"cluster", "nodePool"}


def _keeps_default_pool(module: Module) -> bool:
    called = {c.func.id for c in module.calls() if isinstance(c.func, ast.Name)}
    return not any("delete_default" in name for name in called)


CODE_NEEDS: dict[str, Callable[[Module], bool]] = {
    "check mode": _check_mode,
    "diff": _diff,
    "endpoint override": _endpoint,
    "waits on operations": _waits,
    "in-place update": _update,
    "keeps default-pool": _keeps_default_pool,
}


# -- the table ---------------------------------------------------------------------------------------------------


def section(text: str) -> tuple[str, str]:
    """The google.cloud version the marker names, and the text between the markers."""
    start = START.search(text)
    assert start, "DEVELOPING.md has no '<!-- google.cloud table: google.cloud VERSION -->' marker"
    end = text.index(END, start.end())
    return start["version"], text[start.end() : end]


def tables(text: str) -> list[list[list[str]]]:
    """The markdown tables of a text, each a list of rows (header first), each row a list of cells."""
    found: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            if not re.fullmatch(r"\|(\s*-+\s*\|)+", line.strip()):
                current.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif current:
            found.append(current)
            current = []
    return found


def need_of(cell: str) -> str:
    return cell.split(" (", 1)[0].strip()


def check_token(token: str, module: Module) -> str | None:
    """Why a cited token does not hold for the module, or None when it holds."""
    if m := re.fullmatch(r'!"(.+)"', token):
        held = [s for s in module.strings() if s.startswith(m[1])]
        return f"the source holds {held[0]!r}" if held else None
    if m := re.fullmatch(r'"(.+)"', token):
        return None if any(s.startswith(m[1]) for s in module.strings()) else "the source holds no such string"
    if m := re.fullmatch(r"(\w+)\(\)", token):
        return None if m[1] in module.functions() else "no such function"
    if m := re.fullmatch(r"\*(\w+)\*", token):
        hits = sorted(name for name in module.names() if m[1] in name)
        return f"it has {', '.join(hits)}" if hits else None
    if re.fullmatch(r"\w+(\.\w+)*", token):
        return None if token in module.options else "no such option"
    return "a token the legend does not define"


def check_cell(need: str, cell: str, module: Module) -> list[str]:
    """Every way a google.cloud cell is false for the module (an empty list when it holds)."""
    verdict = VERDICT.match(cell)
    if not verdict:
        return [f"{need} / {module.name}: the cell does not start with yes, no or n/a: {cell!r}"]
    tokens = TOKEN.findall(cell)
    errors = [f"{need} / {module.name}: `{t}`: {why}" for t in tokens if (why := check_token(t, module))]
    absence = [t for t in tokens if t.startswith(("*", "!"))]
    presence = [t for t in tokens if not t.startswith(("*", "!", '"'))]
    if verdict[1] != "n/a" and need in CODE_NEEDS:
        supported = CODE_NEEDS[need](module)
        if supported != (verdict[1] == "yes"):
            errors.append(f"{need} / {module.name}: the cell says {verdict[1]}, the module's code says the opposite")
    elif verdict[1] == "yes" and not presence:
        errors.append(f"{need} / {module.name}: a yes cell names no option or function")
    elif verdict[1] == "no" and not absence:
        errors.append(f'{need} / {module.name}: a no cell names no absence (`*word*` or `!"text"`)')
    return errors


def read_table() -> tuple[str, list[list[str]], list[list[str]]]:
    version, text = section(DEVELOPING.read_text(encoding="utf-8"))
    needs, decisions = tables(text)
    return version, needs, decisions


def test_the_table_names_the_installed_google_cloud_version() -> None:
    version, _, _ = read_table()
    installed = json.loads((google_cloud() / "MANIFEST.json").read_text())["collection_info"]["version"]
    assert version == installed, (
        f"DEVELOPING.md's google.cloud table was read against {version}, the bundle installs {installed}. Fix: "
        "re-read the four modules' DOCUMENTATION and code, correct the cells, then the marker's version"
    )


def test_every_google_cloud_cell_holds_for_the_installed_version() -> None:
    _, needs, _ = read_table()
    header, rows = needs[0], needs[1:]
    assert header[2:] == list(GOOGLE_MODULES), header
    modules = {name: google_module(name) for name in GOOGLE_MODULES}
    errors = [
        error
        for row in rows
        for name, cell in zip(GOOGLE_MODULES, row[2:], strict=True)
        for error in check_cell(need_of(row[0]), cell, modules[name])
    ]
    assert not errors, "DEVELOPING.md's google.cloud table is no longer true:\n" + "\n".join(errors)


def test_every_code_level_need_is_a_row() -> None:
    _, needs, _ = read_table()
    assert set(CODE_NEEDS) <= {need_of(row[0]) for row in needs[1:]}


def test_the_planb_column_names_options_planb_gke_has() -> None:
    _, needs, _ = read_table()
    errors = []
    for row in needs[1:]:
        for token in TOKEN.findall(row[1]):
            module, _, option = token.partition(".")
            if not (PLANB / "modules" / f"{module}.py").is_file():
                errors.append(f"{need_of(row[0])}: `{token}`: planb.gke has no module {module}")
            elif option not in planb_module(module).options:
                errors.append(f"{need_of(row[0])}: `{token}`: planb.gke.{module} has no option {option}")
    assert not errors, "\n".join(errors)


def test_each_google_cloud_module_has_one_decision_naming_planb_gke_s_module() -> None:
    _, _, decisions = read_table()
    rows = {row[0].strip("`"): row for row in decisions[1:]}
    assert sorted(rows) == sorted(GOOGLE_MODULES)
    for name, row in rows.items():
        assert (PLANB / "modules" / f"{row[1].strip('`')}.py").is_file(), row
        assert row[2].count(". ") == 0 and row[2].endswith("."), f"{name}: one sentence: {row[2]!r}"


def _fake(options: dict[str, Any], code: str = "def main():\n    GcpModule(argument_spec={})\n") -> Module:
    tree = ast.parse(f"DOCUMENTATION = {yaml.safe_dump({'options': options})!r}\n{code}")
    return Module("fake", documentation(tree), tree)


def test_a_claim_that_no_longer_holds_is_named() -> None:
    grown = _fake({"config": {"type": "dict", "suboptions": {"flex_start": {"type": "bool"}}}})
    assert check_cell("flex-start", "no: `*flex*`", grown) == ["flex-start / fake: `*flex*`: it has flex_start"]
    assert check_cell("Spot", "yes: `config.spot`", grown) == ["Spot / fake: `config.spot`: no such option"]
    assert check_cell("Spot", "yes: `config.flex_start`", grown) == []
    assert check_cell("check mode", "no: skipped", grown) == []
    checked = _fake({}, "def main():\n    GcpModule(argument_spec={}, supports_check_mode=True)\n")
    assert check_cell("check mode", "no: skipped", checked) == [
        "check mode / fake: the cell says no, the module's code says the opposite"
    ]
    assert check_cell("x", 'no: `!"main"`', checked) == []
    assert check_cell("x", 'no: `!"GcpModule"`', _fake({}, "def main():\n    x = 'GcpModule'\n"))


def test_the_table_parser_reads_rows_between_the_markers() -> None:
    text = "\n".join(
        [
            *["| out | side |", "<!-- google.cloud table: google.cloud 9.9.9 -->"],
            *["| a | b |", "|---|---|", "| 1 | 2 |", "", "| c |", "|---|", "| 3 |", END, "| after |"],
        ]
    )
    version, inside = section(text)
    assert version == "9.9.9"
    assert tables(inside) == [[["a", "b"], ["1", "2"]], [["c"], ["3"]]]
