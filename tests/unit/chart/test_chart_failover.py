"""The queues chart's failover controller: off by default; when on, a stock image pinned by digest that
installs nothing, namespaced rights in the LocalQueue namespaces, and only its metrics port open."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from planb.build import chart_files, golden
from tests.support.shared.chart.helm import Helm

Render = Callable[..., list[dict[str, Any]]]
Obj = dict[str, Any]

ON = ("--set", "mode=queues", "--set", "failover.afterMinutes=10")
LOCAL = ("--set", "mode=queues", "--set-json", "failover.afterMinutes=0.5", "--set", "failover.inCluster=false")
NAME = f"{golden.RELEASE}-failover"
#: The controller's own namespace by default (values.yaml failover.namespace).
OWN = "planb-failover"
#: What the controller's calls need (planb.failover.controller), and nothing else.
RULES = [
    {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"], "verbs": ["get", "list", "patch"]},
    {"apiGroups": ["ray.io"], "resources": ["rayjobs"], "verbs": ["get", "list", "patch"]},
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]},
]


def mine(objs: list[Obj]) -> list[Obj]:
    return [o for o in objs if o["metadata"]["name"] == NAME]


def kinds(objs: list[Obj]) -> list[tuple[str, str]]:
    return sorted((o["kind"], o["metadata"].get("namespace", "")) for o in objs)


def one(objs: list[Obj], kind: str) -> Obj:
    (found,) = [o for o in objs if o["kind"] == kind]
    return found


def test_off_by_default(template: Render) -> None:
    assert mine(template("--set", "mode=queues")) == []


def test_on_renders_namespaced_rights_a_digest_pinned_image_and_no_install(template: Render, helm: Helm) -> None:
    objs = mine(template(*ON))
    # The controller, its code and its identity in a namespace of their own; its rights in the LocalQueue's.
    assert kinds(objs) == [
        ("ConfigMap", OWN),
        ("Deployment", OWN),
        ("NetworkPolicy", OWN),
        ("Role", "default"),
        ("RoleBinding", "default"),
        ("Service", OWN),
        ("ServiceAccount", OWN),
    ]
    assert one(objs, "Role")["rules"] == RULES
    binding = one(objs, "RoleBinding")
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": NAME}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": NAME, "namespace": OWN}]
    pod = one(objs, "Deployment")["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == NAME
    (container,) = pod["containers"]
    assert re.fullmatch(r"python:3\.11-slim@sha256:[0-9a-f]{64}", container["image"]), container["image"]
    assert container["command"] == ["python", "-m", "planb.failover"]
    assert container["args"] == [
        "--after-seconds=600",
        "--cluster-queues=cluster-queue",
        "--namespaces=default",
        "--plan-a-flavor=on-demand",
        "--plan-a-label=planb.dev/plan=on-demand",
        "--metrics-host=0.0.0.0",
        "--metrics-port=9090",
    ]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    rendered = helm("template", golden.RELEASE, str(golden.CHART_DIR), *ON).stdout
    assert "pip install" not in rendered
    assert "sh -c" not in rendered and '"sh"' not in rendered


def test_the_config_map_carries_the_package_as_python_m_needs_it(template: Render) -> None:
    objs = mine(template(*ON))
    data = one(objs, "ConfigMap")["data"]
    assert data == {name: (chart_files.FAILOVER_PACKAGE / name).read_text() for name in chart_files.FAILOVER_MODULES}
    volume = one(objs, "Deployment")["spec"]["template"]["spec"]["volumes"][0]["configMap"]
    assert volume["items"] == [{"key": n, "path": f"planb/failover/{n}"} for n in sorted(chart_files.FAILOVER_MODULES)]


def test_every_local_queue_namespace_gets_its_own_role(template: Render) -> None:
    objs = mine(template(*ON, "--set", "queues.localQueue.namespace=team-a", "--set-json",
                         'failover.extraNamespaces=["team-b"]'))  # fmt: skip
    assert [o["metadata"]["namespace"] for o in objs if o["kind"] == "Role"] == ["team-a", "team-b"]
    assert [o["metadata"]["namespace"] for o in objs if o["kind"] == "RoleBinding"] == ["team-a", "team-b"]
    assert {o["kind"] for o in objs}.isdisjoint({"ClusterRole", "ClusterRoleBinding"})
    args = one(objs, "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--namespaces=team-a,team-b" in args


def test_cluster_wide_rights_only_when_asked(template: Render) -> None:
    objs = mine(template(*ON, "--set", "failover.clusterWide=true"))
    assert [k for k, _ in kinds(objs)] == [
        "ClusterRole",
        "ClusterRoleBinding",
        "ConfigMap",
        "Deployment",
        "NetworkPolicy",
        "Service",
        "ServiceAccount",
    ]
    assert one(objs, "ClusterRole")["rules"] == RULES
    args = one(objs, "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert [a for a in args if a.startswith("--namespaces")] == []


def test_the_network_policy_admits_only_the_metrics_port(template: Render) -> None:
    policy = one(mine(template(*ON)), "NetworkPolicy")["spec"]
    assert policy["podSelector"]["matchLabels"]["app.kubernetes.io/name"] == "planb-failover"
    assert policy["policyTypes"] == ["Ingress"]
    assert policy["ingress"] == [{"ports": [{"protocol": "TCP", "port": 9090}]}]
    scrapers = [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}]
    limited = one(mine(template(*ON, "--set-json", f"failover.networkPolicy.metricsFrom={scrapers}".replace("'", '"'))),
                  "NetworkPolicy")  # fmt: skip
    assert limited["spec"]["ingress"] == [{"ports": [{"protocol": "TCP", "port": 9090}], "from": scrapers}]
    off = mine(template(*ON, "--set", "failover.networkPolicy.enabled=false"))
    assert "NetworkPolicy" not in {o["kind"] for o in off}


def test_local_mode_renders_the_rights_but_no_pod(template: Render) -> None:
    """`planb local failover` runs the controller on the host with this ServiceAccount's token, and with the
    in-cluster rights, no more (the Ray head stand-in's copy of a ready state uses the admin's kubeconfig)."""
    objs = mine(template(*LOCAL))
    assert kinds(objs) == [("Role", "default"), ("RoleBinding", "default"), ("ServiceAccount", OWN)]
    assert one(objs, "Role")["rules"] == RULES


def test_the_controllers_namespace_is_made_and_kept_and_no_local_queue_is_in_it(template: Render) -> None:
    objs = template(*ON)
    (namespace,) = [o for o in objs if o["kind"] == "Namespace"]
    assert namespace["metadata"]["name"] == OWN
    assert namespace["metadata"]["annotations"] == {"helm.sh/resource-policy": "keep"}
    (queue,) = [o for o in objs if o["kind"] == "LocalQueue"]
    assert queue["metadata"]["namespace"] != one(mine(objs), "Deployment")["metadata"]["namespace"]
    # A namespace planb does not own is never made (nor deleted): the release's, or one that must exist already.
    for extra in (("--set", "failover.namespace="), ("--set", "failover.createNamespace=false")):
        assert [o for o in template(*ON, *extra) if o["kind"] == "Namespace"] == []


@pytest.mark.parametrize(
    "wider",
    [("--set", "failover.clusterWide=true"), ("--set-json", 'failover.extraNamespaces=["team-b"]')],
    ids=["clusterWide", "extraNamespaces"],
)
@pytest.mark.parametrize("shared", ["", "default"], ids=["release-namespace", "local-queue-namespace"])
def test_wider_rights_are_refused_while_the_controller_shares_a_local_queue_namespace(
    helm: Helm, wider: tuple[str, str], shared: str
) -> None:
    done = helm("template", golden.RELEASE, str(golden.CHART_DIR), *ON, "--set", f"failover.namespace={shared}", *wider)
    assert done.returncode != 0
    assert "planb's policy: the controller gets a namespace of its own" in done.stderr, done.stderr
    assert "holds a LocalQueue (default" in done.stderr and "failover.namespace" in done.stderr, done.stderr
    # The same rights from a namespace of its own are rendered.
    assert helm("template", golden.RELEASE, str(golden.CHART_DIR), *ON, *wider).returncode == 0


def test_a_job_naming_the_controllers_service_account_is_refused(helm: Helm) -> None:
    done = helm("template", "job-1", str(golden.CHART_DIR), "--set", f"job.serviceAccountName={NAME}")
    assert done.returncode != 0
    assert f"job.serviceAccountName={NAME} names the failover controller's ServiceAccount" in done.stderr, done.stderr
    assert helm("template", "job-1", str(golden.CHART_DIR), "--set", "job.serviceAccountName=trainer").returncode == 0


SCHEMA = "values don't meet the specifications of the schema(s)"


@pytest.mark.parametrize(
    ("value", "where"),
    [
        pytest.param("failover.image=python:3.11-slim", "/failover/image", id="image-without-digest"),
        pytest.param("failover.image=python@sha256:abc", "/failover/image", id="short-digest"),
        pytest.param("failover.image=python:3.11 --x@sha256:" + "a" * 64, "/failover/image", id="image-with-space"),
        pytest.param("failover.namespace=Kube System", "/failover/namespace", id="namespace"),
        pytest.param('failover.extraNamespaces=["a,b"]', "/failover/extraNamespaces/0", id="extra-namespace-comma"),
        pytest.param("failover.metricsPort=0", "/failover/metricsPort", id="metrics-port"),
        pytest.param("failover.kubernetesClient=kubernetes", "additional properties", id="no-client-to-install"),
    ],
)
def test_values_that_reach_the_command_line_are_checked(helm: Helm, value: str, where: str) -> None:
    flag = "--set-json" if value.endswith("]") else "--set"
    done = helm("template", golden.RELEASE, str(golden.CHART_DIR), *ON, flag, value)
    assert done.returncode != 0
    assert SCHEMA in done.stderr and where in done.stderr, done.stderr
