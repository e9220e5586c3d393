"""Queues mode's `helm test` check (charts/planb/files/tests/check_queues.py) against a real kube-apiserver, as the
chart's hook ServiceAccount, with the hook Roles the chart renders: no more rights than the check needs.

The API server is the local stack's own build, started alone with the stack's CRDs (tests/support/integration/
api_server.py), the folder's (conftest.py), shared with test_packaged_chart.py, so all of this is in a namespace of
its own; no Kueue runs, so the test writes the ClusterQueue's Active condition itself, through the status
subresource, as Kueue's controller does. The token is one the TokenRequest API issues for the hook account, as the
kubelet asks for it. tests/e2e/topologies/test_helm_test.py runs `helm test` itself on the whole stack.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb.build import golden
from planb.kube import Kube
from tests.support.shared.chart.helm import Helm

pytestmark = [pytest.mark.tools]

CHECK = golden.CHART_DIR / "files" / "tests" / "check_queues.py"
KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
NS = "helm-test-check"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
#: A queues release whose cluster-scoped objects are named apart from any other test's.
VALUES = (
    "--set", "mode=queues",
    "--set", "queues.clusterQueue=cq-check",
    "--set", "queues.flavors.cpu=cpu-check",
    "--set", "queues.flavors.onDemand=on-demand-check",
    "--set", "dws.enabled=false",
    "--set", "queues.jobServiceAccount=",
    "--set", "queues.localQueue.name=lq-check",
    "--set", "queues.localQueue.namespace=helm-test-check",
)  # fmt: skip
#: Where each hook kind the check needs is created (the Pod is the kubelet's part: the test runs its command).
PATHS = {
    "ServiceAccount": "/api/v1/namespaces/{namespace}/serviceaccounts",
    "ClusterRole": f"{RBAC}/clusterroles",
    "ClusterRoleBinding": f"{RBAC}/clusterrolebindings",
    "Role": RBAC + "/namespaces/{namespace}/roles",
    "RoleBinding": RBAC + "/namespaces/{namespace}/rolebindings",
}


@pytest.fixture(scope="module")
def account(api_server: Path, helm: Helm, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release installed, its test hooks' account and Roles created; the account's token and the CA, as the
    kubelet mounts them."""
    kube = Kube(api_server)
    kube.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    done = helm("install", "q-check", str(golden.CHART_DIR), "-n", NS, *VALUES, kubeconfig=str(api_server))
    assert done.returncode == 0, done.stderr
    rendered = helm("template", "q-check", str(golden.CHART_DIR), "-n", NS, *VALUES)
    assert rendered.returncode == 0, rendered.stderr
    hooks: list[dict[str, Any]] = [d for d in yaml.safe_load_all(rendered.stdout) if d and d["kind"] in PATHS]
    assert sorted(h["kind"] for h in hooks) == sorted(PATHS)
    for hook in hooks:
        kube.create(PATHS[hook["kind"]].format(namespace=hook["metadata"].get("namespace", NS)), hook)
    issued = kube.create(
        f"/api/v1/namespaces/{NS}/serviceaccounts/q-check-test/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}},
    )
    directory = tmp_path_factory.mktemp("serviceaccount")
    (directory / "token").write_text(issued["status"]["token"])
    ca = kube.conn.ca_file
    assert ca, "the stack's kubeconfig names its CA file"
    (directory / "ca.crt").write_bytes(Path(ca).read_bytes())
    return directory


def active(kube: Kube, status: str, reason: str) -> None:
    """Write the ClusterQueue's Active condition, as Kueue's ClusterQueue controller does."""
    condition = {"type": "Active", "status": status, "reason": reason, "message": f"test: {reason}"}
    condition["lastTransitionTime"] = "2026-01-01T00:00:00Z"
    kube.merge_patch(f"{KUEUE}/clusterqueues/cq-check/status", {"status": {"conditions": [condition]}})


def check(
    api_server: Path, account: Path, *args: str, local: str = f"{NS}/lq-check"
) -> subprocess.CompletedProcess[str]:
    """check_queues.py as the test pod runs it: the API server named by KUBERNETES_SERVICE_HOST/PORT."""
    server = Kube(api_server).conn.server.removeprefix("https://")
    host, _, port = server.rpartition(":")
    env = {"PATH": os.environ.get("PATH", ""), "KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port}
    argv = ["--serviceaccount", str(account), "--cluster-queue=cq-check", f"--local-queue={local}", *args]
    return subprocess.run(
        [sys.executable, str(CHECK), *argv], capture_output=True, text=True, env=env, check=False, timeout=60
    )


def test_the_check_passes_for_an_active_cluster_queue_its_local_queue_points_at(
    api_server: Path, account: Path
) -> None:
    active(Kube(api_server), "True", "Ready")
    done = check(api_server, account)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OK: ClusterQueue cq-check is Active" in done.stdout
    assert f"OK: LocalQueue {NS}/lq-check points at ClusterQueue cq-check" in done.stdout
    assert done.stdout.rstrip().endswith("planb helm test: PASS")


def test_the_check_fails_for_an_inactive_cluster_queue_saying_why(api_server: Path, account: Path) -> None:
    active(Kube(api_server), "False", "Stopped")
    try:
        done = check(api_server, account)
    finally:
        active(Kube(api_server), "True", "Ready")
    assert done.returncode == 1
    assert "planb helm test: FAIL: ClusterQueue cq-check is not Active: Stopped: test: Stopped" in done.stdout


def test_the_hook_account_may_read_the_two_queues_and_nothing_else(api_server: Path, account: Path) -> None:
    """The hook Roles name the release's ClusterQueue and LocalQueue: any other is forbidden to the check."""
    done = check(api_server, account, "--cluster-queue=cq-other", local=f"{NS}/lq-check=cq-check")
    assert done.returncode == 1
    assert f"GET {KUEUE}/clusterqueues/cq-other: the API server answered 403 Forbidden" in done.stderr
    done = check(api_server, account, f"--local-queue={NS}/lq-other")
    assert f"GET {KUEUE}/namespaces/{NS}/localqueues/lq-other: the API server answered 403" in done.stderr


def test_with_several_cluster_queues_each_local_queue_is_checked_against_its_own(
    api_server: Path, account: Path
) -> None:
    """queues.teams renders a ClusterQueue per team: the check is told which one each LocalQueue must point at, and
    names the one it points at instead; without it, a LocalQueue among several ClusterQueues is refused before any
    read."""
    active(Kube(api_server), "True", "Ready")
    done = check(api_server, account, local=f"{NS}/lq-check=cq-check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"OK: LocalQueue {NS}/lq-check points at ClusterQueue cq-check" in done.stdout
    done = check(api_server, account, local=f"{NS}/lq-check=team-b")
    assert done.returncode == 1
    assert f"FAIL: LocalQueue {NS}/lq-check points at ClusterQueue 'cq-check', not 'team-b'" in done.stdout
    done = check(api_server, account, "--cluster-queue=team-b")
    assert done.returncode == 2
    assert f"--local-queue {NS}/lq-check: name its ClusterQueue (=CLUSTERQUEUE) when several are checked" in done.stderr
