"""Zones and locations: a TPU slice lives in one zone that Google lists for its generation.

`-e planb_zone=us-east5` (a region, typed for the seed's ZONE) used to create a regional cluster whose TPU pools had
no node locations. Now the play refuses it before any API call, naming the zones that offer the profile, unless
`planb_tpu_zone` names the pools' zone; a zone Google's list does not name for the generation is refused too (planb's
policy based on Google's list, not a GKE refusal).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
from ansible.errors import AnsibleFilterError

from planb.local.gke_emulator.emulator import RunningEmulator
from planb.local.gke_emulator.store import list_clusters, list_node_pools
from tests.support.integration.gke.gke_api import call
from tests.support.integration.gke.modules import CLUSTER, ModuleRunner, ansible_playbook
from tests.support.integration.gke.refusals import assert_plain_refusal

POOL: dict[str, Any] = {
    "name": "tpu-pool",
    "cluster": CLUSTER,
    "machine_type": "ct6e-standard-4t",
    "tpu_topology": "4x4",
    "autoscaling": {"min_node_count": 0, "max_node_count": 4},
    "reservation_affinity": "NO_RESERVATION",
}


def _filter() -> Any:
    return importlib.import_module("ansible_collections.planb.gke.plugins.filter.locations").node_locations


def test_filter_places_tpu_pools_of_a_regional_cluster_in_one_listed_zone() -> None:
    node_locations = _filter()
    assert node_locations("tpu-v6e-4x4", "us-east5-b") == []
    assert node_locations("tpu-v6e-16", "us-east5", tpu_zone="us-east5-a") == ["us-east5-a"]
    with pytest.raises(AnsibleFilterError) as regional:
        node_locations("tpu-v6e-4x4", "us-east5")
    assert "us-east5 is a region" in str(regional.value)
    assert "Zones of us-east5 that offer TPU v6e: us-east5-a, us-east5-b" in str(regional.value)
    assert "planb_tpu_zone" in str(regional.value)
    with pytest.raises(AnsibleFilterError) as unlisted:
        node_locations("tpu7x-2x2x2", "us-east5-b")
    message = str(unlisted.value)
    assert "zone us-east5-b does not offer TPU tpu7x" in message
    assert "zones that do: us-central1-ai1a, us-central1-c" in message
    assert (
        "planb's policy, based on Google's list" in message
        and "https://cloud.google.com/tpu/docs/regions-zones" in message
    )
    # The list can be skipped (a zone Google added later), the one-zone rule cannot.
    assert node_locations("tpu7x-2x2x2", "us-east5-b", check=False) == []
    with pytest.raises(AnsibleFilterError, match="us-east5 is a region"):
        node_locations("tpu-v6e-4x4", "us-east5", check=False)
    with pytest.raises(AnsibleFilterError, match="differs from the zonal cluster's zone"):
        node_locations("tpu-v6e-4x4", "us-east5-b", tpu_zone="us-east5-a")
    # GPUs: no sourced zone list, so no refusal.
    assert node_locations("gpu-a3-h100-8", "us-east5") == []


def test_module_refuses_before_any_request(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    regional = modules.fail("gke_node_pool", {**POOL, "location": "us-east5"})
    assert "a TPU pool of a regional cluster needs node_locations with exactly one zone" in regional["msg"]
    unlisted = modules.fail("gke_node_pool", {**POOL, "location": "us-west1-b"})
    assert "zone us-west1-b does not offer TPU v6e" in unlisted["msg"] and "us-east5-b" in unlisted["msg"]
    two = modules.fail(
        "gke_node_pool", {**POOL, "location": "us-east5", "node_locations": ["us-east5-a", "us-east5-b"]}
    )
    assert "node_locations must name exactly one zone, not 2" in two["msg"]
    elsewhere = modules.fail("gke_node_pool", {**POOL, "location": "us-east5", "node_locations": ["us-west4-a"]})
    assert "must be a zone of the cluster's region us-east5" in elsewhere["msg"]
    assert emulator.store.request_log() == []


def test_regional_cluster_tpu_pool_gets_its_zone_and_keeps_it(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    modules.run("gke_cluster", {"name": CLUSTER, "version": "1.34", "location": "us-east5"})
    args = {**POOL, "location": "us-east5", "node_locations": ["us-east5-b"]}
    created = modules.run("gke_node_pool", args)
    assert created["changed"] and created["node_pool"]["locations"] == ["us-east5-b"]
    # The pool's instance group, i.e. its nodes, is in that zone.
    assert "/zones/us-east5-b/" in created["node_pool"]["instanceGroupUrls"][0]
    assert modules.run("gke_node_pool", args)["changed"] is False
    moved = modules.run("gke_node_pool", {**args, "node_locations": ["us-east5-a"]})
    assert moved["actions"] == ["update"] and moved["node_pool"]["locations"] == ["us-east5-a"]


def test_playbook_refuses_a_region_as_zone_before_any_api_call(emulator: RunningEmulator, tmp_path: Path) -> None:
    env = {"GKE_API_ENDPOINT": emulator.url, "PLANB_STATE_DIR": str(tmp_path / "state")}
    done = ansible_playbook("playbooks/cluster.yml", "-i", "inventories/local", "-e", "planb_zone=us-east5", env=env)
    out = done.stdout + done.stderr
    assert done.returncode != 0, out[-3000:]
    assert_plain_refusal(out, "us-east5 is a region", "us-east5-a, us-east5-b", "planb_tpu_zone")
    assert emulator.store.request_log() == []


def test_playbook_regional_cluster_with_tpu_zone_reconverges_after_gke_upgrades_it(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    env = {"GKE_API_ENDPOINT": emulator.url, "PLANB_STATE_DIR": str(tmp_path / "state")}
    args = (
        "playbooks/cluster.yml",
        "-i",
        "inventories/local",
        "-e",
        "planb_zone=us-east5",
        "-e",
        "planb_tpu_zone=us-east5-b",
    )
    done = ansible_playbook(*args, env=env)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    state = emulator.store.root.parent
    assert [c["location"] for c in list_clusters(state)] == ["us-east5"]
    pools = {p["name"]: p for p in list_node_pools(state)}
    accelerator = [p for name, p in pools.items() if name != "default-pool"]
    assert accelerator and all(p["locations"] == ["us-east5-b"] for p in accelerator)
    # Between the two runs GKE upgrades the cluster on its release channel, unasked (1.34 -> 1.35): GKE_VERSION is a
    # floor, so the next run leaves it there, changing nothing and sending no write.
    cluster = f"projects/planb-local/locations/us-east5/clusters/{list_clusters(state)[0]['name']}"
    assert call(emulator, "POST", "/planb/v1/upgrades", {"cluster": cluster, "version": "1.35"})[0] == 200
    writes = len(emulator.writes())
    again = ansible_playbook(*args, env=env)
    assert again.returncode == 0 and "changed=0" in again.stdout, again.stdout[-3000:]
    assert len(emulator.writes()) == writes
    assert list_clusters(state)[0]["currentMasterVersion"].startswith("1.35.")
    # The TPU pools' maintenance exclusion (planb's policy) kept GKE's upgrade off their nodes; default-pool moved.
    versions = {p["name"]: p["version"] for p in list_node_pools(state)}
    assert versions.pop("default-pool").startswith("1.35.") and all(v.startswith("1.34.") for v in versions.values())
