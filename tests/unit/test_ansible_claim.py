"""The ansible-core and Python versions planb.gke claims are the ones its code needs.

Every API module's action (``plugins/plugin_utils/in_worker.py``) reaches into ansible-core's internals, which move
between releases without notice. ``INTERNALS`` names each private name the collection's plugins use and the first
ansible-core release that has it in the form the code uses; a scan of the plugins keeps the table complete, and
``meta/runtime.yml``'s ``requires_ansible`` must start at the newest of them, no lower and no higher. The same goes
for ``tests/config.yml``'s ``python_requires`` and the Python the modules' standard-library names need.
"""

from __future__ import annotations

import ast
import sys

import yaml
from ansible.module_utils.basic import AnsibleModule
from ansible.plugins.action import ActionBase
from ansible.release import __version__ as ansible_core_version
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from planb.build.collection import COLLECTION_DIR

PLUGINS = COLLECTION_DIR / "plugins"
RUNTIME = yaml.safe_load((COLLECTION_DIR / "meta" / "runtime.yml").read_text())
TESTS_CONFIG = yaml.safe_load((COLLECTION_DIR / "tests" / "config.yml").read_text())

#: Older than any core this table tells apart: the name has been there, in this form, since before 2.16.
LONG_STANDING = "2.16.0"
#: Each private ansible-core name the plugins use -> the first ansible-core release that has it as used.
INTERNALS: dict[str, str] = {
    # 2.19.0 brought module_utils._internal, AnsiballZ's in-process loader and serialization profiles.
    "ansible.module_utils._internal._ansiballz._loader": "2.19.0",
    "_loader._handle_exception": "2.19.0",  # (exception, profile)
    "basic._ANSIBLE_PROFILE": "2.19.0",
    "ActionBase._parse_returned_data": "2.19.0",  # (result, profile)
    # The hook for running a module in the worker (ansible/ansible#85609, in 2.19.1).
    "AnsibleModule._record_module_result": "2.19.1",
    "basic._ANSIBLE_ARGS": LONG_STANDING,
    "ActionBase._execute_module": LONG_STANDING,
    "ActionBase._update_module_args": LONG_STANDING,
    "ActionBase._remove_tmp_path": LONG_STANDING,
}
#: The ansible-core classes a plugin's class may derive from, whose private methods it may override or call.
CORE = {"ActionBase": ActionBase, "AnsibleModule": AnsibleModule}
#: Standard-library names the modules and module_utils use -> the Python that brought them.
NEWER_STDLIB = {"datetime.UTC": "3.11", "tomllib": "3.11", "enum.StrEnum": "3.11", "typing.Self": "3.11"}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_names(source: str) -> set[str]:
    """The private ansible-core names one plugin file uses, spelled as INTERNALS spells them."""
    tree = ast.parse(source)
    found: set[str] = set()
    ansible_names: dict[str, str] = {}  # local name -> the ansible-core module or class it is
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "ansible":
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                ansible_names[alias.asname or alias.name] = alias.name
                if any(_private(part) for part in full.split(".")):
                    found.add(full)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and _private(node.attr)
            and node.value.id in ansible_names
        ):
            found.add(f"{node.value.id}.{node.attr}")
        if isinstance(node, ast.ClassDef):
            bases = {ast.unparse(base).split(".")[-1] for base in node.bases}
            core = sorted(bases & {"ActionBase", "AnsibleModule"})
            if not core:
                continue
            own = {item.name for item in node.body if isinstance(item, ast.FunctionDef)}
            for item in node.body:  # overrides of ansible-core's private hooks (not the class's own helpers)
                if isinstance(item, ast.FunctionDef) and _private(item.name) and hasattr(CORE[core[0]], item.name):
                    found.add(f"{core[0]}.{item.name}")
            for sub in ast.walk(node):  # self._method(...) calls that reach ansible-core's class
                if (
                    isinstance(sub, ast.Call)
                    and isinstance(sub.func, ast.Attribute)
                    and isinstance(sub.func.value, ast.Name)
                    and sub.func.value.id == "self"
                    and _private(sub.func.attr)
                    and sub.func.attr not in own
                ):
                    found.add(f"{core[0]}.{sub.func.attr}")
    return found


