"""The roles through ansible-playbook: a fault mid-create, the re-run that converges, missing credentials."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from planb.local.gke_emulator.emulator import RunningEmulator
from planb.local.gke_emulator.store import list_node_pools
from planb.paths import REPO
from tests.support.integration.gke.modules import ansible_playbook
from tests.support.integration.gke.refusals import assert_plain_refusal


def _recap_changed(output: str) -> int:
    match = re.search(r"localhost\s+: ok=\d+\s+changed=(\d+)", output)
    assert match, output[-3000:]
    return int(match.group(1))


#: The client certificate and key a local stack's kubeconfig carries (base64, embedded). Its CA is no secret: the
#: cluster's own description carries it (masterAuth.clusterCaCertificate), which -v prints.
_KUBECONFIG_SECRETS = ("Q0xJRU5ULWNlcnRpZmljYXRl", "Q0xJRU5ULUtFWS1wcml2YXRl")
_KUBECONFIG_CA = "Q0EtREFUQS1jYS1jZXJ0aWZpY2F0ZQ=="
_KUBECONFIG = f"""apiVersion: v1
kind: Config
current-context: planb
clusters:
  - name: planb
    cluster: {{server: "https://127.0.0.1:26443", certificate-authority-data: {_KUBECONFIG_CA}}}
contexts:
  - name: planb
    context: {{cluster: planb, user: planb}}
users:
  - name: planb
    user: {{client-certificate-data: {_KUBECONFIG_SECRETS[0]}, client-key-data: {_KUBECONFIG_SECRETS[1]}}}
