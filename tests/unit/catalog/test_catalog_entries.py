"""Every catalog entry's derived fields, compared as whole objects."""

from __future__ import annotations

import dataclasses

import pytest

from planb.catalog import PROFILES, get, gpu, node_pool, node_pools, tpu
from planb.catalog.errors import CountError
from planb.catalog.profiles import DEFAULT_PROFILE, Profile

# (profile, alias, machine type, hosts per slice, chips per host, chips per slice, multi-host, flex-start)
# Checked by hand against GKE's "Plan TPUs in GKE" tables and each generation's Cloud TPU page.
TABLE = [
    ("tpu-v4-2x2x1", "tpu-v4-4", "ct4p-hightpu-4t", 1, 4, 4, False, False),
    ("tpu-v4-2x2x2", "tpu-v4-8", "ct4p-hightpu-4t", 2, 4, 8, True, False),
    ("tpu-v4-2x2x4", "tpu-v4-16", "ct4p-hightpu-4t", 4, 4, 16, True, False),
    ("tpu-v4-2x4x4", "tpu-v4-32", "ct4p-hightpu-4t", 8, 4, 32, True, False),
    ("tpu-v4-4x4x4", "tpu-v4-64", "ct4p-hightpu-4t", 16, 4, 64, True, False),
    ("tpu-v4-4x4x8", "tpu-v4-128", "ct4p-hightpu-4t", 32, 4, 128, True, False),
    ("tpu-v4-4x8x8", "tpu-v4-256", "ct4p-hightpu-4t", 64, 4, 256, True, False),
    ("tpu-v4-8x8x8", "tpu-v4-512", "ct4p-hightpu-4t", 128, 4, 512, True, False),
    ("tpu-v4-8x8x16", "tpu-v4-1024", "ct4p-hightpu-4t", 256, 4, 1024, True, False),
    ("tpu-v4-8x16x16", "tpu-v4-2048", "ct4p-hightpu-4t", 512, 4, 2048, True, False),
    ("tpu-v5e-1x1", "tpu-v5e-1", "ct5lp-hightpu-1t", 1, 1, 1, False, True),
    ("tpu-v5e-2x2", "tpu-v5e-4", "ct5lp-hightpu-4t", 1, 4, 4, False, True),
    ("tpu-v5e-2x4", "tpu-v5e-8", "ct5lp-hightpu-8t", 1, 8, 8, False, True),
    ("tpu-v5e-4x4", "tpu-v5e-16", "ct5lp-hightpu-4t", 4, 4, 16, True, True),
    ("tpu-v5e-4x8", "tpu-v5e-32", "ct5lp-hightpu-4t", 8, 4, 32, True, True),
    ("tpu-v5e-8x8", "tpu-v5e-64", "ct5lp-hightpu-4t", 16, 4, 64, True, True),
    ("tpu-v5e-8x16", "tpu-v5e-128", "ct5lp-hightpu-4t", 32, 4, 128, True, True),
    ("tpu-v5e-16x16", "tpu-v5e-256", "ct5lp-hightpu-4t", 64, 4, 256, True, True),
    ("tpu-v5p-2x2x1", "tpu-v5p-4", "ct5p-hightpu-4t", 1, 4, 4, False, True),
    ("tpu-v5p-2x2x2", "tpu-v5p-8", "ct5p-hightpu-4t", 2, 4, 8, True, True),
    ("tpu-v5p-2x2x4", "tpu-v5p-16", "ct5p-hightpu-4t", 4, 4, 16, True, True),
    ("tpu-v5p-2x4x4", "tpu-v5p-32", "ct5p-hightpu-4t", 8, 4, 32, True, True),
    ("tpu-v5p-4x4x4", "tpu-v5p-64", "ct5p-hightpu-4t", 16, 4, 64, True, True),
    ("tpu-v5p-4x4x8", "tpu-v5p-128", "ct5p-hightpu-4t", 32, 4, 128, True, True),
    ("tpu-v5p-4x8x8", "tpu-v5p-256", "ct5p-hightpu-4t", 64, 4, 256, True, True),
    ("tpu-v5p-8x8x8", "tpu-v5p-512", "ct5p-hightpu-4t", 128, 4, 512, True, True),
    ("tpu-v5p-8x8x16", "tpu-v5p-1024", "ct5p-hightpu-4t", 256, 4, 1024, True, True),
    ("tpu-v5p-8x16x16", "tpu-v5p-2048", "ct5p-hightpu-4t", 512, 4, 2048, True, True),
    ("tpu-v5p-16x16x16", "tpu-v5p-4096", "ct5p-hightpu-4t", 1024, 4, 4096, True, True),
    ("tpu-v6e-1x1", "tpu-v6e-1", "ct6e-standard-1t", 1, 1, 1, False, True),
    ("tpu-v6e-2x2", "tpu-v6e-4", "ct6e-standard-4t", 1, 4, 4, False, True),
    ("tpu-v6e-2x4", "tpu-v6e-8", "ct6e-standard-8t", 1, 8, 8, False, True),
    ("tpu-v6e-4x4", "tpu-v6e-16", "ct6e-standard-4t", 4, 4, 16, True, True),
    ("tpu-v6e-4x8", "tpu-v6e-32", "ct6e-standard-4t", 8, 4, 32, True, True),
    ("tpu-v6e-8x8", "tpu-v6e-64", "ct6e-standard-4t", 16, 4, 64, True, True),
    ("tpu-v6e-8x16", "tpu-v6e-128", "ct6e-standard-4t", 32, 4, 128, True, True),
    ("tpu-v6e-16x16", "tpu-v6e-256", "ct6e-standard-4t", 64, 4, 256, True, True),
    ("tpu7x-2x2x1", "tpu7x-4", "tpu7x-standard-4t", 1, 4, 4, False, False),
    ("tpu7x-2x2x2", "tpu7x-8", "tpu7x-standard-4t", 2, 4, 8, True, False),
    ("tpu7x-2x2x4", "tpu7x-16", "tpu7x-standard-4t", 4, 4, 16, True, False),
    ("tpu7x-2x4x4", "tpu7x-32", "tpu7x-standard-4t", 8, 4, 32, True, False),
    ("tpu7x-4x4x4", "tpu7x-64", "tpu7x-standard-4t", 16, 4, 64, True, False),
    ("tpu7x-4x4x8", "tpu7x-128", "tpu7x-standard-4t", 32, 4, 128, True, False),
    ("tpu7x-4x8x8", "tpu7x-256", "tpu7x-standard-4t", 64, 4, 256, True, False),
    ("tpu7x-8x8x8", "tpu7x-512", "tpu7x-standard-4t", 128, 4, 512, True, False),
    ("tpu7x-8x8x16", "tpu7x-1024", "tpu7x-standard-4t", 256, 4, 1024, True, False),
    ("tpu7x-8x16x16", "tpu7x-2048", "tpu7x-standard-4t", 512, 4, 2048, True, False),
    ("gpu-a3-h100-1", "", "a3-highgpu-1g", 1, 1, 1, False, True),
    ("gpu-a3-h100-2", "", "a3-highgpu-2g", 1, 2, 2, False, True),
    ("gpu-a3-h100-4", "", "a3-highgpu-4g", 1, 4, 4, False, True),
    ("gpu-a3-h100-8", "", "a3-highgpu-8g", 1, 8, 8, False, True),
    ("gpu-a3-mega-h100-8", "", "a3-megagpu-8g", 1, 8, 8, False, True),
    ("gpu-a3-ultra-h200-8", "", "a3-ultragpu-8g", 1, 8, 8, False, True),
    ("gpu-a4-b200-8", "", "a4-highgpu-8g", 1, 8, 8, False, True),
]


