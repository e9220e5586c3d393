"""The planb.gke collection's catalog facts: generated from the catalog, never stale, and equal in use.

The collection imports nothing from the planb package, so its filters work from generated data;
these tests prove that data (and the filters' arithmetic over it) agrees with the catalog itself.
"""

from __future__ import annotations

import ast
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
from planb.build import collection
from planb.catalog import PROFILES, chart_values, node_pool, node_pools, pool_layout, tpu, versions
from planb.catalog import nodepool as catalog_nodepool
from planb.catalog.errors import CatalogError
from planb.local.gke_emulator import rules


def _filters() -> ModuleType:
    return importlib.import_module("ansible_collections.planb.gke.plugins.filter.catalog")


def test_generated_files_are_current() -> None:
    assert collection.stale() == [], "stale: run `make values`"


def test_the_generated_folder_holds_only_generated_files() -> None:
    """module_utils/_generated is what planb.build writes, nothing else; nothing generated sits outside it."""
    assert sorted(collection.GENERATED_DIR.glob("*.py")) == sorted(collection.files())
    for module in collection.MODULE_UTILS.glob("*.py"):
        assert not module.read_text().startswith("# Generated"), f"{module} is generated but not in _generated/"


def test_a_stale_or_missing_generated_file_is_found(tmp_path: Path) -> None:
    written = collection.write(tmp_path)
    assert {path.name for path in written} == {
        "__init__.py", "machine_types.py", "profiles.py", "rung_kinds.py", "pool_layout.py", "versions.py",
    }  # fmt: skip
    assert collection.stale(tmp_path) == []
    copy = tmp_path / "pool_layout.py"
    copy.write_text(copy.read_text().replace('_SUFFIX = re.compile(r"^-([2-9]', '_SUFFIX = re.compile(r"^-([1-9]'))
    (tmp_path / "profiles.py").unlink()
    assert collection.stale(tmp_path) == [tmp_path / "profiles.py", copy]


@pytest.mark.parametrize("name", sorted(collection.COPIED))
def test_copied_modules_are_generated_as_marked_copies_of_the_catalogs(name: str) -> None:
    """One hand-written copy (src/planb/catalog/<name>); the collection's is generated from it."""
    source = collection.COPIED[name]
    assert source.parent == Path(pool_layout.__file__).parent and source.name == name
    generated = collection.GENERATED_DIR / name
    head = generated.read_text().splitlines()[:2]
    assert head[0].startswith(f"# Generated: a copy of src/planb/catalog/{name}") and "Do not edit" in head[0]
    assert generated.read_text().endswith(source.read_text())
    # The copy runs without planb: the source imports the standard library alone.
    imported = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert imported <= {*sys.stdlib_module_names, "__future__"}, imported


def test_the_collection_runs_the_generated_copies() -> None:
    # The filters lay out pools with the generated copy of pool_layout.
    copy = importlib.import_module("ansible_collections.planb.gke.plugins.module_utils._generated.pool_layout")
    assert _filters().pool_layout is copy
    assert copy.plan_pools(["p-2", "p", "q"], "p") == pool_layout.plan_pools(["p-2", "p", "q"], "p") == ["p", "p-2"]
    # The modules' validation and the GKE emulator's rules read and compare GKE versions alike: the emulator runs
    # the catalog's functions, the modules the generated copy, and both give the versions' known answers.
    utils = "ansible_collections.planb.gke.plugins.module_utils"
    validate, pool_versions = (importlib.import_module(f"{utils}.{name}") for name in ("validate", "pool_versions"))
    assert (rules.parse_version, rules.version_at_least) == (versions.parse_version, versions.version_at_least)
    ironwood = versions.TPU_MIN_VERSION["tpu7x"][0]
    assert ironwood == (1, 34, 0, 2201000)
    # (version, parsed, at least Ironwood's minimum): a prefix like 1.34 stands for its newest release.
    known = [
        ("1.34", (1, 34), True),
        ("1.34.0-gke.2201000", (1, 34, 0, 2201000), True),
        ("1.34.0-gke.1000000", (1, 34, 0, 1000000), False),
        ("1.33.9", (1, 33, 9), False),
        ("1.35", (1, 35), True),
        ("1.34\n", None, False),
        ("latest", None, False),
    ]
    # validate.py reads a cluster's version, pool_versions.py compares a pool's TPUs' minimums with it.
    for parse, at_least in (
        (validate.parse_version, pool_versions.version_at_least),
        (versions.parse_version, versions.version_at_least),
    ):
        answers = [(v, parse(v), at_least(v, ironwood)) for v, _, _ in known]
        assert answers == known, parse.__module__
    # The Ironwood page the minimum names is the catalog's.
    assert versions.TPU_MIN_VERSION["tpu7x"][1] == versions.DOC_IRONWOOD == tpu.IRONWOOD_URL


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
    prof = PROFILES[profile]
    assert node_pool_filter(profile, slices=1) == node_pool(profile, 1)
    if prof.flex_start:
        assert node_pool_filter(profile, flex_start=True) == node_pool(profile, flex_start=True)
    if prof.multi_host:
        # One pool is one slice: both refuse more, naming the filter that lays out K pools.
        with pytest.raises(AnsibleFilterError, match="holds exactly one slice"):
            node_pool_filter(profile, slices=3)
        with pytest.raises(CatalogError, match="holds exactly one slice"):
            node_pool(profile, 3)
        with pytest.raises(AnsibleFilterError, match="holds exactly one slice"):
            node_pool_filter(profile, max_nodes=2 * prof.nodes_per_slice)
        return
    assert node_pool_filter(profile, slices=3) == node_pool(profile, 3)
    assert node_pool_filter(profile, max_nodes=2 * prof.nodes_per_slice) == node_pool(
        profile, max_nodes=2 * prof.nodes_per_slice
    )


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_node_pools_filter_equals_the_catalog(profile: str) -> None:
    node_pools_filter = _filters().node_pools
    for slices in (1, 3):
        for plan, flex in (("on-demand", False), ("dws", PROFILES[profile].flex_start)):
            got = node_pools_filter(profile, name="on-demand-pool", slices=slices, plan=plan, flex_start=flex)
            assert got == node_pools(profile, "on-demand-pool", slices, plan=plan, flex_start=flex)


