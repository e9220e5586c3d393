"""Every body the planb.gke modules can send validates against Google's discovery documents.

The bodies are the modules' own: gke_cluster and gke_node_pool run in check mode against the emulator before the
cluster exists, which returns the body a create would POST; their update calls come from the modules' planners
(``cluster_updates``, ``node_pool_updates``, each of its module's request) against what the emulator stores. A node
pool is built for each plan kind (reservation, on-demand, dws, spot: the ladder filter's settings, mapped onto the
module as roles/gke_node_pool does) and one profile of each family (TPU v5e, v6e, TPU7x, GPU) plus a CPU pool sized
by hand.
"""

from __future__ import annotations

import copy
import importlib
from typing import Any

import pytest

from planb.local.gke_emulator import contract, discovery
from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.gke_api import call
from tests.support.integration.gke.modules import CLUSTER, LOCATION, PROJECT, ModuleRunner
from tests.support.integration.gke.seed_bodies import SEED_CLUSTER, SEED_DWS_POOL, SEED_ONDEMAND_POOL

Body = dict[str, Any]

LADDER: list[Body] = [
    {"name": "reserved", "kind": "reservation", "slices": 1, "nodepool": "reserved-pool", "reservation": "res"},
    {"name": "on-demand", "kind": "on-demand", "slices": 1, "nodepool": "on-demand-pool"},
    {"name": "dws", "kind": "dws", "slices": 1, "nodepool": "dws-pool"},
    {"name": "spot", "kind": "spot", "slices": 1, "nodepool": "spot-pool"},
]
ALL_KINDS = ["reservation", "on-demand", "dws", "spot"]
#: One profile of each family and the plan kinds it can take: GKE offers no flex-start for TPU7x (the catalog's
#: flex_start_supported), so it has no dws rung.
PROFILES = {
    "tpu-v5e-2x4": ALL_KINDS,
    "tpu-v6e-4x4": ALL_KINDS,
    "tpu7x-2x2x2": ["reservation", "on-demand", "spot"],
    "gpu-a3-h100-8": ALL_KINDS,
}
#: A workload policy name (TPU7x multi-host slices are placed by one instead of a topology).
POLICY = "ironwood-policy"


def _violations(api: str, schema_id: str, body: Body, root: str = "") -> list[str]:
    return [v.description for v in contract.conform(api, schema_id, body, root=root)[1]]


def _request_schema(method: str, path: str) -> tuple[str, str]:
    found = discovery.find_method(method, path)
    assert found is not None and found.request is not None, (method, path)
    return found.api, found.request


def _pool_args(pool: Body) -> Body:
    """gke_node_pool's arguments for one pool of the ladder, as roles/gke_node_pool (settings.yml, node_pool.yml)
    maps the catalog's sizing and the plan's settings onto the module."""
    settings = pool["settings"]
    args: Body = {
        "name": pool["name"],
        "cluster": CLUSTER,
        "machine_type": pool["machine_type"],
        "initial_node_count": 0,
        "autoscaling": {"min_node_count": pool["min_nodes"], "max_node_count": pool["max_nodes"]},
        "reservation_affinity": settings["reservation_affinity"],
        "queued_provisioning": settings["queued_provisioning"],
        "flex_start": settings["flex_start"],
        "spot": settings["spot"],
        "auto_repair": settings["auto_repair"],
        "labels": pool["labels"],
        "taints": settings["taints"],
        "workload_metadata_mode": "GKE_METADATA",
        "gpu_driver_version": "DEFAULT",
        "check_tpu_zone": False,
    }
    if settings["location_policy"]:
        args["autoscaling"]["location_policy"] = settings["location_policy"]
    if settings["reservation"]:
        args["reservation"] = settings["reservation"]
    if pool.get("placement_policy_required"):
        args["placement_policy"] = POLICY
    elif pool.get("tpu_topology"):
        args["tpu_topology"] = pool["tpu_topology"]
    if pool["kind"] == "gpu":
        args.update(accelerator_type=pool["gke_accelerator"], accelerator_count=pool["accelerator_count"])
    return args


def _ladder_pools(profile: str, kinds: list[str] = ALL_KINDS) -> list[Body]:
    ladder = importlib.import_module("ansible_collections.planb.gke.plugins.filter.ladder")
    plans = [copy.deepcopy(plan) for plan in LADDER if plan["kind"] in kinds]
    return [plan["pools"][0] for plan in ladder.plans(plans, profile, PROJECT)]


