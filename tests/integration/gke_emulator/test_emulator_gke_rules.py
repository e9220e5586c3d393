"""What the emulator, like GKE, fills in, adds by itself and refuses when a client sends a raw nodePools.create body.

It refuses only what Google documents as refused; what cluster-toolkit, xpk and planb choose on top
(auto-repair off, location policy ANY, NO_RESERVATION on flex-start pools) is accepted here and checked by
the modules as planb's policy (tests/integration/gke_emulator/test_invalid_inputs.py).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from planb.catalog import tpu
from planb.local.gke_emulator import rules
from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.gke_api import call, create, refused, workload_policy

LOCATION = "projects/planb-test/locations/us-east5-b"
CLUSTER = f"{LOCATION}/clusters/c"
POOLS = f"{CLUSTER}/nodePools"

TPU_TAINT = {"key": "google.com/tpu", "value": "present", "effect": "NO_SCHEDULE"}
QUEUED_TAINT = {"key": "cloud.google.com/gke-queued", "value": "true", "effect": "NO_SCHEDULE"}

#: A flex-start + queued TPU pool with only the fields GKE documents as required for one.
DWS: dict[str, Any] = {
    "name": "dws",
    "initialNodeCount": 0,
    "config": {"machineType": "ct6e-standard-4t", "flexStart": True},
    "queuedProvisioning": {"enabled": True},
    "autoscaling": {"enabled": True, "minNodeCount": 0, "maxNodeCount": 4},
    "placementPolicy": {"tpuTopology": "4x4"},
}


def _cluster(emulator: RunningEmulator, version: str = "1.34") -> None:
    create(emulator, LOCATION, f"{LOCATION}/clusters", {"cluster": {"name": "c", "initialClusterVersion": version}})


def _pool(emulator: RunningEmulator, name: str) -> dict[str, Any]:
    status, pool = call(emulator, "GET", f"/v1/{POOLS}/{name}")
    assert status == 200, pool
    return pool


def _with(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A deep copy of ``base`` with dotted paths set (``config.flexStart=False``)."""
    body = copy.deepcopy(base)
    for path, value in changes.items():
        node = body
        *parents, last = path.split("__")
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    return body


# ---- GKE's defaults for what a body omits ------------------------------------------------------------
def test_defaults_fill_what_a_create_body_omits(emulator: RunningEmulator) -> None:
    _cluster(emulator)
    create(emulator, LOCATION, POOLS, {"nodePool": DWS})
    pool = _pool(emulator, "dws")
    assert pool["management"] == {"autoRepair": True, "autoUpgrade": True}
    assert pool["autoscaling"]["locationPolicy"] == "BALANCED"
    assert pool["config"]["reservationAffinity"] == {"consumeReservationType": "ANY_RESERVATION"}


# ---- recommendations, not refusals -------------------------------------------------------------------
@pytest.mark.parametrize(
    "changes",
    [
        {"management": {"autoRepair": True, "autoUpgrade": True}},
        {"autoscaling__locationPolicy": "BALANCED"},
        {"config__reservationAffinity": {"consumeReservationType": "ANY_RESERVATION"}},
        # cluster-toolkit's TPU DWS examples and xpk send COMPACT with queued provisioning; GKE documents
        # no refusal of it for TPUs (cluster-toolkit refuses it for GPUs only).
        {"placementPolicy": {"type": "COMPACT", "tpuTopology": "4x4"}},
    ],
    ids=["auto-repair on", "location policy BALANCED", "any reservation", "COMPACT placement"],
)
def test_flex_start_queued_pool_accepts_what_google_only_recommends(
    emulator: RunningEmulator, changes: dict[str, Any]
) -> None:
    _cluster(emulator)
    create(emulator, LOCATION, POOLS, {"nodePool": _with(DWS, **changes)})
    assert _pool(emulator, "dws")["status"] == "RUNNING"


# ---- what Google documents as refused ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"autoscaling": {"enabled": False}}, "autoscaling to be enabled"),
        ({"autoscaling__minNodeCount": 4}, "minimum node count to be 0"),
        ({"initialNodeCount": 4}, "initialNodeCount 0"),
        ({"config__spot": True}, "cannot be Spot"),
        ({"config__maxRunDuration": f"{8 * 86400}s"}, "7-day cap"),
    ],
    ids=["autoscaling off", "min nodes 4", "initial nodes 4", "spot", "max run duration 8 days"],
)
def test_flex_start_refusals_google_documents_stay(
    emulator: RunningEmulator, changes: dict[str, Any], fragment: str
) -> None:
    _cluster(emulator)
    assert fragment in refused(emulator, POOLS, {"nodePool": _with(DWS, **changes)})


