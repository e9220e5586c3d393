"""The multikueue role's worker part (tasks/worker.yml) on a real API server: the region token it hands the manager
expires, is renewed, reads cluster-wide and writes only in the LocalQueue's namespace, and never shows in -v output,
in plain text or base64-encoded (docs/security.md, "The region token").

One throwaway etcd, kube-apiserver and kube-controller-manager on free loopback ports (the controller manager fills
legacy token Secrets and publishes kube-root-ca.crt, as on GKE) serves as both the worker and the manager. It starts
with what an earlier planb made there, a never-expiring token Secret and cluster-wide write rights, so the first run
is the upgrade an operator's next converge does.

Holds one thing: the region token's lifecycle on that one converged API server (the module's ``converged``), which
every test reads or changes in turn; a second file would start a second control plane and run the role twice more.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb import paths
from planb.cli import main as planb_main
from planb.local.stack import crds
from planb.local.stack.control_plane import ControlPlane
from tests.support.integration.multikueue_worker import (
    ACCOUNT,
    NAMESPACE,
    WORKER,
    allowed,
    as_region,
    claims,
    kubectl,
    leaks,
    recap,
    stored_kubeconfig,
    token_of,
)

pytestmark = [pytest.mark.tools]

ROLES = paths.REPO / "collections/ansible_collections/planb/gke/roles"
DURATION = 3600

PLAYBOOK = """\
- name: One worker's MultiKueue access, as roles/multikueue does it for each
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Give the manager access to the worker
      ansible.builtin.include_role:
        name: multikueue
        tasks_from: worker.yml
"""

#: What the multikueue role made on a worker at first: a token Secret that never expires, and writes anywhere.
EARLIER = f"""\
apiVersion: v1
kind: ServiceAccount
metadata: {{name: {ACCOUNT}, namespace: {NAMESPACE}}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {{name: {ACCOUNT}}}
rules:
  - {{apiGroups: [ray.io], resources: [rayjobs, rayclusters], verbs: [create, delete, get, list, watch, update, patch]}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {{name: {ACCOUNT}}}
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: {ACCOUNT}}}
subjects: [{{kind: ServiceAccount, name: {ACCOUNT}, namespace: {NAMESPACE}}}]
---
apiVersion: v1
kind: Secret
type: kubernetes.io/service-account-token
metadata:
  name: {ACCOUNT}
  namespace: {NAMESPACE}
  annotations: {{kubernetes.io/service-account.name: {ACCOUNT}}}