def _reserve(emulator: RunningEmulator, machine_type: str) -> None:
    body = {
        "name": "res",
        "specificReservationRequired": True,
        "specificReservation": {"count": "64", "instanceProperties": {"machineType": machine_type}},
    }
    status, answer = call(emulator, "POST", f"/compute/v1/projects/{PROJECT}/zones/{LOCATION}/reservations", body)
    assert status == 200, answer


@pytest.mark.parametrize("profile", PROFILES)
def test_every_node_pool_create_body_of_each_plan_kind_validates(
    profile: str, modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    pools = _ladder_pools(profile, PROFILES[profile])
    assert [pool["plan_kind"] for pool in pools] == PROFILES[profile]
    _reserve(emulator, pools[0]["machine_type"])
    for pool in pools:
        result = modules.run("gke_node_pool", _pool_args(pool), check_mode=True)
        assert result["actions"] == ["create"], result
        body = {"nodePool": result["node_pool"]}
        assert _violations("container", "CreateNodePoolRequest", body) == [], (pool["plan_kind"], body)


def test_a_cpu_pool_sized_by_hand_validates(modules: ModuleRunner) -> None:
    args = {"name": "cpu-pool", "cluster": CLUSTER, "machine_type": "n2-standard-16", "initial_node_count": 2}
    result = modules.run("gke_node_pool", args, check_mode=True)
    assert _violations("container", "CreateNodePoolRequest", {"nodePool": result["node_pool"]}) == []


def test_a_gpu_pool_sends_its_int64_accelerator_count_as_google_answers_it(modules: ModuleRunner) -> None:
    """AcceleratorConfig.acceleratorCount is int64: a JSON string, also in what the module sends."""
    (gpu,) = [p for p in _ladder_pools("gpu-a3-h100-8") if p["plan_kind"] == "on-demand"]
    body = modules.run("gke_node_pool", _pool_args(gpu), check_mode=True)["node_pool"]
    assert body["config"]["accelerators"][0]["acceleratorCount"] == "8"
    _, strict = contract.conform("container", "NodePool", body, output=True)
    assert strict == []


@pytest.mark.parametrize(
    ("workload_identity", "ray_operator"),
    [(True, False), (False, False), (True, True)],
    ids=["defaults", "no-workload-identity", "ray-operator-add-on"],
)
def test_the_cluster_create_body_validates(workload_identity: bool, ray_operator: bool, modules: ModuleRunner) -> None:
    """The gke_cluster role's default turns GKE's Ray Operator add-on off (the kuberay role installs KubeRay); the
    add-on on is the opt-in (planb_ray_operator_addon). Either body validates."""
    args = {"name": CLUSTER, "version": "1.34", "workload_identity": workload_identity, "labels": {"team": "ml"}}
    result = modules.run("gke_cluster", {**args, "ray_operator": ray_operator}, check_mode=True)
    assert result["actions"] == ["create"]
    assert result["cluster"]["addonsConfig"]["rayOperatorConfig"] == {"enabled": ray_operator}
    assert _violations("container", "CreateClusterRequest", {"cluster": result["cluster"]}) == []


def test_the_org_policy_safe_cluster_body_validates(modules: ModuleRunner) -> None:
    """Shielded GKE Nodes, default-pool's secure boot and a Shared VPC's secondary ranges: the org-policy-safe body."""
    args = {
        "name": CLUSTER,
        "version": "1.34",
        "subnetwork": "tpu-subnet",
        "cluster_secondary_range_name": "pods",
        "services_secondary_range_name": "services",
    }
    cluster = modules.run("gke_cluster", args, check_mode=True)["cluster"]
    assert cluster["shieldedNodes"] == {"enabled": True}
    assert cluster["nodePools"][0]["config"]["shieldedInstanceConfig"]["enableSecureBoot"] is True
    assert cluster["ipAllocationPolicy"]["servicesSecondaryRangeName"] == "services"
    assert _violations("container", "CreateClusterRequest", {"cluster": cluster}) == []


def test_every_update_call_of_the_modules_validates(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    """Each in-place update gke_cluster and gke_node_pool plan, against the request schema of its REST method."""
    cluster_mod = importlib.import_module("ansible_collections.planb.gke.plugins.module_utils.cluster")
    pool_mod = importlib.import_module("ansible_collections.planb.gke.plugins.module_utils.node_pool")
    utils = "ansible_collections.planb.gke.plugins.module_utils"
    ClusterRequest = importlib.import_module(f"{utils}.cluster_request").ClusterRequest
    NodePoolRequest = importlib.import_module(f"{utils}.node_pool_request").NodePoolRequest
    modules.run("gke_cluster", {"name": CLUSTER, "version": "1.34", "workload_identity": False})
    (dws,) = [p for p in _ladder_pools("tpu-v6e-4x4") if p["plan_kind"] == "dws"]
    args = _pool_args(dws)
    args.pop("workload_metadata_mode")  # the cluster has no Workload Identity here
    modules.run("gke_node_pool", args)
    loc = f"projects/{PROJECT}/locations/{LOCATION}"
    cluster_path, pool_path = f"{loc}/clusters/{CLUSTER}", f"{loc}/clusters/{CLUSTER}/nodePools/dws-pool"
    current_pool = call(emulator, "GET", f"/v1/{pool_path}")[1]
    desired = copy.deepcopy(current_pool)
    desired["autoscaling"]["maxNodeCount"] = 8
    desired["management"]["autoUpgrade"] = False
    desired["config"].update(labels={"planb.dev/plan": "b"}, taints=[], maxRunDuration="3600s")
    desired["config"]["workloadMetadataConfig"] = {"mode": "GKE_METADATA"}
    desired["locations"] = [LOCATION]
    diffs = ["autoscaling.maxNodeCount", "management.autoUpgrade", "config.labels", "config.taints"]
    diffs += ["config.maxRunDuration", "config.workloadMetadataConfig.mode", "locations"]
    params = {**modules.base_args(), **args, "name": "dws-pool"}
    calls = pool_mod.node_pool_updates(
        NodePoolRequest.of(params), pool_path, desired, current_pool, list(diffs), {}, {}
    )
    assert [c[0] for c in calls] == ["setAutoscaling", "setManagement", "update"]
    current_cluster = call(emulator, "GET", f"/v1/{cluster_path}")[1]
    wanted = {
        "addonsConfig": {"rayOperatorConfig": {"enabled": False}},
        "nodePoolDefaults": {"nodeConfigDefaults": {"gcfsConfig": {"enabled": False}}},
        "workloadIdentityConfig": {"workloadPool": f"{PROJECT}.svc.id.goog"},
        "releaseChannel": {"channel": "STABLE"},
        "shieldedNodes": {"enabled": False},
    }
    cluster_params = {"name": CLUSTER, "version": "1.35", "default_pool_machine_type": "e2-standard-4"}
    current_cluster["nodePools"][0]["config"]["machineType"] = "e2-standard-4"
    cluster_diffs = ["addonsConfig.rayOperatorConfig.enabled", "nodePoolDefaults", "workloadIdentityConfig"]
    cluster_diffs += ["releaseChannel.channel", "shieldedNodes.enabled"]
    calls += cluster_mod.cluster_updates(
        ClusterRequest.of(cluster_params), cluster_path, wanted, current_cluster, cluster_diffs, {}, {}
    )
    assert [c[0] for c in calls[3:]] == [
        "desiredAddonsConfig",
        "desiredGcfsConfig",
        "desiredShieldedNodes",
        "desiredWorkloadIdentityConfig",
        "desiredReleaseChannel",
        "desiredMasterVersion",
    ]
    for _action, method, path, body in calls:
        api, schema_id = _request_schema(method, f"/v1/{path}")
        assert _violations(api, schema_id, body) == [], (method, path, body)


def test_the_service_enable_body_validates() -> None:
    """gcp_service (module_utils/project_apis.py) enables an API with the body {}."""
    api, schema_id = _request_schema("POST", f"/serviceusage/v1/projects/{PROJECT}/services/tpu.googleapis.com:enable")
    assert _violations(api, schema_id, {}) == []


@pytest.mark.parametrize("body", [SEED_CLUSTER, SEED_ONDEMAND_POOL, SEED_DWS_POOL], ids=["cluster", "on-demand", "dws"])
def test_the_seeds_gcloud_bodies_validate(body: Body) -> None:
    schema_id = "CreateClusterRequest" if "cluster" in body else "CreateNodePoolRequest"
    assert _violations("container", schema_id, body) == []
