"""Each DWS job runs on its own request's nodes, never on another's, on the real stack.

Two DWS jobs are provisioned at the same time, one request per queued pool (planb_dws_slices=2).
What is checked comes from the real API: the ProvisioningRequests (their resize request name in
``status.provisioningClassDetails``), the Workloads (Kueue's podSetUpdates), the pods as the API
server admitted them (the node selector our webhook added, the node the real scheduler bound them
to) and the nodes (the label the capacity simulator put on them). The webhook's registration and
its failure policy are checked against the real API server too.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from planb import paths
from planb.kube import Kube, KubeError, Obj
from planb.kube_objects import conditions
from planb.local.capacity import webhook
from planb.local.capacity.autoscaler import tolerates
from planb.local.capacity.registration import PATH as CONFIG
from planb.local.stack.stack import LocalStack
from planb.status.report import KUEUE, PROVREQ
from tests.support.e2e.jobs import wait_jobs
from tests.support.e2e.topologies import PROFILE, run
from tests.support.e2e.waits import wait_until

pytestmark = [pytest.mark.slow]

TARGET = "planb-local/us-east5-b/tpu-cluster"
PODS = "/api/v1/namespaces/default/pods"
CONSUME = webhook.CONSUME_ANNOTATIONS[0]
QUEUED_TAINT = {"key": "cloud.google.com/gke-queued", "value": "true", "effect": "NoSchedule"}


def helm(kubeconfig: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run(str(paths.tool("helm")), f"--kubeconfig={kubeconfig}", *args, check=check)


def install_dws_job(kubeconfig: Path, name: str) -> None:
    """A job that never runs on plan A (job.avoidPlans), so it goes to DWS."""
    chart = paths.REPO / "charts" / "planb"
    values = str(chart / "values" / f"{PROFILE}.yaml")
    helm(kubeconfig, "install", name, str(chart), "-f", values, "--set", "job.avoidPlans={on-demand}")


def owner(obj: Obj, kind: str) -> str | None:
    return next((o["name"] for o in obj["metadata"].get("ownerReferences", []) if o.get("kind") == kind), None)


def job_of_request(kube: Kube, pr: Obj) -> str | None:
    """The RayJob a ProvisioningRequest is for: request -> its Workload (owner) -> the Workload's RayJob."""
    workload = owner(pr, "Workload")
    wl = kube.get(f"{KUEUE}/namespaces/default/workloads/{workload}") if workload else None
    return owner(wl, "RayJob") if wl else None


def bound_workers(kube: Kube, request: str) -> list[Obj]:
    """Pods that consume `request` (Kueue's annotation), once all of them are bound to a node."""
    return [p for p in kube.items(PODS) if (p["metadata"].get("annotations") or {}).get(CONSUME) == request]


def test_two_dws_jobs_provisioned_at_once_each_run_only_on_their_own_requests_nodes(two_slices: Path) -> None:
    kube = Kube(two_slices)
    install_dws_job(two_slices, "job-2")
    install_dws_job(two_slices, "job-3")
    jobs = wait_jobs(kube, {"job-2": "dws", "job-3": "dws"}, timeout=240)

    # Both requests hold their capacity at the same moment: 8 DWS nodes, 4 labelled for each.
    requests: dict[str, Obj] = {}
    for job in ("job-2", "job-3"):
        [name] = [r.name for r in jobs[job].requests if r.state == "Provisioned"]
        pr = kube.get(f"{PROVREQ}/namespaces/default/provisioningrequests/{name}")
        assert pr is not None and conditions(pr)["Provisioned"]["status"] == "True"
        assert job_of_request(kube, pr) == job
        requests[job] = pr
    rr = {job: pr["status"]["provisioningClassDetails"][webhook.RESIZE_REQUEST_DETAIL] for job, pr in requests.items()}
    assert rr == {job: webhook.resize_request_name("default", pr["metadata"]["name"]) for job, pr in requests.items()}
    dws_nodes = [
        n
        for n in kube.items("/api/v1/nodes")
        if n["metadata"]["labels"].get("cloud.google.com/gke-nodepool") in ("dws-pool", "dws-pool-2")
    ]
    nodes_of = {
        job: {n["metadata"]["name"] for n in dws_nodes if n["metadata"]["labels"].get(webhook.REQUEST_LABEL) == value}
        for job, value in rr.items()
    }
    assert len(dws_nodes) == 8 and {job: len(names) for job, names in nodes_of.items()} == {"job-2": 4, "job-3": 4}
    assert all(n["metadata"]["labels"].get("cloud.google.com/gke-provisioning") == "flex-start" for n in dws_nodes)

    for job, pr in requests.items():
        request = pr["metadata"]["name"]
        # Kueue tells the job's pods which request they consume (its podSetUpdates).
        wl = kube.get(f"{KUEUE}/namespaces/default/workloads/{owner(pr, 'Workload')}")
        assert wl is not None
        [check] = wl["status"]["admissionChecks"]
        [update] = check["podSetUpdates"]
        assert update["annotations"][CONSUME] == request

        def all_bound(request: str = request) -> bool:
            pods = bound_workers(kube, request)
            return len(pods) == 4 and all(p["spec"].get("nodeName") for p in pods)

        wait_until(all_bound, f"{job}'s 4 workers to be bound", 90)
        for pod in bound_workers(kube, request):
            meta, spec = pod["metadata"], pod["spec"]
            assert meta["labels"]["app.kubernetes.io/instance"] == job
            # What our webhook added at admission, as GKE's does: the selector of the pod's own request ...
            assert spec["nodeSelector"][webhook.REQUEST_LABEL] == rr[job], meta["name"]
            # It tolerates the queued-provisioning taint (the chart's toleration, or the webhook's).
            assert tolerates(spec["tolerations"], [QUEUED_TAINT]), spec["tolerations"]
            # ... so the real scheduler bound it to one of that request's nodes, never the other job's.
            assert spec["nodeName"] in nodes_of[job], (meta["name"], spec["nodeName"], nodes_of)
            others = set().union(*(names for other, names in nodes_of.items() if other != job))
            assert spec["nodeName"] not in others
    # The head and submitter consume no request: the webhook leaves them as the chart made them.
    for pod in kube.items(PODS, {"labelSelector": "app.kubernetes.io/instance in (job-2,job-3)"}):
        if CONSUME not in (pod["metadata"].get("annotations") or {}):
            assert webhook.REQUEST_LABEL not in (pod["spec"].get("nodeSelector") or {}), pod["metadata"]["name"]