def _row(p: Profile) -> tuple[object, ...]:
    return (
        p.name,
        p.alias or "",
        p.machine_type,
        p.hosts_per_slice,
        p.chips_per_host,
        p.chips_per_slice,
        p.multi_host,
        p.flex_start,
    )


def test_every_entry_matches_the_table() -> None:
    assert [_row(p) for p in PROFILES.values()] == TABLE


def _derived(entry: tpu.TpuSlice) -> dict[str, object]:
    return {f.name: getattr(entry, f.name) for f in dataclasses.fields(entry) if not f.init}


@pytest.mark.parametrize(
    ("generation", "machine", "topology", "expected"),
    [
        (tpu.V6E, "ct6e-standard-4t", "4x4", (4, 16, 4, 4, True)),
        (tpu.V5P, "ct5p-hightpu-4t", "2x2x2", (4, 8, 2, 2, True)),
        (tpu.V5E, "ct5lp-hightpu-8t", "2x4", (8, 8, 1, 1, False)),
        (tpu.V5E, "ct5lp-hightpu-4t", "2x4", (4, 8, 2, 2, True)),
        (tpu.V6E, "ct6e-standard-4t", "2x2", (4, 4, 1, 1, False)),
        (tpu.V6E, "ct6e-standard-1t", "1x1", (1, 1, 1, 1, False)),
        (tpu.V4, "ct4p-hightpu-4t", "2x2x4", (4, 16, 4, 4, True)),
        (tpu.TPU7X, "tpu7x-standard-4t", "2x2x2", (4, 8, 2, 2, True)),
    ],
)
def test_slice_objects(
    generation: tpu.TpuGeneration, machine: str, topology: str, expected: tuple[int, int, int, int, bool]
) -> None:
    keys = ("chips_per_vm", "chips_per_slice", "hosts_per_slice", "nodes_per_slice", "multi_host")
    assert _derived(tpu.TpuSlice(generation, machine, topology)) == dict(zip(keys, expected, strict=True))


