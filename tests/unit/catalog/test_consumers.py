"""Every catalog machine type and profile is usable by each consumer (no stack needed).

The consumers: the capacity simulator (node capacity of a pool's machine type), the GKE emulator's
rules (a node pool for the profile is accepted), the values generator, and training/train.py fed
the environment the chart gives the job (charts/planb/templates/_helpers.tpl ``planb.trainEnv`` and
rayjob.yaml's PLANB_PEAK_TFLOPS).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from planb_train.config import TPU7X_ACCELERATOR_TYPE, load_config
from planb_train.runners.outcome import UnsupportedByRayError
from planb_train.runners.ray_train import ray_detects_tpu7x, scaling_config_kwargs

from planb.catalog import PROFILES, chart_values, gpu, node_pool, tpu
from planb.catalog.errors import UnknownMachineTypeError
from planb.catalog.profiles import Profile
from planb.local.capacity import general, machines
from planb.local.capacity.pools import from_gke
from planb.local.gke_emulator import rules
from tests.support.shared.training import load_train

#: The GKE version the seed asks for: TPU flex-start is allowed from 1.33.0-gke.1712000.
CLUSTER_VERSION = "1.34"

#: Every (machine type, topology or None) the catalog holds: TPU machine types with each topology
#: they form, GPU and general-purpose machine types alone.
SHAPES: list[tuple[str, str | None]] = [
    *((m.name, t) for g in tpu.GENERATIONS for m in g.machine_types for t in m.topologies),
    *((m.machine_type, None) for m in gpu.MACHINES),
    *((m.machine_type, None) for m in general.MACHINES),
]


def _gke_pool(pool: dict[str, Any], *, dws: bool) -> dict[str, Any]:
    """The GKE v1 NodePool body the gke_node_pool role sends for ``planb_node_pool`` settings."""
    body: dict[str, Any] = {
        "name": "dws-pool" if dws else "on-demand-pool",
        "cluster": "projects/p/locations/us-east5-b/clusters/tpu-cluster",
        "initialNodeCount": pool["initial_nodes"],
        "config": {
            "machineType": pool["machine_type"],
            "reservationAffinity": {"consumeReservationType": "NO_RESERVATION"},
            "flexStart": dws,
        },
        "management": {"autoRepair": False, "autoUpgrade": True},
        "queuedProvisioning": {"enabled": dws},
        "autoscaling": {
            "enabled": True,
            "minNodeCount": pool["min_nodes"],
            "maxNodeCount": pool["max_nodes"],
            "locationPolicy": "ANY",
        },
    }
    if pool["placement_policy_required"]:
        # A multi-host TPU7x slice: a workload policy carries the topology, instead of tpuTopology.
        body["placementPolicy"] = {"policyName": f"wp-{pool['tpu_topology']}"}
    elif pool["tpu_topology"]:
        body["placementPolicy"] = {"tpuTopology": pool["tpu_topology"]}
    return body


def _pools(profile: Profile) -> list[dict[str, Any]]:
    """Node pool settings of one slice of ``profile`` on every machine type that forms it."""
    others: list[str] = []
    if isinstance(profile.entry, tpu.TpuSlice):
        others = [
            m.name
            for m in profile.entry.generation.machine_types
            if profile.topology in m.topologies and m.name != profile.machine_type
        ]
    return [node_pool(profile.name, 1, machine_type=m) for m in [profile.machine_type, *others]]


@pytest.fixture(scope="module")
def train() -> ModuleType:
    return load_train("planb_consumers_train")


@pytest.mark.parametrize(("machine_type", "topology"), SHAPES, ids=lambda v: str(v))
def test_simulator_gives_each_machine_type_its_capacity(machine_type: str, topology: str | None) -> None:
    body = {
        "name": "pool",
        "config": {"machineType": machine_type},
        "autoscaling": {"enabled": True, "totalMaxNodeCount": 4},
    }
    if topology:
        body["placementPolicy"] = {"tpuTopology": topology}
    pool = from_gke(body)
    capacity = machines.capacity(pool.machine)
    tpu_entry = tpu.find_machine(machine_type)
    gpu_entry = gpu.find_machine(machine_type)
    accelerators = {k: v for k, v in capacity.items() if k in (tpu.RESOURCE, gpu.RESOURCE)}
    if tpu_entry is not None:
        assert topology is not None
        assert accelerators == {tpu.RESOURCE: str(tpu_entry[1].chips_per_vm)}
        assert (capacity["cpu"], capacity["memory"]) == (str(tpu_entry[1].vcpus), f"{tpu_entry[1].memory_gib}Gi")
        assert pool.hosts_per_slice == tpu.TpuSlice(tpu_entry[0], machine_type, topology).hosts_per_slice
        assert pool.node_labels()[tpu.ACCELERATOR_LABEL] == tpu_entry[0].gke_accelerator
    elif gpu_entry is not None:
        assert accelerators == {gpu.RESOURCE: str(gpu_entry.gpus_per_vm)}
        assert (capacity["cpu"], capacity["memory"]) == (str(gpu_entry.vcpus), f"{gpu_entry.memory_gib}Gi")
        assert pool.node_labels()[gpu.ACCELERATOR_LABEL] == gpu_entry.gke_accelerator
    else:
        assert accelerators == {}
        assert int(capacity["cpu"]) >= 1 and capacity["memory"].endswith("Gi")
    assert int(capacity["cpu"]) > 0 and capacity["pods"] == "110"


def test_every_machine_type_names_the_page_its_shape_comes_from() -> None:
    for shape in machines.SHAPES.values():
        # Google's pages, or GKE's autoscaler's machine-type table where they give no figure (catalog/tpu.py).
        sources = ("https://cloud.google.com/", "https://github.com/GoogleCloudPlatform/cluster-autoscaler/blob/")
        assert shape.doc_url.startswith(sources), shape.machine_type
        assert shape.vcpus > 0 and shape.memory_gib > 0, shape.machine_type
    assert sorted(machines.SHAPES) == sorted({m for m, _ in SHAPES})


@pytest.mark.parametrize("machine_type", ["a3-highgpu-3g", "tpu7x-standard-1t", "n1-standard-4"])
def test_unknown_machine_type_is_a_typed_error_not_a_node(machine_type: str) -> None:
    body = {"name": "pool", "config": {"machineType": machine_type}}
    with pytest.raises(UnknownMachineTypeError) as err:
        from_gke(body)
    assert err.value.machine_type == machine_type
    text = str(err.value)
    assert f"machine type {machine_type!r} is not in the planb catalog" in text
    assert "a3-highgpu-1g" in text and "ct6e-standard-4t" in text and "n2-standard-16" in text


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_emulator_accepts_a_node_pool_for_every_profile(name: str) -> None:
    profile = PROFILES[name]
    for pool in _pools(profile):
        rules.check_node_pool(_gke_pool(pool, dws=False), CLUSTER_VERSION)
        if profile.flex_start:
            flex = node_pool(profile.name, 1, flex_start=True, machine_type=pool["machine_type"])
            rules.check_node_pool(_gke_pool(flex, dws=True), CLUSTER_VERSION)
        # The simulator reads the same body back: one slice is hosts_per_slice nodes.
        assert from_gke(_gke_pool(pool, dws=False)).hosts_per_slice == pool["hosts_per_slice"]


def test_emulator_refuses_tpu_types_the_catalog_does_not_offer() -> None:
    for machine_type in ("tpu7x-standard-1t", "ct3p-hightpu-4t"):
        body = {"name": "p", "config": {"machineType": machine_type}}
        with pytest.raises(rules.RuleViolation, match=rf"{machine_type}' is not an offered TPU machine type"):
            rules.check_node_pool(body, CLUSTER_VERSION)


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_values_and_train_py_accept_every_profile(name: str, train: ModuleType) -> None:
    from ray.train.v2.api.config import ScalingConfig

    profile = PROFILES[name]
    values = chart_values(name, slices=2)
    acc = values["accelerator"]
    assert (acc["machineType"], acc["chipsPerHost"], acc["hostsPerSlice"]) == (
        profile.machine_type,
        profile.chips_per_host,
        profile.hosts_per_slice,
    )
    assert acc["peakTflops"] > 0
    replicas = values["job"]["workers"]["replicas"]
    # What planb.trainEnv and rayjob.yaml set on head and workers.
    env = {
        "PLANB_MODEL": "linear",
        "PLANB_NUM_WORKERS": str(replicas * acc["hostsPerSlice"]),
        "PLANB_ACCELERATOR": acc["kind"],
        "PLANB_CHIPS_PER_WORKER": str(acc["chipsPerHost"]),
        "PLANB_CPUS_PER_WORKER": "",
        "PLANB_TOPOLOGY": acc["topology"],
        "PLANB_ACCELERATOR_TYPE": acc["rayAcceleratorType"],
        "PLANB_PEAK_TFLOPS": str(acc["peakTflops"]),
    }
    cfg = load_config(env)
    assert cfg.num_workers == 2 * profile.hosts_per_slice
    assert cfg.peak_tflops == profile.peak_tflops
    if profile.kind == "tpu":
        assert cfg.tpu_hosts() == profile.hosts_per_slice
    if profile.ray_accelerator_type == TPU7X_ACCELERATOR_TYPE and not ray_detects_tpu7x():
        with pytest.raises(UnsupportedByRayError, match="TPU7x"):
            scaling_config_kwargs(cfg)
        single = load_config({**env, "PLANB_NUM_WORKERS": "1"}) if profile.hosts_per_slice == 1 else None
        if single is not None:
            assert ScalingConfig(**scaling_config_kwargs(single)).use_tpu
        return
    scaling = ScalingConfig(**scaling_config_kwargs(cfg))
    assert scaling.num_workers == cfg.num_workers
    assert (scaling.use_tpu, scaling.use_gpu) == (profile.kind == "tpu", profile.kind == "gpu")
