"""Every role's meta/argument_specs.yml and defaults/main.yml agree.

The argument specs are the roles' variable reference (type, default, description of each): the `main` entry point
declares every variable of defaults/main.yml and nothing else, each with the same default (a default that is a
template, worked out when the role runs, is described in words instead), and every variable carries the role's name
as its prefix. Other entry points (a role's `tasks_from` files) declare a subset of main's variables, unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from planb.build.collection import COLLECTION_DIR

ROLES = sorted(
    role.name for role in (COLLECTION_DIR / "roles").iterdir() if (role / "meta/argument_specs.yml").is_file()
)


def _load(path: Path) -> Any:
    return yaml.safe_load(path.read_text()) or {}


@pytest.mark.parametrize("role", ROLES)
def test_argument_specs_declare_every_default_with_its_value(role: str) -> None:
    specs = _load(COLLECTION_DIR / "roles" / role / "meta/argument_specs.yml")["argument_specs"]
    defaults = _load(COLLECTION_DIR / "roles" / role / "defaults/main.yml")
    main = specs["main"]["options"]
    assert sorted(main) == sorted(defaults)
    for name, option in main.items():
        assert name.startswith(f"{role}_"), name
        assert option.get("type") and option.get("description"), name
        if not (isinstance(defaults[name], str) and "{{" in defaults[name]):
            assert option.get("default") == defaults[name], name
    for entry, spec in specs.items():
        for name, option in (spec.get("options") or {}).items():
            assert option == main.get(name), f"{entry}: {name}"


def test_each_entry_point_has_its_task_file() -> None:
    for role in ROLES:
        specs = _load(COLLECTION_DIR / "roles" / role / "meta/argument_specs.yml")["argument_specs"]
        for entry in specs:
            assert (COLLECTION_DIR / "roles" / role / "tasks" / f"{entry}.yml").is_file(), f"{role}: {entry}"