"""


def run_role(tmp_path: Path, kubeconfig: Path, *args: str, **extra: Any) -> subprocess.CompletedProcess[str]:
    playbook = tmp_path / "worker.yml"
    playbook.write_text(PLAYBOOK)
    variables = {
        "ansible_python_interpreter": sys.executable,
        "multikueue_worker": {"name": WORKER, "kubeconfig": str(kubeconfig)},
        "multikueue_manager_kubeconfig": str(kubeconfig),
        "multikueue_token_duration": DURATION,
        "multikueue_token_renew_before": DURATION // 2,
        **extra,
    }
    return subprocess.run(
        [str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local",
         "-e", json.dumps(variables), *args, str(playbook)],
        cwd=paths.REPO,
        env={**os.environ, "ANSIBLE_CONFIG": str(paths.REPO / "ansible.cfg"), "ANSIBLE_ROLES_PATH": str(ROLES),
             "ANSIBLE_NOCOLOR": "1"},
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@dataclass
class Converged:
    kubeconfig: Path
    legacy_token: str = field(repr=False)
    first: subprocess.CompletedProcess[str] = field(repr=False)
    second: subprocess.CompletedProcess[str] = field(repr=False)
    token: str = field(repr=False)


@pytest.fixture(scope="module")
def converged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Converged]:
    """The earlier objects, then the role twice, the second time with -v (each result printed)."""
    tmp_path = tmp_path_factory.mktemp("multikueue")
    plane = ControlPlane.throwaway(tmp_path / "local")
    kubeconfig = tmp_path / "local" / "kubeconfig"
    try:
        plane.create(kubeconfig, without=("kube-scheduler", "kwok-controller"))
        kubectl(kubeconfig, "create", "namespace", NAMESPACE)
        kubectl(kubeconfig, "apply", "-f", "-", stdin=EARLIER)
        deadline = time.monotonic() + 60
        legacy = ""
        while not legacy and time.monotonic() < deadline:
            out = kubectl(kubeconfig, "get", "secret", ACCOUNT, "-n", NAMESPACE, "-o", "jsonpath={.data.token}")
            legacy = base64.b64decode(out).decode() if out else ""
            time.sleep(0.5)
        assert legacy, "the controller manager never filled the legacy token Secret"
        first = run_role(tmp_path, kubeconfig)
        assert first.returncode == 0, (first.stdout + first.stderr)[-4000:]
        second = run_role(tmp_path, kubeconfig, "-v")
        assert second.returncode == 0, (second.stdout + second.stderr)[-4000:]
        yield Converged(kubeconfig, legacy, first, second, token_of(kubeconfig))
    finally:
        plane.delete()


def test_a_second_run_changes_nothing_and_prints_no_token_in_any_form(converged: Converged) -> None:
    assert recap(converged.second)["changed"] == 0, converged.second.stdout[-4000:]
    for done in (converged.first, converged.second):
        found = leaks(done.stdout + done.stderr, converged.token) + leaks(done.stdout, converged.legacy_token)
        assert not found, f"the region token shows in the output ({', '.join(found)})"


def test_the_token_expires_and_the_never_expiring_one_is_revoked(converged: Converged, tmp_path: Path) -> None:
    said = claims(converged.token)
    assert said["sub"] == f"system:serviceaccount:{NAMESPACE}:{ACCOUNT}", said
    assert 0 < said["exp"] - said["iat"] <= DURATION, said  # a TokenRequest token; a legacy one has no exp
    types = kubectl(converged.kubeconfig, "get", "secrets", "-n", NAMESPACE, "-o", "jsonpath={.items[*].type}")
    assert "kubernetes.io/service-account-token" not in types, "the legacy token Secret is still there"
    # The API server no longer takes the legacy token: its Secret is gone.
    as_legacy = as_region(converged.kubeconfig, tmp_path, converged.legacy_token)
    done = subprocess.run(
        ["kubectl", f"--kubeconfig={as_legacy}", "auth", "can-i", "list", "rayjobs.ray.io", "-A"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode != 0 and "Unauthorized" in done.stderr, done.stdout + done.stderr


#: (verb, resource, namespace or "-A" for every namespace, allowed): Kueue's calls on a worker are allowed
#: (docs/security.md, "The region token"), and writes are refused outside the LocalQueue's namespace.
RIGHTS = [
    ("watch", "workloads.kueue.x-k8s.io", "-A", True),
    ("list", "rayjobs.ray.io", "-A", True),
    ("list", "rayclusters.ray.io", "-A", True),
    ("list", "localqueues.kueue.x-k8s.io", "-A", True),
    ("create", "workloads.kueue.x-k8s.io", "default", True),
    ("update", "workloads.kueue.x-k8s.io/status", "default", True),
    ("delete", "workloads.kueue.x-k8s.io", "default", True),
    ("create", "rayjobs.ray.io", "default", True),
    ("delete", "rayjobs.ray.io", "default", True),
    ("patch", "rayclusters.ray.io", "default", True),
    ("create", "rayclusters.ray.io", "kube-system", False),
    ("create", "rayjobs.ray.io", "kueue-system", False),
    ("create", "rayclusters.ray.io", "-A", False),
    ("delete", "workloads.kueue.x-k8s.io", "kueue-system", False),
    ("patch", "rayjobs.ray.io", "default", False),
    ("create", "pods", "default", False),
    ("get", "secrets", "kueue-system", False),
]


def test_the_token_reads_cluster_wide_and_writes_only_in_the_local_queue_namespace(
    converged: Converged, tmp_path: Path
) -> None:
    region = as_region(converged.kubeconfig, tmp_path)
    wrong = []
    for verb, resource, namespace, expected in RIGHTS:
        # A SelfSubjectAccessReview names the group itself: `kubectl auth can-i` would need the CRDs to resolve it.
        name, _, subresource = resource.partition("/")
        plural, _, group = name.partition(".")
        where = "" if namespace == "-A" else namespace  # "": every namespace
        answer = allowed(region, verb, f"{plural}/{subresource}" if subresource else plural, "", where, group)
        if answer != expected:
            wrong.append(f"{verb} {resource} in {namespace}: {answer}")
    assert not wrong, "the region token's rights differ: " + "; ".join(wrong)


def test_a_run_renews_a_token_that_nears_its_expiry_and_prints_it_nowhere(converged: Converged, tmp_path: Path) -> None:
    # Last in this file: it replaces the token. Every token is within DURATION - 1 s of its expiry a second on.
    time.sleep(1)
    done = run_role(tmp_path, converged.kubeconfig, "-v", multikueue_token_renew_before=DURATION - 1)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    renewed = token_of(converged.kubeconfig)
    assert renewed != converged.token
    assert claims(renewed)["exp"] > claims(converged.token)["exp"]
    assert recap(done)["changed"] == 2, done.stdout[-3000:]  # the token requested, the Secret rewritten
    found = leaks(done.stdout + done.stderr, renewed) + leaks(done.stdout + done.stderr, converged.token)
    assert not found, f"a region token shows in the output ({', '.join(found)})"


def test_a_planted_token_that_claims_the_account_is_replaced(converged: Converged, tmp_path: Path) -> None:
    """Whoever may write the manager's Secret plants a token whose unsigned claims name the ServiceAccount's uid and
    a far expiry (its signature no longer matches): the worker's API server does not authenticate it, so the next
    run replaces it instead of keeping it as fresh."""
    current = token_of(converged.kubeconfig)
    head, _, signature = current.split(".")
    said = claims(current)
    said["exp"] = said["exp"] + 10 * 365 * 86400
    forged_payload = base64.urlsafe_b64encode(json.dumps(said).encode()).decode().rstrip("=")
    forged = f"{head}.{forged_payload}.{signature}"
    config = stored_kubeconfig(converged.kubeconfig)
    config["users"][0]["user"]["token"] = forged
    encoded = base64.b64encode(yaml.safe_dump(config).encode()).decode()
    patch = json.dumps({"data": {"kubeconfig": encoded}})
    kubectl(converged.kubeconfig, "patch", "secret", f"{WORKER}-multikueue", "-n", NAMESPACE, "-p", patch)
    assert token_of(converged.kubeconfig) == forged
    done = run_role(tmp_path, converged.kubeconfig)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    renewed = token_of(converged.kubeconfig)
    assert renewed != forged
    assert claims(renewed)["exp"] < said["exp"]
    assert recap(done)["changed"] == 2, done.stdout[-3000:]  # a token requested, the Secret rewritten
    assert not leaks(done.stdout + done.stderr, forged), "the planted token shows in the output"


#: Everything the role does on a worker but a TokenReview: its objects, their rights (RBAC lets only who holds a right
#: grant it), the CA's ConfigMap, a token of the ServiceAccount, the legacy Secret's deletion.
OPERATOR = f"""\
apiVersion: v1
kind: ServiceAccount
metadata: {{name: operator, namespace: {NAMESPACE}}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {{name: operator-without-tokenreviews}}
rules:
  - {{apiGroups: ["", rbac.authorization.k8s.io, kueue.x-k8s.io, ray.io], resources: ["*"], verbs: ["*"]}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {{name: operator-without-tokenreviews}}
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: operator-without-tokenreviews}}
subjects: [{{kind: ServiceAccount, name: operator, namespace: {NAMESPACE}}}]
"""


def test_a_worker_kubeconfig_that_may_not_create_tokenreviews_is_said_without_the_token(
    converged: Converged, tmp_path: Path
) -> None:
    """The role checks the stored token with a TokenReview, a no_log task; run with a
    worker kubeconfig whose identity may do everything else, it stops and says what is missing and the fix, and
    prints no token in any form."""
    kubectl(converged.kubeconfig, "apply", "-f", "-", stdin=OPERATOR)
    token = kubectl(converged.kubeconfig, "create", "token", "operator", "-n", NAMESPACE, "--duration=600s").strip()
    config = yaml.safe_load(converged.kubeconfig.read_text())
    context = next(c for c in config["contexts"] if c["name"] == config["current-context"])["context"]
    for user in config["users"]:
        if user["name"] == context["user"]:
            user["user"] = {"token": token}
    worker = tmp_path / "operator.kubeconfig"
    worker.write_text(yaml.safe_dump(config))
    worker.chmod(0o600)
    done = run_role(tmp_path, converged.kubeconfig, "-v", multikueue_worker={"name": WORKER, "kubeconfig": str(worker)})
    out = done.stdout + done.stderr
    assert done.returncode != 0, out[-4000:]
    said = " ".join(out.split())
    assert f"of {WORKER} may not create tokenreviews (authentication.k8s.io) there" in said, out[-4000:]
    assert "(kubectl auth can-i create tokenreviews.authentication.k8s.io: no)" in said, out[-4000:]
    assert "the built-in ClusterRole system:auth-delegator has it" in said, out[-4000:]
    assert "Ask the worker whose the stored token is" not in out, "the TokenReview ran, hidden"
    found = leaks(out, token_of(converged.kubeconfig)) + leaks(out, token)
    assert not found, f"a token shows in the output ({', '.join(found)})"


RENEWAL = """\
- name: The regions keeper's token renewal on the manager, as roles/regions_keeper does it
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Give the renewal its rights and CronJob
      ansible.builtin.include_role:
        name: regions_keeper
        tasks_from: renewal.yml