def test_seed_profile_whole_object() -> None:
    expected = Profile("tpu-v6e-4x4", tpu.TpuSlice(tpu.V6E, "ct6e-standard-4t", "4x4"), "tpu-v6e-16")
    assert get(DEFAULT_PROFILE) == expected
    assert get("tpu-v6e-16") == expected
    assert dataclasses.asdict(expected) | {"entry": None} == {
        "name": "tpu-v6e-4x4",
        "entry": None,
        "alias": "tpu-v6e-16",
        "kind": "tpu",
        "generation": "v6e",
        "machine_type": "ct6e-standard-4t",
        "topology": "4x4",
        "resource_name": "google.com/tpu",
        "gke_accelerator": "tpu-v6e-slice",
        "ray_accelerator_type": "TPU-V6E",
        "chips_per_host": 4,
        "hosts_per_slice": 4,
        "chips_per_slice": 16,
        "nodes_per_slice": 4,
        "multi_host": True,
        "flex_start": True,
        "uses_placement_policy": False,
        "node_selector": {
            "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
            "cloud.google.com/gke-tpu-topology": "4x4",
        },
        "peak_tflops": 918.0,
        "doc_url": "https://cloud.google.com/tpu/docs/v6e",
    }


def test_machine_type_override_changes_hosts() -> None:
    assert get("tpu-v5e-2x4").hosts_per_slice == 1
    other = get("tpu-v5e-2x4", "ct5lp-hightpu-4t")
    assert (other.machine_type, other.hosts_per_slice, other.chips_per_host) == ("ct5lp-hightpu-4t", 2, 4)


