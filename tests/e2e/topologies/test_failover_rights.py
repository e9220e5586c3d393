"""The failover controller's rights, asked of the local API server with the chart's ServiceAccount token.

The kueue_queues role's Helm install rendered the ServiceAccount, its Role and RoleBinding (local mode:
failover.inCluster=false); `kubectl create token` gives a token of that account, as `planb local
failover` does for the host controller. With it, each call the controller makes is sent for real in the
LocalQueue namespace (writes as server-side dry runs, so nothing changes) and must be allowed: a verb
missing from the chart makes the API server answer 403 and this test fail. The same writes in another
namespace, and the cluster-scoped reads the chart does not grant, are refused (403).
tests/e2e/topologies/test_stockout_failover.py then proves the move itself, made with that token.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from planb.failover.kubeapi import JSON_PATCH, ApiError, Credentials, KubeApi, resource_path
from planb.local import failover_settings
from planb.local.stack import failover_access
from planb.local.stack.kubectl import kubectl
from planb.local.stack.stack import LocalStack
from tests.support.e2e.waits import wait_until

MINE = "default"  # the LocalQueue's namespace (queues.localQueue.namespace)
OTHER = "planb-rights-other"
PROBE = "planb-rights-probe"
DRY = "?dryRun=All"
MERGE_PATCH = "application/merge-patch+json"
KUEUE, RAY = ("kueue.x-k8s.io", "v1beta2"), ("ray.io", "v1")
RAYJOB = {
    "apiVersion": "ray.io/v1",
    "kind": "RayJob",
    "metadata": {"name": PROBE},
    # Suspended and without a queue label: KubeRay makes no cluster, Kueue leaves it alone.
    "spec": {
        "suspend": True,
        "entrypoint": "true",
        "rayClusterSpec": {
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"containers": [{"name": "ray-head", "image": "rayproject/ray:2.53.0-py311"}]}},
            }
        },
    },
}
ANNOTATE = [{"op": "add", "path": "/metadata/annotations", "value": {"planb.dev/rights-probe": "1"}}]


def event(namespace: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{PROBE}.rights", "namespace": namespace},
        "involvedObject": {"apiVersion": "ray.io/v1", "kind": "RayJob", "name": PROBE, "namespace": namespace},
        "reason": "RightsProbe",
        "message": "dry run",
        "type": "Normal",
    }


def status(api: KubeApi, method: str, path: str, body: object = None, content_type: str = "application/json") -> int:
    """The API server's answer to one request with the ServiceAccount's token: 200/201, or the error's code."""
    try:
        api.request(method, path, body, content_type)
    except ApiError as exc:
        return exc.status
    return 201 if method == "POST" else 200


@pytest.fixture()
def as_controller(site: Path, tmp_path: Path) -> Iterator[KubeApi]:
    """The API server as the controller's ServiceAccount sees it; a probe RayJob in both namespaces."""
    stack = LocalStack()
    kubeconfig = stack.kubeconfig
    if OTHER not in kubectl(kubeconfig, ["get", "namespaces", "-o", "name"]):
        kubectl(kubeconfig, ["create", "namespace", OTHER])
    for namespace in (MINE, OTHER):
        job = {**RAYJOB, "metadata": {"name": PROBE, "namespace": namespace}}
        kubectl(kubeconfig, ["apply", "-f", "-"], stdin=json.dumps(job))
    account = failover_settings.load(stack.state).service_account
    access = failover_access.service_account_token(tmp_path, kubeconfig, account)
    assert (access.token_file.stat().st_mode & 0o777) == 0o600
    try:
        yield KubeApi(Credentials(access.server, access.token_file, access.ca_file))
    finally:
        for namespace in (MINE, OTHER):
            kubectl(kubeconfig, ["delete", "rayjob", PROBE, "-n", namespace, "--ignore-not-found", "--wait=false"])


def test_the_controllers_calls_are_allowed_in_the_local_queue_namespace(as_controller: KubeApi) -> None:
    api = as_controller
    rayjob = resource_path(*RAY, "rayjobs", MINE, PROBE)
    # A Workload of that name does not exist: 404 means the API server let the request through to it.
    workload = resource_path(*KUEUE, "workloads", MINE, f"rayjob-{PROBE}-0")
    answers = {
        "get workloads": status(api, "GET", workload),
        "list workloads": status(api, "GET", resource_path(*KUEUE, "workloads", MINE)),
        "patch workloads": status(api, "PATCH", workload + DRY, ANNOTATE, JSON_PATCH),
        "get rayjobs": status(api, "GET", rayjob),
        "list rayjobs": status(api, "GET", resource_path(*RAY, "rayjobs", MINE)),
        "patch rayjobs": status(api, "PATCH", rayjob + DRY, ANNOTATE, JSON_PATCH),
        "create events": status(api, "POST", resource_path("", "v1", "events", MINE) + DRY, event(MINE)),
    }
    assert answers == {
        "get workloads": 404,
        "list workloads": 200,
        "patch workloads": 404,
        "get rayjobs": 200,
        "list rayjobs": 200,
        "patch rayjobs": 200,
        "create events": 201,
    }


def test_outside_its_namespaces_the_api_server_refuses_it(as_controller: KubeApi) -> None:
    api = as_controller
    rayjob = resource_path(*RAY, "rayjobs", OTHER, PROBE)
    pod_template = [{"op": "add", "path": "/spec/rayClusterSpec/headGroupSpec/template/metadata", "value": {}}]
    answers = {
        "patch a RayJob elsewhere": status(api, "PATCH", rayjob + DRY, pod_template, JSON_PATCH),
        "get a RayJob elsewhere": status(api, "GET", rayjob),
        "patch a Workload elsewhere": status(
            api, "PATCH", resource_path(*KUEUE, "workloads", OTHER, f"rayjob-{PROBE}-0") + DRY, ANNOTATE, JSON_PATCH
        ),
        "create an Event elsewhere": status(api, "POST", resource_path("", "v1", "events", OTHER) + DRY, event(OTHER)),
        "list Workloads cluster-wide": status(api, "GET", resource_path(*KUEUE, "workloads")),
        "read a ResourceFlavor": status(api, "GET", resource_path(*KUEUE, "resourceflavors", "", "on-demand")),
        "create a RayJob here": status(api, "POST", resource_path(*RAY, "rayjobs", MINE) + DRY, RAYJOB),
        # KubeRay's writes (the Ray head stand-in copies a ready state with the admin's kubeconfig, not this one).
        "list RayClusters here": status(api, "GET", resource_path(*RAY, "rayclusters", MINE)),
        "patch a RayJob's status here": status(
            api, "PATCH", resource_path(*RAY, "rayjobs", MINE, PROBE) + "/status" + DRY, {"status": {}}, MERGE_PATCH
        ),
    }
    assert answers == dict.fromkeys(answers, 403)


def test_the_host_controller_runs_with_the_service_accounts_token(site: Path) -> None:
    stack = LocalStack()
    pid = stack.failover.pid()
    assert pid is not None

    def argv() -> list[str]:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")

    # The reset has just started it: while the new process is still in its exec, /proc shows no command line.
    wait_until(
        lambda: "planb.failover" in argv(),
        "the failover controller's command line",
        10,
        explain=lambda: (argv(), stack.failover.log_file.read_text()[-2000:]),
    )
    command = argv()
    assert f"--token-file={stack.state / failover_access.TOKEN_FILE}" in command
    assert not [a for a in command if a.startswith("--kubeconfig")]
    assert "--namespaces=default" in command and "--cluster-queues=cluster-queue" in command
