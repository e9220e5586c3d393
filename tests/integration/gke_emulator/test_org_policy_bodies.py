"""Org-policy-safe bodies: Shielded GKE Nodes with secure boot on every pool, and a Shared VPC's
secondary ranges by name, sent by gke_cluster and gke_node_pool and kept by the emulator as container v1 describes them.

* Secure boot: GKE leaves it off unless a pool turns it on
  (https://cloud.google.com/kubernetes-engine/docs/how-to/shielded-gke-nodes), and Compute Engine refuses a VM without
  it where ``constraints/compute.requireShieldedVm`` is enforced; container v1 UpdateNodePoolRequest has no
  shieldedInstanceConfig, so a change is refused by name with the fix (recreate). ClusterUpdate.desiredShieldedNodes
  changes the cluster's Shielded GKE Nodes in place.
* Secondary ranges: IPAllocationPolicy.clusterSecondaryRangeName and servicesSecondaryRangeName, with useIpAliases;
  ClusterUpdate has no field for them, so they are set at creation only.
* VPC peering: under ``constraints/compute.restrictVpcPeering`` GKE accepts the create call of the peering form of
  private cluster (a control plane range) and fails its operation (gke_emulator.vpc_peering cites GKE's answer).
"""

from __future__ import annotations

from typing import Any

import pytest

from planb.local.gke_emulator import cluster_rules, rules, vpc_peering
from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.gke_api import call
from tests.support.integration.gke.modules import CLUSTER, CLUSTER_ARGS, LOCATION, ONDEMAND_ARGS, PROJECT, ModuleRunner

CLUSTER_PATH = f"/v1/projects/{PROJECT}/locations/{LOCATION}/clusters/{CLUSTER}"
SHIELDED = {"enableSecureBoot": True, "enableIntegrityMonitoring": True}
RANGES: dict[str, Any] = {
    "subnetwork": "tpu-subnet",
    "cluster_secondary_range_name": "pods",
    "services_secondary_range_name": "services",
}


def _post(emulator: RunningEmulator, what: str, body: dict[str, Any]) -> None:
    status, answer = call(emulator, "POST", f"/planb/v1/{what}", body)
    assert status == 200, answer


