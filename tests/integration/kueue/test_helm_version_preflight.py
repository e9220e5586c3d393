"""The roles' preflight reads the helm that kubernetes.core.helm would run (planb.gke.helm_version) and refuses one the
pinned kubernetes.core cannot drive before any write: kueue_queues always (its release is a Helm install), kueue in
helm mode only (local mode's Kueue is a host process, no helm). The pinned helm 3 passes (every queue test runs this
preflight with it: tests/support/shared/kueue/queues_role.py); a binary that does not run is refused with the fix.
The refusal of helm 4 itself is tests/unit/test_helm_version.py's, on real helm 4.2.4 output."""

from __future__ import annotations

from pathlib import Path

from planb import paths
from tests.support.shared.kueue.queues_role import role
from tests.support.shared.kueue.role_playbook import failures_by_host, run_for_hosts

KUEUE_PREFLIGHT = """\
- name: The kueue role's preflight
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Check the Kueue variables
      ansible.builtin.include_role:
        name: kueue
        tasks_from: preflight.yml
"""


def test_the_queues_preflight_refuses_a_helm_that_does_not_run(tmp_path: Path) -> None:
    done = role(tmp_path, {"kueue_queues_helm_binary": str(tmp_path / "no-helm")})
    out = " ".join((done.stdout + done.stderr).split())
    assert done.returncode != 0, out[-3000:]
    assert f"planb: `{tmp_path / 'no-helm'} version --short` failed (no such program" in out, out[-3000:]
    assert "Fix: install a helm 3 release (planb's toolchain builds and tests v3.19.5" in out, out[-3000:]
    assert "set kueue_queues_helm_binary (planb_helm_binary in planb's inventories) to its path" in out, out[-3000:]
    assert not (tmp_path / "values.json").exists()  # the preflight stopped there


def test_the_kueue_preflight_reads_helm_in_helm_mode_only(tmp_path: Path) -> None:
    missing = {"kueue_helm_binary": str(tmp_path / "no-helm")}
    pinned = {"kueue_helm_binary": str(paths.tool("helm")), "kueue_install_mode": "helm"}
    # The three inputs in one ansible-playbook run, one host each.
    hosts = {"helm": {**missing, "kueue_install_mode": "helm"}, "host": {**missing, "kueue_install_mode": "host"}}
    done = run_for_hosts(tmp_path, KUEUE_PREFLIGHT, {**hosts, "pinned": pinned})
    failed = failures_by_host(done)
    assert set(failed) == {"helm"}, done.stdout[-3000:]
    assert "version --short` failed (no such program" in failed["helm"], failed["helm"][-3000:]
