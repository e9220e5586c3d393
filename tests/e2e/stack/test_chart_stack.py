"""The chart against the real local stack: API server, CRD schemas, Kueue's webhooks and controller."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from planb.build import golden
from tests.support.e2e.stack import Kubectl, get_json
from tests.support.e2e.uninstall import uninstall
from tests.support.e2e.waits import wait_until
from tests.support.shared.chart.helm import Helm

CHART = str(golden.CHART_DIR)


def queues_args(suffix: str, ns: str, keep: bool = False) -> tuple[str, ...]:
    """Queue objects of one test, named apart so it never touches queues others installed.

    The ClusterQueue serves the LocalQueue's namespace ``ns`` (the chart's default selector). Unless
    ``keep``, `helm uninstall` removes the queue objects, so that tests leave no cluster-scoped objects.
    """
    return (
        "--set", "mode=queues",
        "--set", f"queues.keepOnUninstall={str(keep).lower()}",
        "--set", f"queues.clusterQueue=planb-cq-{suffix}",
        "--set", f"queues.flavors.cpu=planb-cpu-{suffix}",
        "--set", f"queues.flavors.onDemand=planb-on-demand-{suffix}",
        "--set", f"queues.flavors.dws=planb-dws-{suffix}",
        "--set", "queues.localQueue.name=planb-lq",
        "--set", f"queues.localQueue.namespace={ns}",
        "--set", f"dws.admissionCheck=planb-dws-prov-{suffix}",
        "--set", f"dws.provisioningRequestConfig=planb-dws-config-{suffix}",
        # site.yml's queues release made default's shared job account (planb-job) already: a second makes none.
        *(("--set", "queues.jobServiceAccount=") if ns == "default" else ()),
    )  # fmt: skip


JOB = ("--set", "job.queueName=planb-lq")


@pytest.mark.parametrize(
    "args",
    [
        (),
        queues_args("dry", "default"),
        ("-f", str(golden.CHART_DIR / "values" / "gpu-a3-h100-8.yaml")),
        ("-f", str(golden.CHART_DIR / "values" / "gpu-a3-h100-8.yaml"), *queues_args("dry", "default")),
        (*queues_args("dry", "default"), "--set", "dws.enabled=false"),
        ("--set", "job.elastic=true", "--set", "dws.enabled=false"),
    ],
    ids=["job", "queues", "job-gpu", "queues-gpu", "queues-plan-a-only", "job-elastic"],
)
def test_dry_run_server_accepts_every_object(helm: Helm, kubectl: Kubectl, args: tuple[str, ...]) -> None:
    """kubectl apply --dry-run=server: CRD schemas, admission (Kueue's webhooks included), no change. What `helm
    install` sends: the test hooks are `helm test`'s (the queues test pod's ServiceAccount is one of them, which a dry
    run never creates), and tests/e2e/topologies/test_helm_test.py creates them for real."""
    done = helm("template", "job-1", CHART, "--skip-tests", *args)
    assert done.returncode == 0, done.stderr
    applied = kubectl("apply", "--dry-run=server", "-n", "default", "-f", "-", stdin=done.stdout, check=False)
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.count("(server dry run)") == done.stdout.count("\nkind: ")


@pytest.fixture()
def suffix() -> str:
    return f"{time.time_ns() % 10**9:09d}"


@pytest.fixture()
def ns(kubectl: Kubectl, suffix: str) -> Iterator[str]:
    name = f"planb-chart-{suffix}"
    kubectl("create", "namespace", name)
    yield name
    kubectl("delete", "namespace", name, "--wait=false", check=False)


@pytest.fixture()
def installed(helm: Helm, ns: str, local_stack: Path) -> Iterator[Callable[..., None]]:
    """helm install into the test namespace; everything installed is uninstalled afterwards."""
    kubeconfig = str(local_stack)
    releases: list[str] = []

    def install(release: str, *args: str) -> None:
        done = helm("install", release, CHART, "-n", ns, *args, kubeconfig=kubeconfig)
        assert done.returncode == 0, done.stderr
        releases.append(release)

    yield install
    for release in reversed(releases):
        uninstall(Path(kubeconfig), release, namespace=ns, check=False)


def workloads(kubectl: Kubectl, ns: str) -> dict[str, dict[str, Any]]:
    """Workloads of the test namespace by the name of the RayJob that owns them."""
    out = {}
    for wl in get_json(kubectl, "workloads.kueue.x-k8s.io", "-n", ns)["items"]:
        owners = [o["name"] for o in wl["metadata"].get("ownerReferences", []) if o["kind"] == "RayJob"]
        if owners:
            out[owners[0]] = wl
    return out


def test_two_jobs_make_two_workloads_and_the_second_falls_back_to_dws(
    installed: Callable[..., None], helm: Helm, kubectl: Kubectl, local_stack: Path, ns: str, suffix: str
) -> None:
    """Each job release makes one Workload; plan A's quota (one slice) goes to job-1, and Kueue assigns job-2's
    workers the dws flavor; uninstalling job-1 removes its objects only."""
    installed("planb-queues", *queues_args(suffix, ns))
    # Both jobs run as the account the queues release made for the namespace's jobs to share.
    installed("job-1", *JOB, "--set", "job.serviceAccountName=planb-job")
    wait_until(
        lambda: "admission" in workloads(kubectl, ns).get("job-1", {}).get("status", {}), "job-1 quota", timeout=90
    )
    installed("job-2", *JOB, "--set", "job.serviceAccountName=planb-job")
    wait_until(
        lambda: "admission" in workloads(kubectl, ns).get("job-2", {}).get("status", {}), "job-2 quota", timeout=90
    )
    assert sorted(workloads(kubectl, ns)) == ["job-1", "job-2"]
    for name, wl in workloads(kubectl, ns).items():
        pod_sets = {ps["name"]: ps["count"] for ps in wl["spec"]["podSets"]}
        # workers: replicas (1) x numOfHosts (4) of the seed's v6e 4x4 slice.
        assert pod_sets == {"head": 1, "tpu-group": 4, "submitter": 1}, name
        assert wl["spec"]["queueName"] == "planb-lq", name

    def worker_flavor(job: str) -> str:
        admission = workloads(kubectl, ns)[job]["status"]["admission"]
        (assignment,) = [a for a in admission["podSetAssignments"] if a["name"] == "tpu-group"]
        return str(assignment["flavors"]["google.com/tpu"])

    assert (worker_flavor("job-1"), worker_flavor("job-2")) == (f"planb-on-demand-{suffix}", f"planb-dws-{suffix}")

    # Uninstalling job-1 removes job-1's objects only.
    done = uninstall(local_stack, "job-1", namespace=ns, check=False)
    assert done.returncode == 0, done.stderr
    rayjobs = [o["metadata"]["name"] for o in get_json(kubectl, "rayjobs.ray.io", "-n", ns)["items"]]
    maps = [o["metadata"]["name"] for o in get_json(kubectl, "configmaps", "-n", ns)["items"]]
    assert rayjobs == ["job-2"]
    assert "job-1-train-script" not in maps and "job-2-train-script" in maps
    assert kubectl("get", "clusterqueue", f"planb-cq-{suffix}", check=False).returncode == 0
    assert kubectl("get", "localqueue", "planb-lq", "-n", ns, check=False).returncode == 0
    # The shared account stays for job-2: job-1's release never owned it.
    assert kubectl("get", "serviceaccount", "planb-job", "-n", ns, check=False).returncode == 0


def test_uninstall_keeps_the_queues_for_running_workloads(
    helm: Helm, kubectl: Kubectl, local_stack: Path, ns: str, suffix: str
) -> None:
    """helm.sh/resource-policy: keep: `helm uninstall` of the queues leaves every queue object."""
    kubeconfig = str(local_stack)
    cluster_scoped = [
        ("clusterqueue", f"planb-cq-{suffix}"),
        ("resourceflavor", f"planb-cpu-{suffix}"),
        ("resourceflavor", f"planb-on-demand-{suffix}"),
        ("resourceflavor", f"planb-dws-{suffix}"),
        ("admissioncheck", f"planb-dws-prov-{suffix}"),
        ("provisioningrequestconfig", f"planb-dws-config-{suffix}"),
    ]
    done = helm("install", "planb-queues", CHART, "-n", ns, *queues_args(suffix, ns, keep=True), kubeconfig=kubeconfig)
    assert done.returncode == 0, done.stderr
    try:
        done = uninstall(local_stack, "planb-queues", namespace=ns, check=False)
        assert done.returncode == 0, done.stderr
        assert "These resources were kept due to the resource policy" in done.stdout + done.stderr
        for kind, name in [*cluster_scoped, ("localqueue", "planb-lq")]:
            assert kubectl("get", kind, name, "-n", ns, check=False).returncode == 0, f"{kind}/{name} was deleted"
    finally:
        kubectl("delete", "localqueue", "planb-lq", "-n", ns, "--ignore-not-found", check=False)
        for kind, name in cluster_scoped:
            kubectl("delete", kind, name, "--ignore-not-found", "--wait=false", check=False)


def test_namespace_outside_the_selector_cannot_use_the_queue(
    installed: Callable[..., None], helm: Helm, kubectl: Kubectl, local_stack: Path, ns: str, suffix: str
) -> None:
    """A LocalQueue in a namespace the ClusterQueue does not select gets no quota."""
    installed("planb-queues", *queues_args(suffix, ns))
    other = f"planb-other-{suffix}"
    kubectl("create", "namespace", other)
    try:
        local_queue = {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "planb-lq", "namespace": other},
            "spec": {"clusterQueue": f"planb-cq-{suffix}"},
        }
        kubectl("apply", "-f", "-", stdin=json.dumps(local_queue))
        done = helm("install", "job-1", CHART, "-n", other, *JOB, kubeconfig=str(local_stack))
        assert done.returncode == 0, done.stderr

        def refused() -> bool:
            for wl in workloads(kubectl, other).values():
                for cond in wl.get("status", {}).get("conditions", []):
                    if cond["type"] == "QuotaReserved" and "doesn't match ClusterQueue selector" in cond["message"]:
                        return True
            return False

        wait_until(refused, "job-1's Workload refused by the ClusterQueue's namespace selector", timeout=90)
        assert all("admission" not in wl.get("status", {}) for wl in workloads(kubectl, other).values())
    finally:
        uninstall(local_stack, "job-1", namespace=other, check=False)
        kubectl("delete", "namespace", other, "--wait=false", check=False)
