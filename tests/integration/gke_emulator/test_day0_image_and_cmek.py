"""The day-0 check's reads of constraints/compute.trustedImageProjects and constraints/gcp.restrictNonCmekServices
against the emulator's Org Policy API: each refusal names the policy and the fix, a value group
the check cannot expand is a note, and the check writes nothing."""

from __future__ import annotations

from typing import Any

from planb.local.gke_emulator.emulator import RunningEmulator, is_write
from tests.support.integration.gke.gke_api import call
from tests.support.integration.gke.modules import PROJECT, ModuleRunner

TUTORIAL: dict[str, Any] = {
    "machine_type": "ct6e-standard-4t",
    "needed": 16,
    "rungs": [{"name": "on-demand", "kind": "on-demand"}, {"name": "dws", "kind": "dws"}],
}


def _policy(emulator: RunningEmulator, constraint: str, rules: list[dict[str, Any]]) -> None:
    body = {"project": PROJECT, "constraint": constraint, "spec": {"rules": rules}}
    status, answer = call(emulator, "POST", "/planb/v1/org-policies", body)
    assert status == 200, answer


def test_trusted_image_projects_without_gkes_image_project_is_refused_naming_the_policy_and_the_fix(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    _policy(emulator, "compute.trustedImageProjects", [{"values": {"allowedValues": ["projects/our-images"]}}])
    (blocker,) = modules.fail("gcp_project_check", TUTORIAL)["blockers"]
    assert blocker["what"].startswith(
        f"constraints/compute.trustedImageProjects does not allow projects/gke-node-images on project {PROJECT}"
    ), blocker
    assert blocker["by"] == "google" and "add projects/gke-node-images to the policy's allowed values" in blocker["fix"]
    _policy(emulator, "compute.trustedImageProjects", [{"values": {"allowedValues": ["is:projects/gke-node-images"]}}])
    assert modules.run("gcp_project_check", TUTORIAL)["blockers"] == []
    _policy(emulator, "compute.trustedImageProjects", [{"values": {"allowedValues": ["under:organizations/1"]}}])
    notes = modules.run("gcp_project_check", TUTORIAL)["notes"]
    assert any("value groups" in n["what"] and "projects/gke-node-images" in n["fix"] for n in notes), notes
    assert emulator.writes() == [] and all(not is_write(r) for r in emulator.store.request_log())


def test_cmek_required_of_a_service_planb_uses_is_refused_naming_the_policy_the_services_and_the_fix(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    denied = ["container.googleapis.com", "storage.googleapis.com", "bigquery.googleapis.com"]
    _policy(emulator, "gcp.restrictNonCmekServices", [{"values": {"deniedValues": denied}}])
    (blocker,) = modules.fail("gcp_project_check", TUTORIAL)["blockers"]
    assert blocker["what"].startswith(
        "constraints/gcp.restrictNonCmekServices requires customer-managed encryption keys for "
        f"container.googleapis.com, storage.googleapis.com on project {PROJECT}"
    ), blocker
    assert "bigquery" not in blocker["what"] and "exception on project" in blocker["fix"], blocker
    # A policy that requires keys of other services only leaves planb's alone.
    _policy(emulator, "gcp.restrictNonCmekServices", [{"values": {"deniedValues": ["bigquery.googleapis.com"]}}])
    assert modules.run("gcp_project_check", TUTORIAL)["blockers"] == []
    assert emulator.writes() == []
