"""planb.gke.gcp_project_check, area by area, against the GKE emulator's project setup (gke_emulator.project_setup):
each blocker is named with its fix, an API that is off is named instead of a 403 trace, and the check writes nothing.
The whole fresh project in one report is tests/integration/playbooks/test_day0_check.py."""

from __future__ import annotations

from typing import Any

from planb.local.gke_emulator import discovery
from planb.local.gke_emulator.emulator import RunningEmulator, is_write
from planb.local.gke_emulator.project_setup import NODE_ROLE
from tests.support.integration.gke.fresh_project import QUOTA_PROJECT, make_fresh
from tests.support.integration.gke.gke_api import call
from tests.support.integration.gke.modules import PROJECT, ModuleRunner

TUTORIAL: dict[str, Any] = {
    "machine_type": "ct6e-standard-4t",
    "needed": 16,
    "rungs": [{"name": "on-demand", "kind": "on-demand"}, {"name": "dws", "kind": "dws"}],
}


def _post(emulator: RunningEmulator, switch: str, body: dict[str, Any]) -> None:
    status, answer = call(emulator, "POST", f"/planb/v1/{switch}", body)
    assert status == 200, answer


def _blockers(modules: ModuleRunner, **args: Any) -> list[dict[str, Any]]:
    failed = modules.fail("gcp_project_check", {**TUTORIAL, **args})
    assert failed["msg"].startswith(f"Day-0 check of project {PROJECT}: {len(failed['blockers'])} blocker(s)")
    blockers: list[dict[str, Any]] = failed["blockers"]
    return blockers


