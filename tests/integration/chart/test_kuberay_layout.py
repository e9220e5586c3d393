"""The Ray add-on, decided: the queues release reads where the KubeRay operator runs and at which
version, and a job release sets its NetworkPolicy's operator peer and checks `job.rayAuth` against that record, or is
refused naming the fix, before anything of it is created.

The API server is the folder's (conftest.py), a real kube-apiserver with the stack's KubeRay CRDs (v1.6.2, whose
RayJob schema has authOptions). Each layout is put there by the local stack's own code
(planb.local.stack.kuberay_layout, what `planb local up` or `planb local kuberay-layout` does): `in-cluster`, a
self-installed operator's Deployment in ray-system; `hosted`, only the CRDs, as GKE's Ray Operator add-on shows.
Releases are real `helm install`/`upgrade`s, so Helm's lookup reads the cluster; each test has its own namespace and
cluster-scoped names, and leaves the stack's default layout behind.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planb.build import golden
from planb.kube import Kube
from planb.local.stack import kuberay_layout
from tests.support.integration.kuberay_chart import operator_peers, queues_values, run
from tests.support.shared.chart.helm import Helm

pytestmark = [pytest.mark.tools]

CHART = str(golden.CHART_DIR)
PEER = {"ipBlock": {"cidr": "127.0.0.1/32"}}


@pytest.fixture
def cluster(api_server: Path, helm: Helm, request: pytest.FixtureRequest) -> Iterator[tuple[Kube, str]]:
    """A namespace of the test's own; afterwards its queues releases gone (the record in ray-system is the cluster's
    one), and the stack's default layout again."""
    kube = Kube(api_server)
    ns = "layout-in-cluster" if "in_cluster" in request.node.name else "layout-hosted"
    kube.delete(f"/api/v1/namespaces/{kuberay_layout.NAMESPACE}/configmaps/planb-kuberay")  # another test's release's
    kube.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    yield kube, ns
    for release in ("queues-2", "queues"):
        helm("uninstall", release, "-n", ns, kubeconfig=str(api_server))
    kube.delete(f"{kuberay_layout.DEPLOYMENTS}/second-operator")
    kuberay_layout.apply(kube, *kuberay_layout.from_env({}))


def record(kube: Kube) -> dict[str, Any]:
    """The record, kept in the operator's namespace (queues.kuberay.namespace), where job authors cannot write."""
    found = kube.get(f"/api/v1/namespaces/{kuberay_layout.NAMESPACE}/configmaps/planb-kuberay")
    assert found is not None, f"no planb-kuberay ConfigMap in {kuberay_layout.NAMESPACE}"
    return dict(found["data"])


