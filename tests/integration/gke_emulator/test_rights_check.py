"""Cloud Resource Manager v3 projects.testIamPermissions on the emulator, and planb.gke.gcp_iam_check against it.

The method is held to ``cloudresourcemanager.v3.json`` as google-api-python-client ships it (request
TestIamPermissionsRequest, response TestIamPermissionsResponse); it answers the subset of the permissions the caller
holds, every one unless ``/planb/v1/permissions`` withholds it
(https://cloud.google.com/resource-manager/reference/rest/v3/projects/testIamPermissions).
"""

from __future__ import annotations

from typing import Any

import pytest

from planb.cli import main as planb_main
from planb.local.gke_emulator import discovery
from planb.local.gke_emulator.background import BackgroundEmulator
from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.gke_api import call
from tests.support.integration.gke.modules import PROJECT, ModuleRunner

TEST = f"/cloudresourcemanager/v3/projects/{PROJECT}:testIamPermissions"
ASKED = ["container.clusters.create", "serviceusage.services.enable", "cloudquotas.quotas.get"]


class ProjectRunner(ModuleRunner):
    """gcp_iam_check takes no location."""

    def base_args(self) -> dict[str, Any]:
        return {k: v for k, v in super().base_args().items() if k != "location"}


@pytest.fixture
def project_modules(emulator: RunningEmulator) -> ProjectRunner:
    return ProjectRunner(emulator)


def _withhold(emulator: RunningEmulator, permission: str, project: str = "*", granted: bool = False) -> None:
    body = {"project": project, "permission": permission, "granted": granted}
    assert call(emulator, "POST", "/planb/v1/permissions", body)[0] == 200


def test_the_method_is_the_discovery_documents_and_a_body_it_refuses_is_googles_400(
    emulator: RunningEmulator,
) -> None:
    method = discovery.find_method("POST", TEST)
    assert method is not None and method.id == "cloudresourcemanager.projects.testIamPermissions"
    assert (method.request, method.response) == ("TestIamPermissionsRequest", "TestIamPermissionsResponse")
    assert discovery.version("cloudresourcemanager") == "v3"
    status, answer = call(emulator, "POST", TEST, {"permissions": ASKED, "resource": "projects/x"})
    assert status == 400 and answer["error"]["status"] == "INVALID_ARGUMENT", answer
    assert answer["error"]["message"] == 'Invalid JSON payload received. Unknown name "resource": Cannot find field.'
    status, answer = call(emulator, "POST", TEST, {"permissions": "container.clusters.create"})
    assert status == 400 and "permissions" in answer["error"]["message"], answer


def test_the_answer_is_the_subset_held_and_a_withheld_permission_is_left_out(emulator: RunningEmulator) -> None:
    assert call(emulator, "POST", TEST, {"permissions": [*ASKED, ASKED[0]]}) == (200, {"permissions": ASKED})
    _withhold(emulator, "container.clusters.create")
    assert call(emulator, "POST", TEST, {"permissions": ASKED}) == (200, {"permissions": ASKED[1:]})
    # Per project: granted on this project again, still withheld on the others.
    _withhold(emulator, "container.clusters.create", project=PROJECT, granted=True)
    assert call(emulator, "POST", TEST, {"permissions": ASKED})[1] == {"permissions": ASKED}
    other = TEST.replace(PROJECT, "another-project")
    assert call(emulator, "POST", other, {"permissions": ASKED[:1]}) == (200, {})
    # Asked nothing it holds: proto3's JSON leaves the empty list out.
    assert call(emulator, "POST", other, {}) == (200, {})
    assert emulator.writes() == [] and [r["path"] for r in emulator.store.request_log()] == [TEST] * 3 + [other] * 2


def test_wildcards_and_permissions_not_tested_on_a_project_are_invalid(emulator: RunningEmulator) -> None:
    for permission in ("storage.*", "resourcemanager.projects.create", "clusters"):
        status, answer = call(emulator, "POST", TEST, {"permissions": ["container.clusters.get", permission]})
        assert status == 400 and answer["error"]["status"] == "INVALID_ARGUMENT", answer
        assert repr(permission) in answer["error"]["message"]
    bad = {"permission": "container.*", "granted": False}
    assert call(emulator, "POST", "/planb/v1/permissions", bad)[0] == 400


def test_a_disabled_resource_manager_api_answers_403(emulator: RunningEmulator) -> None:
    body = {"service": "cloudresourcemanager.googleapis.com", "state": "DISABLED"}
    assert call(emulator, "POST", "/planb/v1/services", body)[0] == 200
    status, answer = call(emulator, "POST", TEST, {"permissions": ASKED})
    assert status == 403 and "Cloud Resource Manager API has not been used" in answer["error"]["message"]


