"""The day-0 check (planb.gke.gcp_project_check) with private nodes: Cloud NAT required and read
with Compute Engine's routers.list (compute.v1.json, served by gke_emulator.project_setup), and the firewall rule
Kueue's webhook needs with a private control plane named in the report.

Cloud NAT is planb's policy (GKE creates a cluster without it; its nodes cannot pull images or packages from the
internet: https://cloud.google.com/nat/docs/gke-example). The webhook's rule is a note: GKE's firewall lets a
private control plane reach the nodes on 443 and 10250 only
(https://cloud.google.com/kubernetes-engine/docs/how-to/legacy/network-isolation#add_firewall_rules)."""

from __future__ import annotations

from typing import Any

from planb.local.gke_emulator import discovery
from planb.local.gke_emulator.emulator import RunningEmulator, is_write
from tests.support.integration.gke.gke_api import call
from tests.support.integration.gke.modules import PROJECT, ModuleRunner

TUTORIAL: dict[str, Any] = {
    "machine_type": "ct6e-standard-4t",
    "needed": 16,
    "rungs": [{"name": "on-demand", "kind": "on-demand"}, {"name": "dws", "kind": "dws"}],
    "private_nodes": True,
}
NAT = {
    "name": "nat",
    "sourceSubnetworkIpRangesToNat": "ALL_SUBNETWORKS_ALL_IP_RANGES",
    "natIpAllocateOption": "AUTO_ONLY",
}


def _router(emulator: RunningEmulator, network: str, nats: list[dict[str, Any]], region: str = "us-east5") -> None:
    body = {"project": PROJECT, "region": region, "name": "nat-router", "network": network, "nats": nats}
    status, answer = call(emulator, "POST", "/planb/v1/routers", body)
    assert status == 200, answer


def test_private_nodes_without_cloud_nat_are_a_blocker_with_the_gcloud_fix(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    failed = modules.fail("gcp_project_check", TUTORIAL)
    (blocker,) = failed["blockers"]
    assert blocker["area"] == "network" and blocker["by"] == "planb", blocker
    assert blocker["what"].startswith(f"the network default of project {PROJECT} has no Cloud NAT in region us-east5")
    assert "planb's policy: this is a blocker, because" in blocker["what"]
    assert "`gcloud compute routers create planb-nat-router --network default --region us-east5" in blocker["fix"]
    assert "gcloud compute routers nats create planb-nat --router planb-nat-router" in blocker["fix"]
    assert "planb_cloud_nat: false" in blocker["fix"]
    # A router without a NAT gateway, or one in another region, is no NAT for the nodes.
    _router(emulator, "default", [])
    assert len(modules.fail("gcp_project_check", TUTORIAL)["blockers"]) == 1
    _router(emulator, "default", [NAT], region="europe-west4")
    assert len(modules.fail("gcp_project_check", TUTORIAL)["blockers"]) == 1
    _router(emulator, "default", [NAT])
    assert modules.run("gcp_project_check", TUTORIAL)["blockers"] == []
    assert emulator.writes() == [] and all(not is_write(r) for r in emulator.store.request_log())


def test_the_nat_is_read_on_the_named_network_and_a_mirror_skips_it(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    network = {"project": PROJECT, "name": "shared-vpc", "subnetworks": []}
    assert call(emulator, "POST", "/planb/v1/networks", network)[0] == 200
    _router(emulator, "default", [NAT])
    named = {**TUTORIAL, "network": "shared-vpc"}
    (blocker,) = modules.fail("gcp_project_check", named)["blockers"]
    assert "the network shared-vpc of project" in blocker["what"], blocker
    assert modules.run("gcp_project_check", {**named, "cloud_nat": False})["blockers"] == []
    assert modules.run("gcp_project_check", {**named, "private_nodes": False})["blockers"] == []


def test_a_private_control_plane_range_names_kueue_s_webhook_rule(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    _router(emulator, "default", [NAT])
    done = modules.run("gcp_project_check", {**TUTORIAL, "master_ipv4_cidr": "172.16.0.32/28"})
    assert done["blockers"] == []
    (note,) = [n for n in done["notes"] if "9443" in n["what"]]
    assert note["area"] == "network" and "Kueue's webhook listens on 9443" in note["what"], note
    assert "--allow tcp:9443 --source-ranges 172.16.0.32/28 --target-tags NODE_TAG" in note["fix"], note
    assert "network-isolation#add_firewall_rules" in note["what"]


def test_routers_list_is_the_discovery_document_s_method() -> None:
    found = discovery.find_method("GET", f"/compute/v1/projects/{PROJECT}/regions/us-east5/routers")
    assert found is not None and found.id == "compute.routers.list", found


def _peering_policy(emulator: RunningEmulator, rule: dict[str, Any]) -> None:
    body = {"project": PROJECT, "constraint": "compute.restrictVpcPeering", "spec": {"rules": [rule]}}
    assert call(emulator, "POST", "/planb/v1/org-policies", body)[0] == 200


def test_a_policy_against_vpc_peering_blocks_the_control_plane_range_and_names_the_psc_form(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    """constraints/compute.restrictVpcPeering, read with the effective policy when the inventory gives the control
    plane a range (the VPC Network Peering form, which GKE refuses under it only after accepting the create call):
    a blocker naming the policy and the Private Service Connect form (no range); without the range it is not read."""
    _router(emulator, "default", [NAT])
    peering = {**TUTORIAL, "master_ipv4_cidr": "172.16.0.32/28"}
    _peering_policy(emulator, {"values": {"allowedValues": ["under:organizations/123456789012"]}})
    (listed,) = modules.fail("gcp_project_check", peering)["blockers"]
    assert listed["area"] == "org_policy" and listed["by"] == "planb", listed
    assert listed["what"].startswith(
        f"constraints/compute.restrictVpcPeering restricts VPC peering on project {PROJECT}"
    )
    assert "planb_master_ipv4_cidr (172.16.0.32/28, MASTER_IPV4_CIDR)" in listed["what"], listed
    assert "legacy/network-isolation" in listed["what"] and "only after it accepted the create call" in listed["what"]
    assert listed["fix"].startswith("use the Private Service Connect form: leave MASTER_IPV4_CIDR unset"), listed
    _peering_policy(emulator, {"denyAll": True})
    (denied,) = modules.fail("gcp_project_check", peering)["blockers"]
    assert denied["by"] == "google" and "it refuses every peering" in denied["what"], denied
    _peering_policy(emulator, {"allowAll": True})
    assert modules.run("gcp_project_check", peering)["blockers"] == []
    _peering_policy(emulator, {"denyAll": True})
    assert modules.run("gcp_project_check", TUTORIAL)["blockers"] == []  # the PSC form: nothing to peer
    reads = [r["path"] for r in emulator.store.request_log() if "restrictVpcPeering" in r["path"]]
    assert len(reads) == 3, reads  # the three runs with a range, none without
    assert emulator.writes() == []