def test_the_cluster_and_its_pools_boot_with_secure_boot_by_default(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    modules.run("gke_cluster", CLUSTER_ARGS)
    cluster = call(emulator, "GET", CLUSTER_PATH)[1]
    assert cluster["shieldedNodes"] == {"enabled": True}, cluster
    assert cluster["nodePools"][0]["config"]["shieldedInstanceConfig"] == SHIELDED, cluster["nodePools"]
    modules.run("gke_node_pool", ONDEMAND_ARGS)
    pool = call(emulator, "GET", f"{CLUSTER_PATH}/nodePools/{ONDEMAND_ARGS['name']}")[1]
    assert pool["config"]["shieldedInstanceConfig"] == SHIELDED, pool["config"]
    # The second run changes nothing: GKE's answer holds what was sent.
    assert modules.run("gke_cluster", CLUSTER_ARGS)["changed"] is False
    assert modules.run("gke_node_pool", ONDEMAND_ARGS)["changed"] is False


def test_an_enforced_require_shielded_vm_refuses_a_pool_without_secure_boot(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    modules.run("gke_cluster", CLUSTER_ARGS)
    _post(
        emulator,
        "org-policies",
        {"project": PROJECT, "constraint": "compute.requireShieldedVm", "spec": {"rules": [{"enforce": True}]}},
    )
    message = modules.fail("gke_node_pool", {**ONDEMAND_ARGS, "secure_boot": False})["msg"]
    assert "Constraint constraints/compute.requireShieldedVm violated for project" in message, message
    assert "Secure Boot is not enabled in the 'shielded_instance_config' field" in message, message
    assert modules.run("gke_node_pool", ONDEMAND_ARGS)["changed"] is True


def test_secure_boot_is_set_at_creation_only(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    modules.run("gke_cluster", CLUSTER_ARGS)
    modules.run("gke_node_pool", ONDEMAND_ARGS)
    writes = len(emulator.writes())
    message = modules.fail("gke_node_pool", {**ONDEMAND_ARGS, "secure_boot": False})["msg"]
    assert message.startswith("secure_boot of node pool on-demand-pool cannot be changed in place"), message
    assert "config.shieldedInstanceConfig.enableSecureBoot differs on GKE" in message, message
    assert "delete the node pool and re-run to recreate it" in message, message
    message = modules.fail("gke_cluster", {**CLUSTER_ARGS, "secure_boot": False})["msg"]
    assert message.startswith(f"secure_boot of cluster {CLUSTER} cannot be changed in place"), message
    assert len(emulator.writes()) == writes


def test_shielded_nodes_change_in_place(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    modules.run("gke_cluster", CLUSTER_ARGS)
    off = {**CLUSTER_ARGS, "shielded_nodes": False}
    planned = modules.run("gke_cluster", off, check_mode=True, diff=True)
    assert planned["changed"] is True and planned["diff"]["after"]["shieldedNodes"] == {"enabled": False}, planned
    done = modules.run("gke_cluster", off)
    assert done["changed"] is True and "desiredShieldedNodes" in done["actions"], done
    assert call(emulator, "GET", CLUSTER_PATH)[1]["shieldedNodes"] == {"enabled": False}
    assert modules.run("gke_cluster", off)["changed"] is False


def test_the_secondary_ranges_of_a_shared_vpc_subnet_by_name(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    modules.run("gke_cluster", {**CLUSTER_ARGS, **RANGES})
    allocation = call(emulator, "GET", CLUSTER_PATH)[1]["ipAllocationPolicy"]
    assert allocation == {
        "useIpAliases": True,
        "clusterSecondaryRangeName": "pods",
        "servicesSecondaryRangeName": "services",
    }, allocation
    assert modules.run("gke_cluster", {**CLUSTER_ARGS, **RANGES})["changed"] is False
    writes = len(emulator.writes())
    message = modules.fail("gke_cluster", {**CLUSTER_ARGS, **RANGES, "services_secondary_range_name": "svc-2"})["msg"]
    assert message.startswith(f"services_secondary_range_name of cluster {CLUSTER} cannot be changed in place"), message
    assert "ipAllocationPolicy.servicesSecondaryRangeName differs on GKE" in message, message
    assert len(emulator.writes()) == writes


def test_gke_refuses_a_range_the_subnetwork_lacks(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    """IPAllocationPolicy: "This must be an existing secondary range associated with the cluster subnetwork"; the
    emulator knows a subnetwork's ranges when its day-0 setup holds the network (gke_emulator.project_setup)."""
    subnet = {"name": "tpu-subnet", "region": "us-east5", "ipCidrRange": "10.0.0.0/20"}
    subnet["secondaryIpRanges"] = [{"rangeName": "pods", "ipCidrRange": "10.4.0.0/14"}]
    _post(emulator, "networks", {"project": PROJECT, "name": "shared-vpc", "subnetworks": [subnet]})
    args = {**CLUSTER_ARGS, **RANGES, "network": "shared-vpc"}
    message = modules.fail("gke_cluster", args)["msg"]
    assert "Secondary range 'services' must be an existing secondary range of subnetwork tpu-subnet" in message
    assert "(it has pods)" in message and "#IPAllocationPolicy" in message, message
    subnet["secondaryIpRanges"].append({"rangeName": "services", "ipCidrRange": "10.8.0.0/20"})
    _post(emulator, "networks", {"project": PROJECT, "name": "shared-vpc", "subnetworks": [subnet]})
    assert modules.run("gke_cluster", args)["changed"] is True


def test_gke_s_rules_on_ranges_and_secure_boot() -> None:
    """The emulator's rules alone: range names without useIpAliases, and a pool under an enforced policy."""
    with pytest.raises(rules.RuleViolation, match="only applicable with useIpAliases true"):
        cluster_rules.check_secondary_ranges({"ipAllocationPolicy": {"clusterSecondaryRangeName": "pods"}}, None)
    cluster_rules.check_secondary_ranges(
        {"ipAllocationPolicy": {"useIpAliases": True, "clusterSecondaryRangeName": "p"}}, None
    )
    enforced = {"*/compute.requireShieldedVm": {"rules": [{"enforce": True}]}}
    with pytest.raises(rules.RuleViolation, match="org-policy-constraints"):
        rules.check_shielded_vm({"name": "p", "config": {}}, PROJECT, enforced)
    rules.check_shielded_vm({"name": "p", "config": {"shieldedInstanceConfig": SHIELDED}}, PROJECT, enforced)
    rules.check_shielded_vm({"name": "p", "config": {}}, PROJECT, {})


PEERING_POLICY = {
    "project": PROJECT,
    "constraint": "compute.restrictVpcPeering",
    "spec": {"rules": [{"values": {"allowedValues": ["under:organizations/123456789012"]}}]},
}


def test_a_policy_against_vpc_peering_fails_the_peering_form_after_gke_accepted_the_create(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    """constraints/compute.restrictVpcPeering allowing only the organisation's own networks: GKE accepts the create
    call of the VPC Network Peering form (a control plane range) and its operation then fails with GKE's sentence
    (gke_emulator.vpc_peering); the Private Service Connect form, without the range, needs no peering and is made."""
    _post(emulator, "org-policies", PEERING_POLICY)
    peering = {**CLUSTER_ARGS, "private_nodes": True, "master_ipv4_cidr": "172.16.0.32/28"}
    message = modules.fail("gke_cluster", peering)["msg"]
    assert "Constraint constraints/compute.restrictVpcPeering violated for project" in message, message
    assert "Peering the network projects/gke-prod-us-east5-" in message and "-net is not allowed" in message, message
    creates = [w for w in emulator.writes() if w["method"] == "POST" and w["path"].endswith("/clusters")]
    assert len(creates) == 1  # the call was sent and accepted: the refusal is its operation's
    assert call(emulator, "GET", CLUSTER_PATH)[1]["status"] == "ERROR"
    psc = {**CLUSTER_ARGS, "name": "psc-cluster", "private_nodes": True}
    assert modules.run("gke_cluster", psc)["changed"] is True


def test_gke_s_rule_on_vpc_peering_reads_the_policy_s_values() -> None:
    """The emulator's reading alone: allowAll and a range-less cluster pass; denyAll, a list that does not name GKE's
    peer network or its project, and a denied list that names it refuse."""
    cluster = {"name": CLUSTER, "privateClusterConfig": {"masterIpv4CidrBlock": "172.16.0.32/28"}}
    peer = vpc_peering.peer_network(PROJECT, LOCATION, CLUSTER)
    peer_project = "/".join(peer.split("/")[:2])

    def refused(rule: dict[str, Any], body: dict[str, Any] = cluster) -> bool:
        policies = {"*/compute.restrictVpcPeering": {"rules": [rule]}}
        return vpc_peering.peering_refusal(body, PROJECT, "123", LOCATION, policies) is not None

    assert refused({"denyAll": True}) and not refused({"allowAll": True})
    assert refused({"denyAll": True, "condition": {"expression": "resource.matchTag('env', 'dev')"}}) is False
    assert refused({"values": {"allowedValues": [f"projects/{PROJECT}/global/networks/default"]}})
    assert not refused({"values": {"allowedValues": [f"under:{peer_project}"]}})
    assert refused({"values": {"deniedValues": [peer]}}) and not refused({"values": {"deniedValues": ["x"]}})
    assert not refused({"denyAll": True}, {"name": CLUSTER, "privateClusterConfig": {}})
    assert vpc_peering.peering_refusal(cluster, PROJECT, "123", LOCATION, {}) is None