def test_gcp_iam_check_names_each_missing_permission_and_its_role(
    project_modules: ProjectRunner, emulator: RunningEmulator
) -> None:
    modules = project_modules
    needs = {"needs": ["cluster", "apis", "enable_apis", "quota"]}
    held = modules.run("gcp_iam_check", needs, check_mode=True)
    assert held["changed"] is False and held["missing"] == [] and len(held["checked"]) == 8, held
    _withhold(emulator, "serviceusage.services.enable")
    _withhold(emulator, "container.clusters.update")
    msg = modules.fail("gcp_iam_check", needs)["msg"]
    assert f"Missing rights on project {PROJECT}: the caller lacks 2 of the 8 permissions" in msg, msg
    assert "serviceusage.services.enable (role roles/serviceusage.serviceUsageAdmin) to enable" in msg
    assert "container.clusters.update (role roles/container.admin or roles/container.clusterAdmin)" in msg
    assert "grant the caller roles/container.admin, roles/serviceusage.serviceUsageAdmin" in msg
    assert "planb_iam_check=false" in msg
    # Only what the run does is asked: without enabling APIs, that right is not needed.
    fewer = modules.fail("gcp_iam_check", {"needs": ["cluster", "apis"]})["msg"]
    assert "lacks 1 of the 6 permissions" in fewer and "serviceusage.services.enable" not in fewer, fewer
    assert emulator.writes() == []


def test_act_as_missing_on_the_project_warns_instead_of_failing(
    project_modules: ProjectRunner, emulator: RunningEmulator
) -> None:
    modules = project_modules
    _withhold(emulator, "iam.serviceAccounts.actAs")
    done = modules.run("gcp_iam_check", {"needs": ["cluster"]})
    assert [m["permission"] for m in done["missing"]] == ["iam.serviceAccounts.actAs"]
    assert "iam.serviceAccounts.actAs: see the warning" in done["msg"]


def test_cli_withholds_and_grants_a_permission(
    emulator: RunningEmulator, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(BackgroundEmulator, "running", lambda self: (0, emulator.url))
    assert (
        planb_main(["local", "gke-emulator", "withhold-permission", "compute.reservations.get", "--project", PROJECT])
        == 0
    )
    assert "compute.reservations.get is withheld" in capsys.readouterr().out
    assert not emulator.engine.project_apis.holds(PROJECT, "compute.reservations.get")
    assert emulator.engine.project_apis.holds("another-project", "compute.reservations.get")
    assert planb_main(["local", "gke-emulator", "withhold-permission", "compute.reservations.get", "--project", PROJECT,
                       "--grant"]) == 0  # fmt: skip
    assert emulator.engine.project_apis.holds(PROJECT, "compute.reservations.get")
    assert planb_main(["local", "gke-emulator", "withhold-permission", "compute.*"]) != 0
    assert "the GKE emulator refused the switch" in capsys.readouterr().err


QUOTA_PROJECT = "billing-project"


def test_a_quota_project_is_checked_for_the_right_to_bill_it(
    project_modules: ProjectRunner, emulator: RunningEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every call names the quota project (x-goog-user-project), which Google refuses unless the
    # caller holds serviceusage.services.use there, so the rights check asks for it on that project.
    monkeypatch.delenv("GOOGLE_CLOUD_QUOTA_PROJECT", raising=False)
    modules = project_modules
    plain = modules.run("gcp_iam_check", {"needs": ["cluster"]})
    assert not any("serviceusage.services.use" in c for c in plain["checked"]), plain
    done = modules.run("gcp_iam_check", {"needs": ["cluster"], "quota_project": QUOTA_PROJECT})
    assert done["checked"][-1] == f"serviceusage.services.use on project {QUOTA_PROJECT}", done
    asked = [r["path"] for r in emulator.store.request_log()]
    assert asked == [TEST, TEST, TEST.replace(PROJECT, QUOTA_PROJECT)], asked
    assert [r.get("userProject") for r in emulator.store.request_log()] == [None, QUOTA_PROJECT, QUOTA_PROJECT]
    _withhold(emulator, "serviceusage.services.use", project=QUOTA_PROJECT)
    msg = modules.fail("gcp_iam_check", {"needs": ["cluster"], "quota_project": QUOTA_PROJECT})["msg"]
    assert f"Missing right on quota project {QUOTA_PROJECT}" in msg, msg
    assert "serviceusage.services.use" in msg and "roles/serviceusage.serviceUsageConsumer" in msg
    assert "https://cloud.google.com/docs/quotas/set-quota-project" in msg
    assert emulator.writes() == []


def test_only_a_service_disabled_403_is_called_an_api_to_enable(
    project_modules: ProjectRunner, emulator: RunningEmulator
) -> None:
    modules = project_modules
    # A 403 with another reason (here one the emulator injects, with no ErrorInfo) is Google's words, no more.
    assert call(emulator, "POST", "/planb/v1/http-faults", {"status": 403, "method": "POST"})[0] == 200
    msg = modules.fail("gcp_iam_check", {"needs": ["cluster"]})["msg"]
    assert "answered 403" in msg and "Google refused the rights check itself" in msg, msg
    assert "gcloud services enable" not in msg and "API enabled" not in msg
    # SERVICE_DISABLED (the ErrorInfo reason): the API to enable, on the project the answer says is billed.
    body = {"service": "cloudresourcemanager.googleapis.com", "state": "DISABLED"}
    assert call(emulator, "POST", "/planb/v1/services", body)[0] == 200
    status, answer = call(emulator, "POST", TEST, {"permissions": ASKED})
    assert status == 403 and answer["error"]["details"][0]["reason"] == "SERVICE_DISABLED", answer
    msg = modules.fail("gcp_iam_check", {"needs": ["cluster"]})["msg"]
    assert f"gcloud services enable cloudresourcemanager.googleapis.com --project {PROJECT}" in msg, msg