def test_the_table_names_every_private_name_the_plugins_use() -> None:
    used = set().union(*(private_names(path.read_text()) for path in sorted(PLUGINS.rglob("*.py"))))
    assert used == set(INTERNALS)


def test_the_scan_finds_what_it_looks_for() -> None:
    source = (
        "from ansible.module_utils import basic\n"
        "from ansible.module_utils._internal import _x\n"
        "from ansible.plugins.action import ActionBase\n"
        "basic._HIDDEN = 1\n"
        "class A(ActionBase):\n"
        "    def _helper(self): ...\n"
        "    def _execute_module(self): ...\n"
        "    def run(self):\n"
        "        self._helper(); self._core()\n"
    )
    assert private_names(source) == {
        "ansible.module_utils._internal._x",
        "basic._HIDDEN",
        "ActionBase._execute_module",  # an override of ansible-core's method
        "ActionBase._core",  # a call to one; _helper is the class's own
    }


def test_requires_ansible_starts_at_the_newest_internal() -> None:
    claim = SpecifierSet(RUNTIME["requires_ansible"])
    floor = max(Version(version) for version in INTERNALS.values())
    assert floor in claim  # no higher than the code needs
    # No lower: the releases before the floor lack a name the code uses.
    earlier = [Version(f"{floor.major}.{floor.minor - 1}.99"), Version(LONG_STANDING)]
    if floor.micro:
        earlier.append(Version(f"{floor.major}.{floor.minor}.{floor.micro - 1}"))
    assert [version for version in earlier if version in claim] == []


def test_the_installed_core_is_claimed_and_has_every_internal() -> None:
    """The pinned ansible-core (requirements.txt) is inside the claim and has each name the table lists."""
    from ansible.module_utils import basic
    from ansible.module_utils._internal._ansiballz import _loader

    assert Version(ansible_core_version) in SpecifierSet(RUNTIME["requires_ansible"])
    owners = {"basic": basic, "_loader": _loader, **CORE}
    for name in INTERNALS:
        owner, _, attr = name.rpartition(".")
        if owner in owners:
            assert hasattr(owners[owner], attr), name


def test_the_sanity_ignore_files_are_for_claimed_cores() -> None:
    claim = SpecifierSet(RUNTIME["requires_ansible"])
    ignores = sorted((COLLECTION_DIR / "tests" / "sanity").glob("ignore-*.txt"))
    installed = ".".join(ansible_core_version.split(".")[:2])
    assert f"ignore-{installed}.txt" in [path.name for path in ignores]
    for path in ignores:
        core = path.stem.removeprefix("ignore-")
        assert claim.contains(Version(f"{core}.99")), f"{path.name}: ansible-core {core} is not claimed"


def _stdlib_uses(source: str) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            found.add(f"{node.value.id}.{node.attr}")
    return found & set(NEWER_STDLIB)


def test_python_requires_is_what_the_modules_need() -> None:
    """ansible-test reads tests/config.yml's modules.python_requires; its floor is the newest Python the modules
    and module_utils need, which is also the controller's (the modules run on the controller's Python)."""
    claim = SpecifierSet(TESTS_CONFIG["modules"]["python_requires"])
    sources = [*(PLUGINS / "modules").glob("*.py"), *(PLUGINS / "module_utils").glob("*.py")]
    needed = {use: NEWER_STDLIB[use] for path in sources for use in _stdlib_uses(path.read_text())}
    floor = max([Version("3.8"), *(Version(version) for version in needed.values())])
    assert floor in claim, needed
    assert Version(f"{floor.major}.{floor.minor - 1}") not in claim, f"the modules need Python {floor}: {needed}"
    for path in sources:  # and no syntax newer than the floor
        ast.parse(path.read_text(), filename=str(path), feature_version=(floor.major, floor.minor))
    assert Version(f"{sys.version_info.major}.{sys.version_info.minor}") in claim