# ---- topologies: exactly the catalog's -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("machine_type", "topology"),
    [
        ("ct5p-hightpu-4t", "4x4x12"),
        ("ct5p-hightpu-4t", "4x4"),
        ("ct4p-hightpu-4t", "16x16x16"),
        ("ct6e-standard-4t", "4x12"),
    ],
)
def test_a_topology_the_generation_does_not_offer_is_refused(
    emulator: RunningEmulator, machine_type: str, topology: str
) -> None:
    """Not any multiple of 4: GKE's topology tables list each generation's shapes (4x4x12 is 192 chips of v5p,
    a multiple of 4 in every dimension, and still not a v5p slice GKE offers)."""
    _cluster(emulator)
    body = {"name": "p", "config": {"machineType": machine_type}, "placementPolicy": {"tpuTopology": topology}}
    message = refused(emulator, POOLS, {"nodePool": body})
    assert f"Topology '{topology}' is not offered" in message and rules.DOC_PLAN_TPUS in message


@pytest.mark.parametrize(
    ("machine", "topology"),
    [
        (m.name, t)
        for g in tpu.GENERATIONS
        if not g.uses_placement_policy
        for m in g.machine_types
        for t in m.topologies
        if t.count("x") == 2
    ],
)
def test_every_3d_catalog_topology_is_accepted(machine: str, topology: str) -> None:
    found = tpu.find_machine(machine)
    assert found is not None
    hosts = tpu.TpuSlice(found[0], machine, topology).hosts_per_slice
    body = {
        "name": "p",
        "config": {"machineType": machine},
        "placementPolicy": {"tpuTopology": topology},
        "autoscaling": {"enabled": True, "minNodeCount": 0, "maxNodeCount": hosts},
    }
    rules.check_node_pool(body, "1.34")


# ---- TPU7x (Ironwood) ------------------------------------------------------------------------------------
TPU7X = {
    "name": "ironwood",
    "config": {"machineType": "tpu7x-standard-4t"},
    "autoscaling": {"enabled": True, "minNodeCount": 0, "maxNodeCount": 2},
    "placementPolicy": {"policyName": "wp-2x2x2"},
}


def _tpu7x_cluster(emulator: RunningEmulator, version: str = "1.34") -> None:
    """The cluster, and the workload policy TPU7X names in the cluster's project and region."""
    _cluster(emulator, version)
    workload_policy(emulator, "planb-test", "us-east5", "wp-2x2x2", "2x2x2")


def test_tpu7x_multi_host_pool_takes_a_workload_policy(emulator: RunningEmulator) -> None:
    _tpu7x_cluster(emulator)
    create(emulator, LOCATION, POOLS, {"nodePool": TPU7X})
    pool = _pool(emulator, "ironwood")
    assert pool["placementPolicy"] == {"policyName": "wp-2x2x2"}
    assert TPU_TAINT in pool["config"]["taints"]


def test_tpu7x_pool_placed_by_a_workload_policy_is_labelled_with_its_topology(emulator: RunningEmulator) -> None:
    """GKE's TPU workloads select nodes by gke-tpu-topology; a policy-placed slice carries the policy's."""
    _tpu7x_cluster(emulator)
    create(emulator, LOCATION, POOLS, {"nodePool": TPU7X})
    labels = _pool(emulator, "ironwood")["config"]["labels"]
    assert labels[tpu.TOPOLOGY_LABEL] == "2x2x2"
    assert labels[tpu.ACCELERATOR_LABEL] == "tpu7x"


def test_tpu7x_pool_naming_a_missing_workload_policy_is_refused(emulator: RunningEmulator) -> None:
    """container v1 PlacementPolicy.policyName: not found in the pool's project and region is InvalidArgument."""
    _cluster(emulator)
    workload_policy(emulator, "planb-test", "us-central1", "wp-2x2x2", "2x2x2")  # another region
    message = refused(emulator, POOLS, {"nodePool": TPU7X})
    assert "placementPolicy.policyName" in message and "'wp-2x2x2' was not found" in message, message
    assert "same project and region" in message and "--region=us-east5" in message, message
    status, _ = call(emulator, "GET", f"/v1/{POOLS}/ironwood")
    assert status == 404