def probe_pod(name: str, request: str | None) -> Obj:
    annotations = {CONSUME: request, webhook.CLASS_ANNOTATIONS[0]: webhook.QUEUED_CLASS} if request else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": annotations},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }


def create_probe(kube: Kube, name: str, request: str | None) -> Obj:
    try:
        return kube.create(PODS, probe_pod(name, request))
    finally:
        kube.delete(f"{PODS}/{name}")


def binds(kube: Kube, name: str) -> bool:
    """Whether a consuming pod comes back with a node selector (False while the API server refuses it)."""
    try:
        return bool(create_probe(kube, name, "probe-request")["spec"].get("nodeSelector"))
    except KubeError:
        return False


def test_the_pod_webhook_binds_only_while_the_simulator_runs_and_never_blocks_other_pods(local_stack: Path) -> None:
    kube = Kube(local_stack)
    stack = LocalStack()
    # The simulator registers it as it starts, before it provisions any request.
    wait_until(lambda: kube.get(CONFIG) is not None, "the simulator to register its pod webhook", 30)
    config = kube.get(CONFIG)
    assert config is not None
    [hook] = config["webhooks"]
    assert hook["failurePolicy"] == "Fail" and hook["clientConfig"]["url"].startswith("https://127.0.0.1:")

    wait_until(
        lambda: binds(kube, "binding-probe-a"),
        "the API server to call the webhook",
        30,
    )
    bound = create_probe(kube, "binding-probe-a", "probe-request")
    assert bound["spec"]["nodeSelector"] == {
        webhook.REQUEST_LABEL: webhook.resize_request_name("default", "probe-request")
    }
    plain = create_probe(kube, "binding-probe-b", None)
    assert not plain["spec"].get("nodeSelector")

    # Stopped cleanly (SIGTERM, as 'planb local down' does): the configuration goes with it, and a
    # consuming pod is created as it is (no webhook, no selector).
    assert stack.simulator.stop()
    assert kube.get(CONFIG) is None
    assert not create_probe(kube, "binding-probe-c", "probe-request")["spec"].get("nodeSelector")

    stack.up()  # the simulator again, and its webhook with a fresh CA
    wait_until(lambda: kube.get(CONFIG) is not None, "the webhook to be registered again", 30)
    wait_until(
        lambda: binds(kube, "binding-probe-d"),
        "the API server to call the new webhook",
        30,
    )

    # Killed without a chance to clean up: only consuming pods are refused (failurePolicy Fail), loudly;
    # every other pod is created as before; the next start serves it again.
    pid = stack.simulator.pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: stack.simulator.pid() is None, "the simulator to die")
    assert kube.get(CONFIG) is not None
    assert not create_probe(kube, "binding-probe-e", None)["spec"].get("nodeSelector")
    with pytest.raises(KubeError) as refused:
        create_probe(kube, "binding-probe-f", "probe-request")
    assert webhook.WEBHOOK_NAME in str(refused.value), refused.value
    stack.up()
    wait_until(
        lambda: binds(kube, "binding-probe-g"),
        "the restarted simulator to bind consuming pods again",
        30,
    )