def test_gpu_entry_whole_object() -> None:
    a3 = get("gpu-a3-h100-8")
    assert a3.entry == gpu.GpuMachine(
        "a3", "a3-highgpu-8g", "nvidia-h100-80gb", "H100", 8, True, gpu.GKE_GPUS_URL,
        vcpus=208, memory_gib=1872, shape_url=gpu.GCE_ACCELERATOR_MACHINES_URL,
        peak_tflops=989.0, peak_tflops_url=gpu.H100_URL,
    )  # fmt: skip
    assert (a3.resource_name, a3.node_selector) == (
        "nvidia.com/gpu",
        {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"},
    )
    a4 = get("gpu-a4-b200-8")
    assert (a4.machine_type, a4.gke_accelerator, a4.chips_per_slice) == ("a4-highgpu-8g", "nvidia-b200", 8)


def test_every_entry_names_its_documentation_page() -> None:
    for p in PROFILES.values():
        assert p.doc_url.startswith("https://cloud.google.com/"), p.name


def test_tpu7x_multi_host_uses_a_placement_policy() -> None:
    assert get("tpu7x-2x2x2").uses_placement_policy
    assert not get("tpu7x-2x2x1").uses_placement_policy
    assert not get("tpu-v6e-4x4").uses_placement_policy


def test_node_pool_for_the_seed() -> None:
    assert node_pool("tpu-v6e-4x4", 1) == {
        "profile": "tpu-v6e-4x4",
        "kind": "tpu",
        "generation": "v6e",
        "machine_type": "ct6e-standard-4t",
        "tpu_topology": "4x4",
        "placement_policy_required": False,
        "gke_accelerator": "tpu-v6e-slice",
        "resource_name": "google.com/tpu",
        "accelerator_count": 4,
        "hosts_per_slice": 4,
        "nodes_per_slice": 4,
        "chips_per_slice": 16,
        "multi_host": True,
        "slices": 1,
        "min_nodes": 0,
        "initial_nodes": 0,
        "max_nodes": 4,
        "total_nodes": 4,
        "total_chips": 16,
        "flex_start": False,
        "flex_start_supported": True,
        "node_labels": {
            "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
            "cloud.google.com/gke-tpu-topology": "4x4",
        },
        "doc_url": "https://cloud.google.com/tpu/docs/v6e",
    }


def test_node_pool_max_nodes_whole_slices() -> None:
    pool = node_pool("tpu-v6e-2x4", 1, max_nodes=3, flex_start=True)
    assert (pool["max_nodes"], pool["slices"], pool["total_chips"], pool["flex_start"]) == (3, 3, 24, True)


def test_multi_host_pool_holds_exactly_one_slice() -> None:
    """GKE cannot add nodes to a multi-host TPU slice pool: one pool is one slice."""
    with pytest.raises(CountError, match=r"max_nodes 8: a node pool of multi-host profile tpu-v6e-4x4 holds exactly"):
        node_pool("tpu-v6e-16", 1, max_nodes=8, flex_start=True)
    with pytest.raises(CountError, match=r"slices 2: .*each further slice is a new node pool .*concepts/tpus"):
        node_pool("tpu-v6e-4x4", 2)


def test_plan_of_k_multi_host_slices_is_k_pools() -> None:
    pools = node_pools("tpu-v5p-2x2x4", "on-demand-pool", 3)
    assert [(p["name"], p["max_nodes"], p["min_nodes"], p["slices"]) for p in pools] == [
        ("on-demand-pool", 4, 0, 1),
        ("on-demand-pool-2", 4, 0, 1),
        ("on-demand-pool-3", 4, 0, 1),
    ]
    assert {p["plan"] for p in pools} == {"on-demand"} and [p["index"] for p in pools] == [1, 2, 3]
    dws = node_pools("tpu-v6e-4x4", "dws-pool", 2, plan="dws", flex_start=True)
    assert [(p["name"], p["max_nodes"], p["labels"]) for p in dws] == [
        ("dws-pool", 4, {"planb.dev/plan": "dws"}),
        ("dws-pool-2", 4, {"planb.dev/plan": "dws"}),
    ]
    # Single-host (one VM per slice; every GPU profile): one pool that autoscales by nodes.
    assert [(p["name"], p["max_nodes"]) for p in node_pools("gpu-a3-h100-8", "on-demand-pool", 5)] == [
        ("on-demand-pool", 5)
    ]
    # Another machine type can make a single-host profile multi-host: tpu-v5e-2x4 on 4-chip VMs is 2 hosts.
    other = node_pools("tpu-v5e-2x4", "p", 2, machine_type="ct5lp-hightpu-4t")
    assert [(p["name"], p["max_nodes"]) for p in other] == [("p", 2), ("p-2", 2)]
