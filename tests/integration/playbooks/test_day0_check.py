"""The day-0 check (playbooks/day0.yml, planb.gke.gcp_project_check) on a fresh emulator project: only Cloud Resource
Manager on, no quota, an organisation policy that requires Shielded VMs and no role for the nodes' service account.
It names every blocker in one report and writes nothing; once the fixes it names are applied in the emulator, it
passes."""

from __future__ import annotations

from pathlib import Path

from planb.local.gke_emulator.emulator import RunningEmulator, is_write
from planb.local.gke_emulator.store import list_clusters, list_node_pools
from tests.support.integration.gke.fresh_project import APIS, QUOTA_PROJECT, apply_fixes, make_fresh
from tests.support.integration.gke.gke_api import call
from tests.support.integration.gke.modules import ansible_playbook

#: inventories/local's project, zone and profile (tpu-v6e-4x4: ct6e-standard-4t, 16 chips a slice).
PROJECT, REGION, MACHINE, CHIPS = "planb-local", "us-east5", "ct6e-standard-4t", 16


def _run(emulator: RunningEmulator, tmp_path: Path, *extra: str) -> tuple[int, str]:
    env = {
        "GKE_API_ENDPOINT": emulator.url,
        "PLANB_STATE_DIR": str(tmp_path / "state"),
        "GOOGLE_CLOUD_QUOTA_PROJECT": QUOTA_PROJECT,
    }
    done = ansible_playbook("playbooks/day0.yml", "-i", "inventories/local", *extra, env=env)
    return done.returncode, done.stdout + done.stderr


def test_a_fresh_project_gets_every_blocker_in_one_report_and_no_write(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    make_fresh(emulator, PROJECT)
    code, out = _run(emulator, tmp_path)
    assert code != 0, out[-3000:]
    # One task failed, once, with the one report: numbered blockers, one a line.
    assert out.count("fatal:") == 1, out[-3000:]
    report = out[out.index("Day-0 check of project planb-local:") :].split("\nOrigin:", 1)[0]
    lines = report.splitlines()
    assert lines[0].startswith("Day-0 check of project planb-local: 12 blocker(s); nothing was written"), report
    assert [line.split(".", 1)[0] for line in lines[1:]] == [str(n) for n in range(1, 13)], report
    # Every API planb needs is off, each named with the command that turns it on.
    for service in APIS:
        assert f"the API {service} is off on project {PROJECT}" in report, (service, report)
    # Accelerator quota, on-demand and preemptible, and the default pool's CPUs, each with the request link and the
    # note that approval takes days.
    assert "0 chips of on-demand quota 'TPUs per TPU family' (tpu_family=CT6E)" in report
    assert "0 units of preemptible quota 'Preemptible TPU slices v6e'" in report
    assert "0 vCPUs of on-demand quota 'N2 CPUs'" in report and "quota 'CPUs (all regions)'" in report
    assert report.count("approval can take days") == 4 and "iam-admin/quotas?project=planb-local" in report
    # The organisation policy, read with the Org Policy API's effective policy: planb's pools boot with secure boot
    # (planb_secure_boot, on by default), so constraints/compute.requireShieldedVm is no blocker; the node service
    # account's role, planb's policy apart from Google's refusals.
    assert "requireShieldedVm" not in report, report
    assert "[node_service_account] (planb's policy)" in report and "roles/container.defaultNodeServiceAccount" in report
    # It read, and wrote nothing: every request a GET or a read-only POST of Cloud Resource Manager.
    log = emulator.store.request_log()
    assert log and [r for r in log if is_write(r)] == [], [r for r in log if r["method"] != "GET"]
    assert {r["userProject"] for r in log} == {QUOTA_PROJECT}
    assert any("/orgpolicy/v2/projects/planb-local/policies/" in r["path"] for r in log), [r["path"] for r in log]


def test_after_the_fixes_the_check_passes(emulator: RunningEmulator, tmp_path: Path) -> None:
    make_fresh(emulator, PROJECT)
    apply_fixes(emulator, PROJECT, REGION, MACHINE, CHIPS)
    code, out = _run(emulator, tmp_path)
    assert code == 0, out[-3000:]
    assert "Day-0 check of project planb-local: 0 blocker(s)" in out, out[-3000:]
    assert emulator.writes() == []


def test_after_the_fixes_the_cluster_converges_under_the_shielded_vm_policy(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    """compute.requireShieldedVm stays enforced (apply_fixes grants no exception): every VM planb makes boots with
    secure boot, so the cluster play converges, and again with nothing to change; with planb_secure_boot false the
    emulator refuses default-pool with Compute Engine's message, as Google does."""
    make_fresh(emulator, PROJECT)
    apply_fixes(emulator, PROJECT, REGION, MACHINE, CHIPS)
    env = {
        "GKE_API_ENDPOINT": emulator.url,
        "PLANB_STATE_DIR": str(tmp_path / "state"),
        "GOOGLE_CLOUD_QUOTA_PROJECT": QUOTA_PROJECT,
    }
    state = emulator.store.root.parent
    off = ansible_playbook("playbooks/cluster.yml", "-i", "inventories/local", "-e", "planb_secure_boot=false", env=env)
    assert off.returncode != 0 and "constraints/compute.requireShieldedVm violated" in off.stdout, off.stdout[-3000:]
    assert list_clusters(state) == []
    done = ansible_playbook("playbooks/cluster.yml", "-i", "inventories/local", env=env)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    pools = list_node_pools(state)
    assert pools and all(p["config"]["shieldedInstanceConfig"]["enableSecureBoot"] for p in pools), pools
    assert list_clusters(state)[0]["shieldedNodes"] == {"enabled": True}
    again = ansible_playbook("playbooks/cluster.yml", "-i", "inventories/local", env=env)
    assert again.returncode == 0 and "changed=0" in again.stdout, again.stdout[-3000:]


def test_a_policy_against_vpc_peering_stops_the_control_plane_range_before_any_write(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    """docs/first-run.md section 4's MASTER_IPV4_CIDR asks GKE for the VPC Network Peering form, which an organisation
    enforcing constraints/compute.restrictVpcPeering refuses only after GKE accepted the create call: the day-0 check
    reads the policy and names it with the fix, the Private Service Connect form (no range), which then passes."""
    make_fresh(emulator, PROJECT)
    apply_fixes(emulator, PROJECT, REGION, MACHINE, CHIPS)
    policy = {"rules": [{"values": {"allowedValues": ["under:organizations/123456789012"]}}]}
    body = {"project": PROJECT, "constraint": "compute.restrictVpcPeering", "spec": policy}
    assert call(emulator, "POST", "/planb/v1/org-policies", body)[0] == 200
    private = ("-e", "planb_private_nodes=true", "-e", "planb_cloud_nat=false")
    code, out = _run(emulator, tmp_path, *private, "-e", "planb_master_ipv4_cidr=172.16.0.32/28")
    assert code != 0, out[-3000:]
    report = " ".join(out[out.index("Day-0 check of project planb-local:") :].split())
    assert report.startswith("Day-0 check of project planb-local: 1 blocker(s); nothing was written"), report[:3000]
    assert "constraints/compute.restrictVpcPeering restricts VPC peering on project planb-local" in report, report
    assert "Fix: use the Private Service Connect form: leave MASTER_IPV4_CIDR unset" in report, report
    code, out = _run(emulator, tmp_path, *private)
    assert code == 0 and "Day-0 check of project planb-local: 0 blocker(s)" in out, out[-3000:]
    assert emulator.writes() == []
