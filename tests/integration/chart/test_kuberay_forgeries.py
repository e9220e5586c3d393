"""The record of the KubeRay operator cannot be forged by a job author (docs/security.md, "The KubeRay record").

A job author may create Deployments and ConfigMaps in the LocalQueue's namespace, but not in the namespace the admin
named for the operator (the queues release's queues.kuberay.namespace, site.yml's kuberay_namespace: ray-system).
Two forgeries from the job author's namespace, each of which took over every later job's NetworkPolicy before:

* a decoy Deployment whose pods carry KubeRay's label: it is not read, since the queues release looks for the
  operator only in the named namespace; beside the real operator it no longer fails the admin's install, and alone it
  is not recorded (the layout reads as hosted, whose jobs are refused without a peer);
* a squatted ConfigMap `planb-kuberay` with another release's Helm annotations: jobs read the record from the named
  namespace, not their own, so the squatter's `dashboardFrom` (0.0.0.0/0) reaches no NetworkPolicy.

And a ConfigMap `planb-kuberay` in the named namespace that no planb queues release made fails the install, naming
it. The API server is the folder's (conftest.py), the stack's in-cluster operator in ray-system; the releases are real
`helm install`s with the chart's defaults for where the record lives.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path

import pytest

from planb.build import golden
from planb.kube import Kube
from planb.local.stack import kuberay_layout
from tests.support.integration.kuberay_chart import operator_peers, queues_values, run
from tests.support.shared.chart.helm import Helm

pytestmark = [pytest.mark.tools]

CHART = str(golden.CHART_DIR)
RECORD = f"/api/v1/namespaces/{kuberay_layout.NAMESPACE}/configmaps/planb-kuberay"
REAL_PEER = {
    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": kuberay_layout.NAMESPACE}},
    "podSelector": {"matchLabels": {"app.kubernetes.io/name": "kuberay-operator"}},
}
ANYONE = {"ipBlock": {"cidr": "0.0.0.0/0"}}


@pytest.fixture
def cluster(api_server: Path, helm: Helm, request: pytest.FixtureRequest) -> Iterator[tuple[Kube, str]]:
    """The job author's namespace; afterwards the queues release (and its record) gone, the stack's layout again."""
    kube = Kube(api_server)
    ns = f"forgery-{request.node.name.split('_')[2]}"
    kube.delete(RECORD)  # another test's queues release's, whose record would be left to it
    kube.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    yield kube, ns
    helm("uninstall", "queues", "-n", ns, kubeconfig=str(api_server))
    kube.delete(RECORD)
    kube.delete(f"/apis/apps/v1/namespaces/{ns}/deployments/{kuberay_layout.NAME}")
    kuberay_layout.apply(kube, *kuberay_layout.from_env({}))


def test_a_decoy_operator_deployment_in_another_namespace_is_never_read(
    cluster: tuple[Kube, str], api_server: Path, helm: Helm
) -> None:
    kube, ns = cluster
    decoy = kuberay_layout.deployment("v1.6.2")
    decoy["metadata"]["namespace"] = ns
    kube.create(f"/apis/apps/v1/namespaces/{ns}/deployments", decoy)

    # Beside the real operator in ray-system: the admin's install goes through, and jobs admit the real operator only.
    code, err = run(helm, api_server, "install", "queues", CHART, "-n", ns, *queues_values(ns))
    assert code == 0, err
    code, err = run(helm, api_server, "install", "job-a", CHART, "-n", ns)
    assert code == 0, err
    assert operator_peers(kube, ns, "job-a") == [REAL_PEER]

    # The decoy alone: not recorded as the operator; the layout reads as hosted, and a job without a peer is refused.
    kuberay_layout.apply(kube, "hosted", "v1.6.2")
    code, err = run(helm, api_server, "upgrade", "queues", CHART, "-n", ns, *queues_values(ns))
    assert code == 0, err
    record = kube.get(RECORD)
    assert record is not None and record["data"]["layout"] == "hosted" and record["data"]["namespace"] == ""
    code, err = run(helm, api_server, "install", "job-b", CHART, "-n", ns)
    assert code != 0
    assert "the KubeRay operator runs outside this cluster's pods" in err
    assert kube.get(f"/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies/job-b-ray") is None


def test_a_squatted_record_in_the_job_namespace_reaches_no_network_policy(
    cluster: tuple[Kube, str], api_server: Path, helm: Helm
) -> None:
    kube, ns = cluster
    squat = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "planb-kuberay",
            "namespace": ns,
            "labels": {"app.kubernetes.io/managed-by": "Helm"},
            "annotations": {"meta.helm.sh/release-name": "other", "meta.helm.sh/release-namespace": ns},
        },
        "data": {
            "layout": "hosted", "namespace": "", "deployment": "", "version": "", "authOptions": "true",
            "dashboardFrom": '[{"ipBlock": {"cidr": "0.0.0.0/0"}}]',
        },
    }  # fmt: skip
    kube.create(f"/api/v1/namespaces/{ns}/configmaps", squat)

    code, err = run(helm, api_server, "install", "queues", CHART, "-n", ns, *queues_values(ns))
    assert code == 0, err
    code, err = run(helm, api_server, "install", "job-a", CHART, "-n", ns)
    assert code == 0, err
    peers = operator_peers(kube, ns, "job-a")
    assert ANYONE not in peers
    assert peers == [REAL_PEER]


def test_a_record_no_planb_queues_release_made_fails_the_install_naming_it(
    cluster: tuple[Kube, str], api_server: Path, helm: Helm
) -> None:
    kube, ns = cluster
    other = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "planb-kuberay",
            "namespace": kuberay_layout.NAMESPACE,
            "labels": {"app.kubernetes.io/managed-by": "Helm"},
            "annotations": {"meta.helm.sh/release-name": "other", "meta.helm.sh/release-namespace": "elsewhere"},
        },
        "data": {"layout": "hosted", "dashboardFrom": "[]"},
    }
    kube.create(f"/api/v1/namespaces/{kuberay_layout.NAMESPACE}/configmaps", copy.deepcopy(other))

    code, err = run(helm, api_server, "install", "queues", CHART, "-n", ns, *queues_values(ns))
    assert code != 0
    assert f"ConfigMap {kuberay_layout.NAMESPACE}/planb-kuberay" in err
    assert "Helm release elsewhere/other" in err
    assert kube.get(f"/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq-{ns}") is None
    found = kube.get(RECORD)
    assert found is not None and found["data"] == other["data"]
