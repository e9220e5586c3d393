"""The planb.gke collection's catalog facts: generated from the catalog, never stale, and equal in use.

The collection imports nothing from the planb package, so its filters work from generated data;
these tests prove that data (and the filters' arithmetic over it) agrees with the catalog itself.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from ansible.errors import AnsibleFilterError

from planb import paths
from planb.catalog import PROFILES, chart_values, collection, node_pool
from planb.catalog.errors import CatalogError

if str(paths.REPO / "collections") not in sys.path:
    sys.path.insert(0, str(paths.REPO / "collections"))


def _filters() -> ModuleType:
    return importlib.import_module("ansible_collections.planb.gke.plugins.filter.catalog")


def test_generated_files_are_current() -> None:
    for path, wanted in collection.files().items():
        assert path.read_text() == wanted, f"{path} is stale: run `make values`"


def test_collection_imports_nothing_from_planb() -> None:
    root = collection.COLLECTION_DIR / "plugins"
    offenders = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if any(line.lstrip().startswith(("import planb", "from planb")) for line in path.read_text().splitlines())
    ]
    assert offenders == []


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_node_pool_filter_equals_the_catalog(profile: str) -> None:
    node_pool_filter = _filters().node_pool
    for slices in (1, 3):
        assert node_pool_filter(profile, slices=slices) == node_pool(profile, slices)
    prof = PROFILES[profile]
    if prof.flex_start:
        assert node_pool_filter(profile, flex_start=True) == node_pool(profile, flex_start=True)
    assert node_pool_filter(profile, max_nodes=2 * prof.nodes_per_slice) == node_pool(
        profile, max_nodes=2 * prof.nodes_per_slice
    )


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_chart_values_filter_equals_the_catalog(profile: str) -> None:
    assert _filters().chart_values(profile, 2, 3, 4) == chart_values(profile, 2, 3, 4)


def test_other_machine_type_of_a_topology() -> None:
    got = _filters().node_pool("tpu-v5e-2x4", machine_type="ct5lp-hightpu-4t")
    assert got == node_pool("tpu-v5e-2x4", machine_type="ct5lp-hightpu-4t")
    assert (got["hosts_per_slice"], got["accelerator_count"]) == (2, 4)


@pytest.mark.parametrize(
    ("args", "kwargs", "fragments"),
    [
        (("tpu-v6e-4x4",), {"max_nodes": 6}, ["max_nodes 6 is not a multiple of the 4 nodes", "use 4 or 8"]),
        (("tpu-v6e-4x5",), {}, ["unknown profile 'tpu-v6e-4x5'", "tpu-v6e-4x4"]),
        (("tpu-v6e-4x4",), {"slices": 0}, ["slices must be at least 1, got 0"]),
        (("tpu-v4-2x2x2",), {"flex_start": True}, ["not offered by GKE for TPU v4", "v6e"]),
        (("tpu-v6e-4x4",), {"machine_type": "ct6e-standard-8t"}, ["ct6e-standard-8t", "ct6e-standard-4t"]),
    ],
)
def test_filter_errors_name_the_input_and_the_fix(
    args: tuple[str, ...], kwargs: dict[str, object], fragments: list[str]
) -> None:
    with pytest.raises(AnsibleFilterError) as caught:
        _filters().node_pool(*args, **kwargs)
    for fragment in fragments:
        assert fragment in caught.value.message
    with pytest.raises(CatalogError):  # the catalog refuses the same input
        node_pool(*args, **kwargs)  # type: ignore[arg-type]


def test_real_ansible_resolves_the_filter(tmp_path: Path) -> None:
    """ansible.cfg's collections_path finds planb.gke in a real ansible run."""
    out = tmp_path / "pool.json"
    env = dict(os.environ, ANSIBLE_CONFIG=str(paths.REPO / "ansible.cfg"), ANSIBLE_LOCALHOST_WARNING="false")
    expr = "{{ 'tpu-v6e-4x4' | planb.gke.node_pool(slices=1) | to_json }}"
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "ansible"),
            "localhost",
            "-i",
            "localhost,",
            "-c",
            "local",
            "-e",
            f"ansible_python_interpreter={sys.executable}",
            "-m",
            "ansible.builtin.copy",
            "-a",
            f"content={expr} dest={out}",
        ],
        cwd=paths.REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    pool = json.loads(out.read_text())
    assert (pool["machine_type"], pool["tpu_topology"], pool["max_nodes"]) == ("ct6e-standard-4t", "4x4", 4)
