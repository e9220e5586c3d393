"""Every module of planb.gke documents what ansible-doc readers of kubernetes.core's neighbours expect.

ansible-test's validate-modules (``make sanity``) checks the documentation's schema but not that a return value
shows a ``sample``; this test does: each module's RETURN gives a sample for every value, and for every value it
lists under ``contains``. It also checks what the schema leaves optional: ``version_added`` (a release of the
collection, no later than galaxy.yml's version), ``requirements``, and the ``check_mode`` and ``diff_mode``
attributes with their support level, counting what the module takes from planb.gke's own doc fragments
(``extends_documentation_fragment``), as ansible-doc shows it. The files are read as text (ast and YAML), so no
module is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb.build.collection import COLLECTION_DIR

MODULES = sorted(path for path in (COLLECTION_DIR / "plugins/modules").glob("*.py") if path.stem != "__init__")
SUPPORT = ("full", "partial", "none", "N/A")


def doc_strings(path: Path) -> dict[str, Any]:
    """The module's DOCUMENTATION, EXAMPLES and RETURN, each parsed as YAML (None when the module has none)."""
    found: dict[str, Any] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in ("DOCUMENTATION", "EXAMPLES", "RETURN"):
                    found[target.id] = yaml.safe_load(node.value.value)
    return found


def fragment(name: str) -> dict[str, Any]:
    """A planb.gke doc fragment by the name a module extends it with: ``planb.gke.gke_auth`` is the DOCUMENTATION of
    doc_fragments/gke_auth.py, ``planb.gke.gke_auth.reader`` its READER."""
    file, _, variant = name.removeprefix("planb.gke.").partition(".")
    wanted = variant.upper() or "DOCUMENTATION"
    for node in ast.walk(ast.parse((COLLECTION_DIR / "plugins/doc_fragments" / f"{file}.py").read_text())):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == wanted for t in node.targets):
            assert isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            return dict(yaml.safe_load(node.value.value))
    raise AssertionError(f"no doc fragment {name}")


def documentation(path: Path) -> dict[str, Any]:
    """The module's DOCUMENTATION with the requirements and attributes of the planb.gke fragments it extends
    merged in (lists extended, mappings joined), as ansible-doc merges them."""
    doc = dict(doc_strings(path)["DOCUMENTATION"])
    for name in doc.get("extends_documentation_fragment") or []:
        if name.startswith("planb.gke."):
            part = fragment(name)
            doc["requirements"] = [*(doc.get("requirements") or []), *(part.get("requirements") or [])]
            doc["attributes"] = {**(doc.get("attributes") or {}), **(part.get("attributes") or {})}
    return doc


def without_sample(returns: dict[str, Any] | None, prefix: str = "") -> list[str]:
    """The return values (dotted, ``contains`` followed) that give no ``sample``."""
    missing: list[str] = []
    for name, spec in (returns or {}).items():
        if "sample" not in spec:
            missing.append(prefix + name)
        missing += without_sample(spec.get("contains"), f"{prefix}{name}.")
    return missing


def galaxy_version() -> tuple[int, ...]:
    return version(yaml.safe_load((COLLECTION_DIR / "galaxy.yml").read_text())["version"])


def version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in str(text).split("."))


def test_the_modules_are_found() -> None:
    assert {"gke_cluster", "gke_node_pool", "ladder"} <= {path.stem for path in MODULES}


def test_without_sample_follows_contains() -> None:
    returns = {
        "a": {"description": "x", "sample": 1},
        "b": {"description": "x"},
        "c": {"description": "x", "sample": {}, "contains": {"d": {"description": "x"}, "e": {"sample": 2}}},
    }
    assert without_sample(returns) == ["b", "c.d"]


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.stem)
def test_every_return_value_has_a_sample(path: Path) -> None:
    returns = doc_strings(path)["RETURN"]
    assert returns, f"{path.name}: RETURN is empty; document what the module returns, each value with a sample"
    missing = without_sample(returns)
    assert not missing, f"{path.name}: RETURN values without a sample: {', '.join(missing)}; add `sample:` to each"


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.stem)
def test_documentation_has_version_requirements_and_attributes(path: Path) -> None:
    doc = documentation(path)
    assert "version_added" in doc, f"{path.name}: add version_added (the release that first ships the module)"
    assert version(doc["version_added"]) <= galaxy_version(), f"{path.name}: version_added is after galaxy.yml's"
    assert doc.get("requirements"), f"{path.name}: add requirements (what the module needs where it runs)"
    attributes = doc.get("attributes") or {}
    for name in ("check_mode", "diff_mode"):
        support = (attributes.get(name) or {}).get("support")
        assert support in SUPPORT, f"{path.name}: attributes.{name}.support is {support!r}; one of {SUPPORT}"
