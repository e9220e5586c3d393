"""A project on day 0 in the GKE emulator, and the fixes its day-0 check names (gke_emulator.project_setup)."""

from __future__ import annotations

from planb.local.gke_emulator.emulator import RunningEmulator
from planb.local.gke_emulator.project_setup import NODE_ROLE, project_number
from tests.support.integration.gke.gke_api import call

#: A second project whose APIs are on: the quota project the calls bill (x-goog-user-project).
QUOTA_PROJECT = "planb-ops"
#: The APIs the day-0 check reads or the run needs (the module's apis and CHECK_APIS, gke_cluster's image streaming).
APIS = (
    "container.googleapis.com",
    "tpu.googleapis.com",
    "containerfilesystem.googleapis.com",
    "serviceusage.googleapis.com",
    "compute.googleapis.com",
    "cloudquotas.googleapis.com",
    "orgpolicy.googleapis.com",
)


def _post(emulator: RunningEmulator, switch: str, body: dict[str, object]) -> None:
    status, answer = call(emulator, "POST", f"/planb/v1/{switch}", body)
    assert status == 200, answer


def make_fresh(emulator: RunningEmulator, project: str) -> None:
    """Only Cloud Resource Manager on, every quota 0, compute.requireShieldedVm enforced, no role for the nodes."""
    _post(emulator, "fresh-project", {"project": project})


def apply_fixes(emulator: RunningEmulator, project: str, region: str, machine_type: str, chips: int) -> None:
    """What the report's fixes do: the APIs on, the quotas granted, the node role. compute.requireShieldedVm stays
    enforced: planb's pools boot with secure boot (planb_secure_boot), so the report names no exception for it."""
    for service in APIS:
        _post(emulator, "services", {"project": project, "service": service, "state": "ENABLED"})
    for quota_type in ("on-demand", "preemptible"):
        _post(
            emulator,
            "quotas",
            {
                "project": project,
                "region": region,
                "machineType": machine_type,
                "value": chips,
                "quotaType": quota_type,
            },
        )
    _post(emulator, "cpu-quotas", {"project": project, "displayName": "N2 CPUs", "region": region, "value": 24})
    _post(emulator, "cpu-quotas", {"project": project, "displayName": "CPUs (all regions)", "value": 32})
    member = f"serviceAccount:{project_number(project)}-compute@developer.gserviceaccount.com"
    _post(emulator, "iam-bindings", {"project": project, "role": NODE_ROLE, "member": member, "granted": True})