"""


def test_fault_mid_create_fails_clearly_then_rerun_converges(emulator: RunningEmulator, tmp_path: Path) -> None:
    env = {"GKE_API_ENDPOINT": emulator.url, "PLANB_STATE_DIR": str(tmp_path / "state")}
    emulator.engine.add_fault(
        {"operationType": "CREATE_NODE_POOL", "message": "ZONE_RESOURCE_POOL_EXHAUSTED (injected by the test)"}
    )
    failed = ansible_playbook("playbooks/cluster.yml", "-i", "inventories/local", env=env)
    out = failed.stdout + failed.stderr
    assert failed.returncode != 0, out[-3000:]
    assert "CREATE_NODE_POOL" in out and "ZONE_RESOURCE_POOL_EXHAUSTED (injected by the test)" in out
    assert "-e planb_recreate_on_error=true" in out
    # The cluster came up before the pool failed; no local stack is up, and the emulator's reason is told.
    assert "does not exist yet; start the local stack with `planb local up`" in " ".join(out.split()), out[-3000:]
    pools = {p["name"]: p for p in list_node_pools(emulator.store.root.parent)}
    assert pools["on-demand-pool"]["status"] == "ERROR"
    assert "dws-pool" not in pools

    # A routine re-run leaves the pool in ERROR alone (it could hold nodes running jobs) and says why.
    routine = ansible_playbook("playbooks/cluster.yml", "-i", "inventories/local", env=env)
    out = routine.stdout + routine.stderr
    assert routine.returncode != 0 and "is in status ERROR" in out and "recreate_on_error is false" in out, out[-3000:]
    assert not [r for r in emulator.writes() if r["method"] == "DELETE"]

    # Opted in, the pool (no nodes: it failed before any came up) is deleted and recreated. The local stack's
    # kubeconfig now exists, so this run (with --diff, verbose) writes its copy: no key or certificate is shown.
    (tmp_path / "no-local-stack").write_text(_KUBECONFIG)
    rerun = ansible_playbook(
        "playbooks/cluster.yml",
        "-i",
        "inventories/local",
        "-e",
        "planb_recreate_on_error=true",
        "--diff",
        "-v",
        env=env,
    )
    out = rerun.stdout + rerun.stderr
    assert rerun.returncode == 0, out[-3000:]
    assert "Write the local stack's kubeconfig" in out, out[-3000:]
    assert (tmp_path / "state" / "gke" / "tpu-cluster.kubeconfig").read_text() == _KUBECONFIG
    for secret in _KUBECONFIG_SECRETS:
        assert secret not in out, f"{secret} printed:\n{out[-3000:]}"
    pools = {p["name"]: p for p in list_node_pools(emulator.store.root.parent)}
    assert {name: pool["status"] for name, pool in pools.items()} == {
        "default-pool": "RUNNING",
        "on-demand-pool": "RUNNING",
        "dws-pool": "RUNNING",
    }
    assert pools["dws-pool"]["config"]["flexStart"] is True

    # A copy that someone opened to others is written again, 0600; one as the role writes it is left be.
    kubeconfig = tmp_path / "state" / "gke" / "tpu-cluster.kubeconfig"
    kubeconfig.chmod(0o644)
    mended = ansible_playbook("playbooks/cluster.yml", "-i", "inventories/local", env=env)
    assert mended.returncode == 0 and _recap_changed(mended.stdout) == 1, mended.stdout[-3000:]
    assert kubeconfig.stat().st_mode & 0o777 == 0o600
    settled = ansible_playbook("playbooks/cluster.yml", "-i", "inventories/local", env=env)
    assert settled.returncode == 0 and _recap_changed(settled.stdout) == 0, settled.stdout[-3000:]


def _bare_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """An environment with no Google credential, project or seed variable at all."""
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TMPDIR")}
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {**keep, "HOME": str(home), "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ansible-tmp"), **extra}


def _run_bare(env: dict[str, str]) -> tuple[int, str]:
    env = {**env, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}
    command = [str(Path(sys.executable).parent / "ansible-playbook"), "playbooks/cluster.yml", "-i", "inventories/gke"]
    done = subprocess.run([*command, "--check"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout + done.stderr


def test_gke_inventory_without_credentials_fails_fast(tmp_path: Path) -> None:
    # (Without PROJECT_ID or ZONE it stops even earlier, naming them: tests/integration/playbooks/test_teardown.py.)
    rc, out = _run_bare(_bare_env(tmp_path, PROJECT_ID="my-project", ZONE="us-east5-b"))
    assert rc != 0
    assert_plain_refusal(out, "Missing credential: auth_kind=application found no Application Default Credentials")
    assert "GOOGLE_APPLICATION_CREDENTIALS is unset" in out
    assert "Missing project" not in out
    assert "Create or update cluster" not in out
    # Fast: the first task that needs Google stops the play, with no retry of a call that cannot succeed.
    assert "RETRYING" not in out, out
    assert re.search(r"localhost\s*:\s*ok=\d+\s+changed=0\s+unreachable=0\s+failed=1", out), out


def test_gke_inventory_serviceaccount_without_key_names_it(tmp_path: Path) -> None:
    env = _bare_env(tmp_path, PROJECT_ID="my-project", ZONE="us-east5-b", GCP_AUTH_KIND="serviceaccount")
    rc, out = _run_bare(env)
    assert rc != 0
    # The argument spec's required_if (planb.gke's args.AUTH_RELATIONS), in AnsibleModule's words.
    assert (
        "auth_kind is serviceaccount but any of the following are missing: service_account_file, "
        "service_account_contents" in out
    ), out[-4000:]
    assert "Missing project" not in out


def test_gke_inventory_checks_the_isolation_options_it_reads_before_any_call(tmp_path: Path) -> None:
    """docs/first-run.md section 4: MASTER_IPV4_CIDR, NODE_SERVICE_ACCOUNT and RELEASE_CHANNEL reach gke_cluster through
    the inventory and the cluster play, and a wrong one stops the preflight with no credential and nothing sent."""
    env = _bare_env(
        tmp_path,
        PROJECT_ID="my-project",
        ZONE="us-east5-b",
        MASTER_IPV4_CIDR="172.16.0.0/24",
        NODE_SERVICE_ACCOUNT="nodes@example.com",
        RELEASE_CHANNEL="FAST",
    )
    rc, out = _run_bare(env)
    assert rc != 0
    assert "Invalid cluster input (nothing was sent to GKE)" in out, out[-3000:]
    assert "master_ipv4_cidr 172.16.0.0/24 must be a /28: GKE's rule" in out
    assert "master_ipv4_cidr needs private_nodes true" in out  # planb_private_nodes is false in inventories/gke
    assert "node_service_account 'nodes@example.com' is not a service account email" in out
    assert "release_channel 'FAST' is not a GKE release channel" in out
    assert "Create or update cluster" not in out