def test_a_project_set_up_for_planb_passes_and_nothing_is_written(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    done = modules.run("gcp_project_check", TUTORIAL)
    assert done["blockers"] == [] and "0 blocker(s)" in done["msg"], done
    assert emulator.writes() == [] and all(not is_write(r) for r in emulator.store.request_log())


def test_service_usage_off_is_named_as_the_api_to_turn_on_first(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    """Without a quota project every call bills the fresh project itself, where only Cloud Resource Manager is on."""
    make_fresh(emulator, PROJECT)
    blockers = _blockers(modules)
    first = blockers[0]
    assert first["area"] == "apis" and first["service"] == "serviceusage.googleapis.com", blockers
    assert "turn on Service Usage first" in first["fix"] and "apis/library/serviceusage.googleapis.com" in first["fix"]
    assert f"gcloud services enable serviceusage.googleapis.com --project {PROJECT}" in first["fix"]
    # The other APIs the check reads through are named from their own refusals, never as a trace.
    assert {b["service"] for b in blockers} >= {"cloudquotas.googleapis.com", "orgpolicy.googleapis.com"}
    assert all("answered 403" not in b["what"] for b in blockers), blockers
    assert emulator.writes() == []


def test_cloud_quotas_off_is_a_blocker_naming_it(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    _post(emulator, "services", {"project": PROJECT, "service": "cloudquotas.googleapis.com", "state": "DISABLED"})
    blockers = _blockers(modules)
    assert [b["service"] for b in blockers] == ["cloudquotas.googleapis.com"], blockers
    assert "`gcloud services enable cloudquotas.googleapis.com" in blockers[0]["fix"]


def test_the_rights_and_the_quota_project_s_serviceusage_use(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    _post(emulator, "permissions", {"project": PROJECT, "permission": "container.clusters.create", "granted": False})
    _post(emulator, "permissions", {"project": PROJECT, "permission": "orgpolicy.policy.get", "granted": False})
    _post(
        emulator, "permissions", {"project": QUOTA_PROJECT, "permission": "serviceusage.services.use", "granted": False}
    )
    blockers = _blockers(modules, quota_project=QUOTA_PROJECT)
    rights = [b["what"] for b in blockers if b["area"] == "rights"]
    assert len(rights) == 3, blockers
    assert any("container.clusters.create" in what for what in rights)
    assert any("orgpolicy.policy.get" in what and "organisation policies" in what for what in rights)
    assert any(f"serviceusage.services.use on quota project {QUOTA_PROJECT}" in what for what in rights)


def test_organisation_policies_the_bodies_would_break(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    for constraint, spec in (
        ("compute.requireShieldedVm", {"rules": [{"enforce": True}]}),
        ("compute.vmExternalIpAccess", {"rules": [{"denyAll": True}]}),
        ("gcp.resourceLocations", {"rules": [{"values": {"allowedValues": ["europe-west4"]}}]}),
    ):
        _post(emulator, "org-policies", {"project": PROJECT, "constraint": constraint, "spec": spec})
    # Pools sent without secure boot (planb_secure_boot: false) break constraints/compute.requireShieldedVm.
    blockers = _blockers(modules, secure_boot=False)
    assert [b["area"] for b in blockers] == ["org_policy"] * 3, blockers
    assert "planb_secure_boot: false" in blockers[0]["what"] and "planb_secure_boot: true" in blockers[0]["fix"]
    assert "compute.vmExternalIpAccess" in blockers[1]["what"] and "planb_private_nodes: true" in blockers[1]["fix"]
    assert "does not allow us-east5-b" in blockers[2]["what"]
    # With secure boot on, planb's default, the pools meet it: no blocker.
    blockers = _blockers(modules)
    assert [b["what"].split(" ")[0] for b in blockers] == [
        "constraints/compute.vmExternalIpAccess",
        "constraints/gcp.resourceLocations",
    ], blockers
    # Private nodes meet the external IP policy; a value group the check cannot expand is a note, not a blocker.
    _post(
        emulator,
        "org-policies",
        {
            "project": PROJECT,
            "constraint": "gcp.resourceLocations",
            "spec": {"rules": [{"values": {"allowedValues": ["in:us-locations"]}}]},
        },
    )
    # (Cloud NAT, which private nodes need, is test_day0_private_nodes.py's; a mirror stands in for it here.)
    blockers = _blockers(modules, private_nodes=True, cloud_nat=False, secure_boot=False)
    assert [b["what"].split(" ")[0] for b in blockers] == ["constraints/compute.requireShieldedVm"], blockers
    done = modules.run("gcp_project_check", {**TUTORIAL, "private_nodes": True, "cloud_nat": False})
    assert [n["area"] for n in done["notes"]] == ["org_policy"] and "in:..." in done["notes"][0]["what"]


def test_the_network_the_subnetwork_and_its_secondary_ranges(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    named = {"network": "shared-vpc", "subnetwork": "tpu-subnet", "secondary_ranges": ["pods", "services"]}
    missing = _blockers(modules, **named)
    assert [b["what"] for b in missing] == [
        f"the VPC network shared-vpc does not exist in project {PROJECT}; GKE refuses a cluster on it "
        "(https://cloud.google.com/vpc/docs/vpc#default-network)"
    ]
    ranges = [{"rangeName": "pods", "ipCidrRange": "10.4.0.0/14"}]
    subnet: dict[str, Any] = {
        "name": "tpu-subnet",
        "region": "us-east5",
        "ipCidrRange": "10.0.0.0/20",
        "secondaryIpRanges": ranges,
    }
    _post(emulator, "networks", {"project": PROJECT, "name": "shared-vpc", "subnetworks": [subnet]})
    short = _blockers(modules, **named)
    assert len(short) == 1 and "no secondary range named services (it has pods)" in short[0]["what"], short
    assert "--add-secondary-ranges services=CIDR" in short[0]["fix"]
    ranges.append({"rangeName": "services", "ipCidrRange": "10.8.0.0/20"})
    _post(emulator, "networks", {"project": PROJECT, "name": "shared-vpc", "subnetworks": [subnet]})
    assert modules.run("gcp_project_check", {**TUTORIAL, **named})["blockers"] == []
    # Without a name, the project's default network, which an organisation may have kept from being made.
    _post(emulator, "networks", {"project": PROJECT, "name": "default", "present": False})
    (gone,) = _blockers(modules)
    assert "network default does not exist" in gone["what"] and "--subnet-mode=auto" in gone["fix"]


def test_the_node_service_account_s_role(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    account = f"trainer-nodes@{PROJECT}.iam.gserviceaccount.com"
    (blocker,) = _blockers(modules, node_service_account=account)
    assert blocker["by"] == "planb" and "planb's policy: this is a blocker, because" in blocker["what"]
    assert f"--member=serviceAccount:{account} --role={NODE_ROLE}" in blocker["fix"]
    member = f"serviceAccount:{account}"
    _post(emulator, "iam-bindings", {"project": PROJECT, "role": NODE_ROLE, "member": member, "granted": True})
    assert modules.run("gcp_project_check", {**TUTORIAL, "node_service_account": account})["blockers"] == []


def test_a_dws_rung_outside_gke_s_flex_start_zones(modules: ModuleRunner) -> None:
    """us-central1-b offers TPU v6e (Google's TPU zones) but not its flex-start (GKE's provisioning-model page)."""
    (blocker,) = _blockers(modules, location="us-central1-b")
    assert blocker["area"] == "flex_start" and blocker["what"].startswith("DWS rung dws: zone us-central1-b")
    assert "Google's requirement, not planb's policy" in blocker["what"]
    on_demand_only = {"rungs": [{"name": "on-demand", "kind": "on-demand"}], "location": "us-central1-b"}
    assert modules.run("gcp_project_check", {**TUTORIAL, **on_demand_only})["blockers"] == []


def test_the_reads_are_the_discovery_documents_methods() -> None:
    """The emulator serves each read as the method its discovery document names; the POSTs are read-only."""
    reads = {
        (
            "GET",
            f"/orgpolicy/v2/projects/{PROJECT}/policies/compute.requireShieldedVm:getEffectivePolicy",
        ): "orgpolicy.projects.policies.getEffectivePolicy",
        (
            "POST",
            f"/cloudresourcemanager/v3/projects/{PROJECT}:getIamPolicy",
        ): "cloudresourcemanager.projects.getIamPolicy",
        ("GET", f"/cloudresourcemanager/v3/projects/{PROJECT}"): "cloudresourcemanager.projects.get",
        ("GET", f"/compute/v1/projects/{PROJECT}/global/networks/default"): "compute.networks.get",
        ("GET", f"/compute/v1/projects/{PROJECT}/regions/us-east5/subnetworks/default"): "compute.subnetworks.get",
    }
    for (method, path), method_id in reads.items():
        found = discovery.find_method(method, path)
        assert found is not None and found.id == method_id, (path, found)
        assert not is_write({"method": method, "path": path})


def test_the_cpu_quotas_the_check_reads_are_the_ones_the_emulator_serves() -> None:
    """The collection's CPU quota names (it cannot import planb) and the emulator's are one list."""
    from ansible_collections.planb.gke.plugins.module_utils.project_check import CPU_ALL_REGIONS, CPU_FAMILY_QUOTA

    from planb.local.gke_emulator.cloud_quotas import CPU_QUOTAS

    assert {*CPU_FAMILY_QUOTA.values(), CPU_ALL_REGIONS} <= set(CPU_QUOTAS)
    assert CPU_QUOTAS[CPU_ALL_REGIONS] is False and all(CPU_QUOTAS[name] for name in CPU_FAMILY_QUOTA.values())
