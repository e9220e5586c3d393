"""Bad input is refused before the first API call: each case asserts the emulator received no request at all."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.modules import CLUSTER_ARGS, DWS_ARGS, ONDEMAND_ARGS, ModuleRunner

DWS_AUTOSCALING = {"min_node_count": 0, "max_node_count": 4, "location_policy": "ANY"}

CASES: list[tuple[str, str, dict[str, Any], list[str]]] = [
    (
        "flex-start with min nodes 2",
        "gke_node_pool",
        {**DWS_ARGS, "autoscaling": {**DWS_AUTOSCALING, "min_node_count": 2}},
        ["flex_start needs autoscaling from 0", "min node count is 2"],
    ),
    (
        "reservation affinity ANY on the DWS pool",
        "gke_node_pool",
        {**DWS_ARGS, "reservation_affinity": "ANY_RESERVATION"},
        ["reservation_affinity NO_RESERVATION"],
    ),
    (
        "topology not valid for the machine type",
        "gke_node_pool",
        {**ONDEMAND_ARGS, "machine_type": "ct6e-standard-8t"},
        ["tpu_topology 4x4", "ct6e-standard-8t"],
    ),
    ("cluster version 1.30", "gke_cluster", {**CLUSTER_ARGS, "version": "1.30"}, ["version 1.30 is refused", "1.34"]),
    ("flex-start on Spot VMs", "gke_node_pool", {**DWS_ARGS, "spot": True}, ["cannot use Spot"]),
    ("flex-start with auto-repair", "gke_node_pool", {**DWS_ARGS, "auto_repair": True}, ["auto_repair false"]),
    (
        "flex-start with location policy BALANCED",
        "gke_node_pool",
        {**DWS_ARGS, "autoscaling": {**DWS_AUTOSCALING, "location_policy": "BALANCED"}},
        ["location_policy ANY"],
    ),
    (
        "max nodes not one slice's hosts",
        "gke_node_pool",
        {**ONDEMAND_ARGS, "autoscaling": {"min_node_count": 0, "max_node_count": 6}},
        ["max node count 6 must be 4", "holds exactly one 4x4 slice"],
    ),
    (
        "two slices in one multi-host pool",
        "gke_node_pool",
        {**ONDEMAND_ARGS, "autoscaling": {"min_node_count": 0, "max_node_count": 8}},
        ["max node count 8 must be 4", "for K slices create K node pools", "concepts/tpus"],
    ),
    (
        "a multi-host pool sized by its total max",
        "gke_node_pool",
        {**ONDEMAND_ARGS, "autoscaling": {"total_min_node_count": 0, "total_max_node_count": 4}},
        ["use max_node_count 4, not total_max_node_count"],
    ),
    (
        "flex-start on TPU v4",
        "gke_node_pool",
        {**DWS_ARGS, "machine_type": "ct4p-hightpu-4t", "tpu_topology": "2x2x4"},
        ["flex_start is not available for TPU v4"],
    ),
    (
        "TPU flex-start on a cluster older than 1.33.0-gke.1712000",
        "gke_node_pool",
        {**DWS_ARGS, "cluster_version": "1.33.0-gke.1000000"},
        ["1.33.0-gke.1712000"],
    ),
    ("max run duration over 7 days", "gke_node_pool", {**DWS_ARGS, "max_run_duration": "8d"}, ["up to 7d"]),
    (
        "min above max",
        "gke_node_pool",
        {**ONDEMAND_ARGS, "tpu_topology": "2x2", "autoscaling": {"min_node_count": 3, "max_node_count": 2}},
        ["between 0 and the max node count 2"],
    ),
    ("invalid node pool name", "gke_node_pool", {**ONDEMAND_ARGS, "name": "DWS_Pool"}, ["name 'DWS_Pool'"]),
    (
        "queued provisioning without autoscaling",
        "gke_node_pool",
        {**DWS_ARGS, "autoscaling": None, "flex_start": False},
        ["queued_provisioning needs autoscaling enabled"],
    ),
    ("unknown reservation affinity", "gke_node_pool", {**DWS_ARGS, "reservation_affinity": "SPECIFIC"}, ["SPECIFIC"]),
    (
        "a control plane range that is not a /28",
        "gke_cluster",
        {**CLUSTER_ARGS, "private_nodes": True, "master_ipv4_cidr": "172.16.0.0/24"},
        ["master_ipv4_cidr 172.16.0.0/24 must be a /28: GKE's rule", "legacy/network-isolation"],
    ),
    (
        "a node service account that is not a service account's email",
        "gke_node_pool",
        {**ONDEMAND_ARGS, "node_service_account": "nodes@example.com"},
        ["node_service_account 'nodes@example.com' is not a service account email"],
    ),
    (
        "the deprecated release channel UNSPECIFIED",
        "gke_cluster",
        {**CLUSTER_ARGS, "release_channel": "UNSPECIFIED"},
        ["release_channel UNSPECIFIED is refused: planb's policy, because"],
    ),
]


@pytest.mark.parametrize(("case", "module", "args", "expected"), CASES, ids=[c[0] for c in CASES])
def test_refused_before_any_api_call(
    modules: ModuleRunner,
    emulator: RunningEmulator,
    case: str,
    module: str,
    args: dict[str, Any],
    expected: list[str],
) -> None:
    failed = modules.fail(module, args)
    for fragment in expected:
        assert fragment in failed["msg"], failed["msg"]
    assert emulator.store.request_log() == [], f"{case}: the emulator was called"
    assert emulator.writes() == []


def test_auth_none_refused_against_google(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    failed = modules.fail("gke_cluster", {**CLUSTER_ARGS, "api_endpoint": "https://container.googleapis.com"})
    assert "auth_kind=none is only allowed against a loopback api_endpoint" in failed["msg"]
    assert emulator.store.request_log() == []


def test_emulator_enforces_gke_rules_itself(emulator: RunningEmulator) -> None:
    """Server side: the emulator answers 400 like GKE when a client skips validation."""
    base = f"{emulator.url}/v1/projects/p/locations/us-east5-b/clusters"
    body = {"cluster": {"name": "c", "initialClusterVersion": "1.34"}}
    request = urllib.request.Request(
        base, data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"}
    )
    urllib.request.urlopen(request).read()
    time.sleep(0.2)  # let the create operation finish
    bad = {"nodePool": {"name": "dws", "config": {"machineType": "ct6e-standard-4t", "flexStart": True}}}
    request = urllib.request.Request(
        f"{base}/c/nodePools",
        data=json.dumps(bad).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request)
    error = json.loads(refused.value.read())["error"]
    assert refused.value.code == 400 and error["status"] == "INVALID_ARGUMENT"
    assert "flex-start-vms" in error["message"]
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"{base}/nope")
    assert missing.value.code == 404
    assert json.loads(missing.value.read())["error"]["status"] == "NOT_FOUND"
    request = urllib.request.Request(
        base, data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"}
    )
    with pytest.raises(urllib.error.HTTPError) as exists:
        urllib.request.urlopen(request)
    assert exists.value.code == 409