"""


def test_the_token_renews_itself_from_the_manager_with_least_rights(
    converged: Converged, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`planb regions renew-tokens` as the regions keeper's CronJob runs it, as the ServiceAccount the role gives it:
    a token with time left is kept, one within --renew-before is replaced by the successor it asked its region for,
    no token shows, and each side's rights are only those (docs/security.md, "The region token")."""
    kube = converged.kubeconfig
    crds.apply(kube, [next(p for p in crds.files() if p.name == "kueue.x-k8s.io_multikueueclusters.yaml")])
    crds.wait_served(kube, expected=frozenset({"multikueueclusters.kueue.x-k8s.io"}))
    cluster = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "MultiKueueCluster", "metadata": {"name": WORKER}}
    cluster["spec"] = {"clusterSource": {"kubeConfig": {"locationType": "Secret", "location": f"{WORKER}-multikueue"}}}
    kubectl(kube, "apply", "-f", "-", stdin=json.dumps(cluster))
    playbook = tmp_path / "renewal.yml"
    playbook.write_text(RENEWAL)
    variables = {"regions_keeper_kubeconfig": str(kube), "regions_keeper_regions": [WORKER]}
    variables["regions_keeper_image"] = "registry.example/planb:0.1.0"
    for run in ("first", "again"):  # the second changes nothing
        done = subprocess.run(
            [str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local",
             "-e", json.dumps({"ansible_python_interpreter": sys.executable, **variables}), str(playbook)],
            cwd=paths.REPO, capture_output=True, text=True, timeout=300, check=False,
            env={**os.environ, "ANSIBLE_CONFIG": str(paths.REPO / "ansible.cfg"), "ANSIBLE_ROLES_PATH": str(ROLES)},
        )  # fmt: skip
        assert done.returncode == 0 and (run == "first" or recap(done)["changed"] == 0), done.stdout[-4000:]
    job = json.loads(kubectl(kube, "get", "cronjob", "planb-regions-keeper-tokens", "-n", NAMESPACE, "-o", "json"))
    container = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["planb", "regions", "renew-tokens"] and f"--region={WORKER}" in container["args"]
    # The CronJob's identity: a token of its ServiceAccount on the same server.
    token = kubectl(kube, "create", "token", "planb-regions-keeper-tokens", "-n", NAMESPACE).strip()
    renewer = as_region(kube, tmp_path, token).rename(tmp_path / "renewer.kubeconfig")
    secret = f"{WORKER}-multikueue"
    assert allowed(renewer, "patch", "secrets", secret) and allowed(renewer, "get", "secrets", secret)
    assert not allowed(renewer, "get", "secrets", "other") and not allowed(renewer, "list", "secrets")
    assert allowed(renewer, "get", "multikueueclusters", WORKER, "", "kueue.x-k8s.io")
    assert not allowed(renewer, "list", "multikueueclusters", "", "", "kueue.x-k8s.io")
    # The region token may mint its own successor and no other account's token.
    region = as_region(kube, tmp_path)
    assert allowed(region, "create", "serviceaccounts/token", ACCOUNT) and not allowed(
        region, "create", "serviceaccounts/token", "default"
    )
    before = token_of(kube)
    command = ["regions", "renew-tokens", f"--kubeconfig={renewer}", f"--region={WORKER}", f"--duration={DURATION}"]
    assert planb_main([*command, "--renew-before=60"]) == 0
    kept = capsys.readouterr().out
    assert f"{WORKER}: token valid until" in kept and "kept" in kept and token_of(kube) == before, kept
    assert planb_main([*command, f"--renew-before={DURATION}"]) == 0
    renewed = capsys.readouterr()
    after = token_of(kube)
    assert f"{WORKER}: token renewed in Secret {NAMESPACE}/{WORKER}-multikueue" in renewed.out and after != before
    assert claims(after)["sub"] == claims(before)["sub"] and claims(after)["exp"] > claims(before)["exp"]
    assert allowed(as_region(kube, tmp_path), "list", "rayjobs", "", "default", "ray.io"), "the new token does not work"
    assert not leaks(renewed.out + renewed.err + kept, after) + leaks(renewed.out + renewed.err + kept, before)
    # A token of another account is not the region token's to ask for: refused, naming the fix, the Secret unchanged.
    assert planb_main([*command, f"--renew-before={DURATION}", "--account=default"]) != 0
    refused = capsys.readouterr()
    assert "could not ask its region for a new one (403: not allowed)" in refused.out, refused
    assert (
        f"Fix: run the regions play for {WORKER}" in refused.out and "1 of 1 region tokens not renewed" in refused.err
    )
    assert token_of(kube) == after and not leaks(refused.out + refused.err, after)