def test_in_cluster_operator_is_the_peer_and_an_older_one_refuses_token_auth(
    cluster: tuple[Kube, str], api_server: Path, helm: Helm
) -> None:
    kube, ns = cluster
    kuberay_layout.apply(kube, "in-cluster", "v1.6.2")
    code, err = run(helm, api_server, "install", "queues", CHART, "-n", ns, *queues_values(ns))
    assert code == 0, err
    assert record(kube) == {
        "layout": "in-cluster",
        "namespace": "ray-system",
        "deployment": "kuberay-operator",
        "version": "1.6.2",
        "authOptions": "true",
        "dashboardFrom": "[]",
    }
    # A second queues release in the namespace (one per accelerator): installed; the record stays the first's.
    second_queues = (
        "--set", f"queues.clusterQueue=cq2-{ns}", "--set", f"queues.flavors.cpu=cpu2-{ns}",
        "--set", f"queues.flavors.onDemand=on-demand2-{ns}", "--set", "queues.localQueue.name=second-queue",
    )  # fmt: skip
    code, err = run(helm, api_server, "install", "queues-2", CHART, "-n", ns, *queues_values(ns), *second_queues)
    assert code == 0, err
    made = kube.get(f"/api/v1/namespaces/{kuberay_layout.NAMESPACE}/configmaps/planb-kuberay")
    assert made is not None and made["metadata"]["annotations"]["meta.helm.sh/release-name"] == "queues"
    # The recorded namespace wins over the value (a job copied from a cluster whose operator ran elsewhere).
    code, err = run(
        helm, api_server, "install", "job-a", CHART, "-n", ns, "--set", "job.networkPolicy.kuberayNamespace=kuberay"
    )
    assert code == 0, err
    assert operator_peers(kube, ns, "job-a") == [
        {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ray-system"}},
            "podSelector": {"matchLabels": {"app.kubernetes.io/name": "kuberay-operator"}},
        }
    ]

    # An operator before authOptions (KubeRay 1.4.2): the queues upgrade records it, token auth is refused.
    kuberay_layout.apply(kube, "in-cluster", "v1.4.2")
    assert run(helm, api_server, "upgrade", "queues", CHART, "-n", ns, *queues_values(ns))[0] == 0
    assert record(kube)["version"] == "1.4.2"
    code, err = run(helm, api_server, "install", "job-b", CHART, "-n", ns)
    assert code != 0
    assert "job.rayAuth=token needs KubeRay 1.5.1 or later" in err
    assert "the in-cluster operator ray-system/kuberay-operator is KubeRay 1.4.2" in err
    assert "set job.rayAuth=disabled" in err
    assert kube.get(f"/apis/ray.io/v1/namespaces/{ns}/rayjobs/job-b") is None
    assert run(helm, api_server, "install", "job-b", CHART, "-n", ns, "--set", "job.rayAuth=disabled")[0] == 0

    # A second operator Deployment: the queues release refuses, naming both.
    second = kuberay_layout.deployment("v1.6.2")
    second["metadata"]["name"] = "second-operator"
    kube.create(kuberay_layout.DEPLOYMENTS, second)
    code, err = run(helm, api_server, "upgrade", "queues", CHART, "-n", ns, *queues_values(ns))
    assert code != 0
    assert "2 KubeRay operator Deployments" in err
    assert "ray-system/kuberay-operator, ray-system/second-operator" in err


def test_hosted_operator_needs_a_peer_given_and_token_auth_follows_the_served_schema(
    cluster: tuple[Kube, str], api_server: Path, helm: Helm
) -> None:
    kube, ns = cluster
    kuberay_layout.apply(kube, "hosted", "v1.6.2")
    code, err = run(helm, api_server, "install", "queues", CHART, "-n", ns, *queues_values(ns))
    assert code == 0, err
    assert record(kube) == {
        "layout": "hosted",
        "namespace": "",
        "deployment": "",
        "version": "",
        "authOptions": "true",
        "dashboardFrom": "[]",
    }
    # No namespace admits an operator outside the pods, and none was given: refused before anything is made.
    code, err = run(helm, api_server, "install", "job-a", CHART, "-n", ns)
    assert code != 0
    assert "the KubeRay operator runs outside this cluster's pods" in err
    assert "queues.kuberay.dashboardFrom" in err and "job.networkPolicy.dashboardFrom" in err
    assert kube.get(f"/apis/ray.io/v1/namespaces/{ns}/rayjobs/job-a") is None

    # A peer given for this job: no namespace peer, the ipBlock; token auth stays on (the schema has authOptions).
    peer = json.dumps([PEER])
    code, err = run(
        helm, api_server, "install", "job-a", CHART, "-n", ns, "--set-json", f"job.networkPolicy.dashboardFrom={peer}"
    )
    assert code == 0, err
    assert operator_peers(kube, ns, "job-a") == [PEER]
    rayjob = kube.get(f"/apis/ray.io/v1/namespaces/{ns}/rayjobs/job-a")
    assert rayjob is not None and rayjob["spec"]["rayClusterSpec"]["authOptions"] == {"mode": "token"}

    # The peer recorded once by the queues release serves every job.
    code, err = run(
        helm, api_server, "upgrade", "queues", CHART, "-n", ns, *queues_values(ns),
        "--set-json", f"queues.kuberay.dashboardFrom={peer}",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(record(kube)["dashboardFrom"]) == [PEER]
    code, err = run(helm, api_server, "install", "job-b", CHART, "-n", ns)
    assert code == 0, err
    assert operator_peers(kube, ns, "job-b") == [PEER]