def test_node_pools_one_pool_per_multi_host_slice() -> None:
    """Plan A with 3 slices of tpu-v6e-4x4 (4 hosts): 3 pools of exactly 4 nodes; single-host: one pool of 3."""
    pools = _filters().node_pools("tpu-v6e-4x4", name="on-demand-pool", slices=3, plan="on-demand")
    assert [(p["name"], p["index"], p["max_nodes"], p["slices"]) for p in pools] == [
        ("on-demand-pool", 1, 4, 1),
        ("on-demand-pool-2", 2, 4, 1),
        ("on-demand-pool-3", 3, 4, 1),
    ]
    assert all(p["labels"] == {"planb.dev/plan": "on-demand"} and p["plan_slices"] == 3 for p in pools)
    dws = _filters().node_pools("tpu-v6e-4x4", name="dws-pool", slices=2, plan="dws", flex_start=True)
    assert [(p["name"], p["max_nodes"], p["flex_start"], p["labels"]) for p in dws] == [
        ("dws-pool", 4, True, {"planb.dev/plan": "dws"}),
        ("dws-pool-2", 4, True, {"planb.dev/plan": "dws"}),
    ]
    single = _filters().node_pools("tpu-v6e-2x4", name="on-demand-pool", slices=3)
    assert [(p["name"], p["max_nodes"], p["slices"]) for p in single] == [("on-demand-pool", 3, 3)]
    # The seed's single slice keeps the seed's pool name.
    assert [p["name"] for p in _filters().node_pools("tpu-v6e-4x4", name="on-demand-pool")] == ["on-demand-pool"]


def test_plan_pools_and_labels_filters_equal_the_catalog() -> None:
    names = ["default-pool", "on-demand-pool-10", "on-demand-pool", "on-demand-pool-1", "on-demand-pool-2x", "dws-pool"]
    names += ["on-demand-pool-3", "on-demand-pool-02", "on-demand-pools", "on-demand-pool-0"]
    got = _filters().plan_pools(names, "on-demand-pool")
    assert got == ["on-demand-pool", "on-demand-pool-3", "on-demand-pool-10"]
    assert got == catalog_nodepool.plan_pools(names, "on-demand-pool")
    assert _filters().plan_node_labels("dws") == catalog_nodepool.plan_labels("dws") == {"planb.dev/plan": "dws"}
    with pytest.raises(AnsibleFilterError, match="label value"):
        _filters().plan_node_labels("Plan A")
    with pytest.raises(CatalogError, match="label value"):
        catalog_nodepool.plan_labels("Plan A")


@pytest.mark.parametrize(
    ("name", "slices", "fragment"),
    [
        ("On-Demand", 1, "must be 1-40 lowercase letters"),
        ("a-pool-name-that-is-thirty-eight-chars", 10, "shorten the plan's pool name"),
        ("on-demand-pool", 0, "slices must be at least 1, got 0"),
    ],
)
def test_node_pools_errors_name_the_fix(name: str, slices: int, fragment: str) -> None:
    with pytest.raises(AnsibleFilterError) as caught:
        _filters().node_pools("tpu-v6e-4x4", name=name, slices=slices)
    assert fragment in caught.value.message
    with pytest.raises(CatalogError, match=fragment):
        node_pools("tpu-v6e-4x4", name, slices)


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
        (("tpu-v6e-4x4",), {"slices": 2}, ["holds exactly one slice (4 nodes)", "node_pools"]),
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
