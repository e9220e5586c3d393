"""The packaged chart (`make chart`: planb-<version>.tgz), not the chart folder, installed for real on a kube-apiserver.

The API server is the local stack's own build and configuration, started alone on free loopback ports with etcd
from the stack's etcd snapshot (planb.local.stack.snapshot), so the CRDs the chart's objects need (Kueue's, KubeRay's
RayJob, the ProvisioningRequest) are served from the start: no controller runs, so this is no e2e test (the e2e tier
runs the chart against the whole stack: tests/e2e/stack/test_chart_stack.py). `helm install` of the .tgz checks the
chart's kubeVersion against the server's version and sends every object; the API server validates each against its
schema (the CRDs' OpenAPI schemas for Kueue's and KubeRay's kinds) and stores it. The test then reads back what the API
server stored. The API server is the folder's (tests/integration/chart/conftest.py).
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from planb.build import chart_package
from planb.kube import Kube
from tests.support.shared.chart.helm import Helm

pytestmark = [pytest.mark.tools]

PROFILE = "tpu-v6e-4x4"
VALUES = chart_package.CHART_DIR / "values" / f"{PROFILE}.yaml"


def test_the_packaged_chart_installs_in_both_modes(api_server: Path, helm: Helm, tmp_path: Path) -> None:
    version = chart_package.version()
    tgz = chart_package.package(tmp_path / "dist")
    assert tgz.name == f"planb-{version}.tgz"
    with tarfile.open(tgz) as tar:
        members = set(tar.getnames())
        packaged_train = tar.extractfile("planb/files/train.py")
        assert packaged_train is not None
        train_py = packaged_train.read().decode()
    assert {"planb/Chart.yaml", "planb/values.schema.json", f"planb/values/{PROFILE}.yaml"} <= members
    assert "planb/README.md.gotmpl" not in members  # .helmignore

    kubeconfig = str(api_server)
    for release, extra in (("planb-queues", ("--set", "mode=queues")), ("job-1", ())):
        done = helm(
            "install", release, str(tgz), "-f", str(VALUES), "--namespace", "default", *extra, kubeconfig=kubeconfig
        )
        assert done.returncode == 0, done.stderr

    listed = helm("list", "--namespace", "default", "-o", "json", kubeconfig=kubeconfig)
    assert listed.returncode == 0, listed.stderr
    releases = {(r["name"], r["chart"], r["status"]) for r in json.loads(listed.stdout)}
    assert releases == {("planb-queues", f"planb-{version}", "deployed"), ("job-1", f"planb-{version}", "deployed")}

    kube = Kube(api_server)
    # Job mode: the RayJob as KubeRay's CRD schema took it, and the ConfigMap with the packaged script.
    rayjob = kube.get("/apis/ray.io/v1/namespaces/default/rayjobs/job-1")
    assert rayjob is not None
    labels = rayjob["metadata"]["labels"]
    assert labels["helm.sh/chart"] == f"planb-{version}"
    assert labels["planb.dev/profile"] == PROFILE
    assert labels["kueue.x-k8s.io/queue-name"] == "user-queue"
    (workers,) = rayjob["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    assert workers["numOfHosts"] == 4
    assert workers["template"]["spec"]["nodeSelector"]["cloud.google.com/gke-tpu-topology"] == "4x4"
    script = kube.get("/api/v1/namespaces/default/configmaps/job-1-train-script")
    assert script is not None and script["data"]["train.py"] == train_py

    # Queues mode: Kueue's objects as its v1beta2 CRD schemas took them.
    queue = kube.get("/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cluster-queue")
    assert queue is not None
    (group,) = queue["spec"]["resourceGroups"]
    assert [flavor["name"] for flavor in group["flavors"]] == ["default-cpu", "on-demand", "dws"]
    on_demand = kube.get("/apis/kueue.x-k8s.io/v1beta2/resourceflavors/on-demand")
    assert on_demand is not None
    assert on_demand["spec"]["nodeLabels"]["planb.dev/plan"] == "on-demand"
    assert on_demand["metadata"]["labels"]["planb.dev/profile"] == PROFILE
    assert kube.get("/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues/user-queue") is not None