def test_tpu7x_multi_host_pool_with_tpu_topology_is_refused(emulator: RunningEmulator) -> None:
    _cluster(emulator)
    body = _with(TPU7X, placementPolicy={"tpuTopology": "2x2x2"})
    message = refused(emulator, POOLS, {"nodePool": body})
    assert "Use workload policy instead" in message and rules.DOC_IRONWOOD in message


def test_tpu7x_single_host_pool_keeps_tpu_topology(emulator: RunningEmulator) -> None:
    _cluster(emulator)
    body = _with(TPU7X, placementPolicy={"tpuTopology": "2x2x1"}, autoscaling={"enabled": True, "maxNodeCount": 1})
    create(emulator, LOCATION, POOLS, {"nodePool": body})


def test_tpu7x_needs_gke_1_34_0_gke_2201000(emulator: RunningEmulator) -> None:
    _tpu7x_cluster(emulator, version="1.34.0-gke.1000000")
    message = refused(emulator, POOLS, {"nodePool": TPU7X})
    assert "1.34.0-gke.2201000" in message and rules.DOC_IRONWOOD in message


@pytest.mark.parametrize(
    "changes",
    [{"config__flexStart": True}, {"queuedProvisioning": {"enabled": True}}],
    ids=["flex-start", "queued provisioning"],
)
def test_tpu7x_flex_start_and_queued_provisioning_are_refused_with_the_reason(
    emulator: RunningEmulator, changes: dict[str, Any]
) -> None:
    _tpu7x_cluster(emulator)
    message = refused(emulator, POOLS, {"nodePool": _with(TPU7X, **changes)})
    assert "TPU tpu7x" in message and "not document" in message and tpu.TPU7X.flex_start_url in message


# ---- what GKE adds by itself -------------------------------------------------------------------------
def test_gke_adds_its_taints_and_labels_to_tpu_and_queued_pools(emulator: RunningEmulator) -> None:
    _cluster(emulator)
    mine = {"key": "planb.dev/plan", "value": "b", "effect": "NO_SCHEDULE"}
    body = _with(DWS, config__taints=[mine], config__labels={"planb.dev/plan": "b"})
    create(emulator, LOCATION, POOLS, {"nodePool": body})
    config = _pool(emulator, "dws")["config"]
    assert sorted(config["taints"], key=lambda t: t["key"]) == sorted(
        [mine, TPU_TAINT, QUEUED_TAINT], key=lambda t: t["key"]
    )
    assert config["labels"] == {
        "planb.dev/plan": "b",
        "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
        "cloud.google.com/gke-tpu-topology": "4x4",
        "cloud.google.com/gke-accelerator-count": "4",
        "cloud.google.com/gke-flex-start": "true",
        "cloud.google.com/gke-provisioning": "flex-start",
    }
    assert config["resourceLabels"]["goog-gke-node-pool-provisioning-model"] == "flex-start"


def test_a_gpu_pool_gets_the_gpu_taint(emulator: RunningEmulator) -> None:
    _cluster(emulator)
    create(emulator, LOCATION, POOLS, {"nodePool": {"name": "gpu", "config": {"machineType": "a3-highgpu-8g"}}})
    taints = _pool(emulator, "gpu")["config"]["taints"]
    assert taints == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (
            {
                "networkConfig": {"defaultEnablePrivateNodes": True},
                "privateClusterConfig": {"enablePrivateNodes": True},
            },
            "invalid to specify both",
        ),
        (
            {"networkConfig": {"defaultEnablePrivateNodes": True}, "ipAllocationPolicy": {"useIpAliases": False}},
            "must be VPC-native",
        ),
        ({"privateClusterConfig": {"masterIpv4CidrBlock": "172.16.0.0/24"}}, "must be a /28"),
    ],
    ids=["both-private-node-fields", "private-nodes-on-routes", "master-range-not-28"],
)
def test_private_node_settings_gke_refuses(emulator: RunningEmulator, extra: dict[str, Any], fragment: str) -> None:
    body = {"cluster": {"name": "c", "initialClusterVersion": "1.34", **extra}}
    message = refused(emulator, f"{LOCATION}/clusters", body)
    assert fragment in message, message
    assert "legacy/network-isolation" in message or "clusters#NetworkConfig" in message, message  # the rule's page
    assert emulator.store.clusters == {}
