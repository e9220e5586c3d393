"""The chart's hardening, on real `helm template` output.

* Queues: the ClusterQueue serves only the namespaces it selects, plan B's quota is finite and sized
  from the profile, and `helm uninstall` keeps the queue objects so running Workloads do not break.
* Ray's head and workers: KubeRay token authentication, and a NetworkPolicy that admits only the
  release's own pods (plus the KubeRay operator on the dashboard port); NOTES say how to reach the
  dashboard with the token.
* Pods: images quoted, non-root, no privilege escalation, no capabilities, RuntimeDefault seccomp.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml

from planb import paths
from planb.build import golden
from planb.catalog import profiles, values
from tests.support.shared.chart.helm import YAML_LOADER
from tests.support.shared.chart.objects import by_kind, pod_specs, release_objects

Render = Callable[..., list[dict[str, Any]]]
CHART = golden.CHART_DIR
SELECTOR = {"app.kubernetes.io/name": "planb", "app.kubernetes.io/instance": "job-1"}
#: What queues mode makes: the queue objects and the ServiceAccount the LocalQueue namespace's jobs share.
QUEUE_KINDS = {
    "AdmissionCheck", "ClusterQueue", "LocalQueue", "ProvisioningRequestConfig", "ResourceFlavor", "ServiceAccount",
}  # fmt: skip


# -- Queues: who may submit, how much of plan B, and uninstall


def test_cluster_queue_serves_only_the_local_queue_namespace_by_default(template: Render) -> None:
    (cq,) = by_kind(template("--set", "mode=queues"), "ClusterQueue")
    assert cq["spec"]["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "default"}}
    moved = template("--set", "mode=queues", "--set", "queues.localQueue.namespace=team-a")
    (cq,) = by_kind(moved, "ClusterQueue")
    assert cq["spec"]["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "team-a"}}


def test_cluster_queue_namespace_selector_is_a_value(template: Render) -> None:
    access = r"queues.namespaceSelector.matchLabels.planb\.dev/queue-access=true"
    objs = template("--set", "mode=queues", "--set-string", access)
    (cq,) = by_kind(objs, "ClusterQueue")
    assert cq["spec"]["namespaceSelector"] == {"matchLabels": {"planb.dev/queue-access": "true"}}


@pytest.mark.parametrize("profile", values.SHIPPED)
def test_dws_quota_is_finite_and_one_slice_of_the_profile(template: Render, profile: str) -> None:
    objs = template("-f", str(CHART / "values" / f"{profile}.yaml"), "--set", "mode=queues")
    (cq,) = by_kind(objs, "ClusterQueue")
    (group,) = cq["spec"]["resourceGroups"]
    quotas = {f["name"]: {r["name"]: r["nominalQuota"] for r in f["resources"]} for f in group["flavors"]}
    prof = profiles.get(profile)
    # Plan B's pool holds one slice by default (planb_dws_slices: 1), the same size as plan A's.
    assert quotas["dws"][prof.resource_name] == prof.chips_per_slice
    assert quotas["dws"] == quotas["on-demand"]


def test_queue_objects_are_kept_by_helm_uninstall(template: Render) -> None:
    objs = release_objects(template("--set", "mode=queues"))  # the test hooks go once the test passes
    assert {o["kind"] for o in objs} == QUEUE_KINDS
    for obj in objs:
        assert obj["metadata"].get("annotations", {}).get("helm.sh/resource-policy") == "keep", obj["kind"]
    for obj in release_objects(template("--set", "mode=queues", "--set", "queues.keepOnUninstall=false")):
        assert "helm.sh/resource-policy" not in obj["metadata"].get("annotations", {}), obj["kind"]


def test_queues_notes_say_uninstall_keeps_the_queues(notes: Callable[..., str]) -> None:
    text = notes("--set", "mode=queues")
    assert "helm uninstall keeps" in text
    assert "kubectl delete clusterqueue cluster-queue" in text


# -- Ray token authentication and the NetworkPolicy


def test_rayjob_turns_on_ray_token_auth(template: Render) -> None:
    """KubeRay creates a Secret with a random token and sets RAY_AUTH_MODE/RAY_AUTH_TOKEN on every Ray container."""
    (job,) = by_kind(template(), "RayJob")
    cluster = job["spec"]["rayClusterSpec"]
    assert cluster["authOptions"] == {"mode": "token"}
    # KubeRay refuses token auth without spec.rayVersion >= 2.52.0; it must be the image's Ray.
    assert cluster["rayVersion"] == "2.53.0"
    images = {c["image"] for _, _, pod in pod_specs([job]) for c in pod["containers"]}
    assert images == {"rayproject/ray:2.53.0-py311"}


def test_ray_auth_can_be_turned_off(template: Render) -> None:
    """Disabled renders no authOptions at all, so an operator older than KubeRay 1.5.1 accepts the RayJob."""
    (job,) = by_kind(template("--set", "job.rayAuth=disabled"), "RayJob")
    assert "authOptions" not in job["spec"]["rayClusterSpec"]


def _schema_unknown_fields(obj: Any, schema: dict[str, Any], where: str) -> list[str]:
    """Paths in ``obj`` that the CRD's structural schema does not declare (the API server would prune them)."""
    if schema.get("x-kubernetes-preserve-unknown-fields") or schema.get("x-kubernetes-int-or-string"):
        return []
    if isinstance(obj, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        out = []
        for key, value in obj.items():
            if props is not None and key in props:
                out += _schema_unknown_fields(value, props[key], f"{where}.{key}")
            elif isinstance(extra, dict):
                out += _schema_unknown_fields(value, extra, f"{where}.{key}")
            elif props is not None or extra is not True:
                out.append(f"{where}.{key}")
        return out
    if isinstance(obj, list):
        return [
            p
            for i, item in enumerate(obj)
            for p in _schema_unknown_fields(item, schema.get("items", {}), f"{where}[{i}]")
        ]
    return []


@pytest.fixture(scope="module")
def rayjob_schema() -> dict[str, Any]:
    """The pinned KubeRay RayJob CRD's v1 schema, parsed once for the module (the file is over 1 MB); the tests only
    read it."""
    crd_file = paths.tools_dir() / "manifests" / "kuberay" / "crds" / "ray.io_rayjobs.yaml"
    if not crd_file.exists():
        pytest.skip(f"pinned KubeRay CRDs not built at {crd_file}: run `make tools`")
    crd = yaml.load(crd_file.read_text(), Loader=YAML_LOADER)
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("--set", "job.elastic=true", "--set", "dws.enabled=false"),
        ("-f", str(CHART / "values" / "gpu-a3-h100-8.yaml")),
    ],
    ids=["default", "elastic", "gpu"],
)
def test_every_rayjob_field_is_in_the_pinned_kuberay_crd(
    template: Render, rayjob_schema: dict[str, Any], args: tuple[str, ...]
) -> None:
    """The pinned CRD is the truth for field names (authOptions, rayVersion, securityContext...)."""
    (job,) = by_kind(template(*args), "RayJob")
    assert _schema_unknown_fields(job["spec"], rayjob_schema["properties"]["spec"], "spec") == []


def test_network_policy_admits_only_the_release_and_the_operator(template: Render) -> None:
    objs = template()
    (policy,) = by_kind(objs, "NetworkPolicy")
    assert policy["apiVersion"] == "networking.k8s.io/v1"
    assert policy["metadata"]["name"] == "job-1-ray"
    spec = policy["spec"]
    assert spec["podSelector"] == {"matchLabels": SELECTOR}
    assert spec["policyTypes"] == ["Ingress"]
    own, operator = spec["ingress"]
    # Every port (GCS, dashboard, client, Ray's worker ports) from this release's pods in this namespace only.
    assert own == {"from": [{"podSelector": {"matchLabels": SELECTOR}}]}
    # The KubeRay operator polls job status on the dashboard port, and nothing else; only its pods in its own
    # namespace, named by the label only the API server sets: a pod of another namespace that sets the
    # operator's label is not admitted.
    assert operator["ports"] == [{"protocol": "TCP", "port": 8265}]
    assert operator["from"] == [
        {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ray-system"}},
            "podSelector": {"matchLabels": {"app.kubernetes.io/name": "kuberay-operator"}},
        }
    ]
    assert all(peer.get("namespaceSelector") != {} for rule in spec["ingress"] for peer in rule["from"])
    # Head, workers and submitter carry the labels, so they are both protected and admitted.
    for which, meta, _ in pod_specs(objs):
        assert SELECTOR.items() <= meta["labels"].items(), which


def test_network_policy_takes_the_operators_namespace_and_further_peers(template: Render) -> None:
    moved = template("--set", "job.networkPolicy.kuberayNamespace=kuberay")
    (policy,) = by_kind(moved, "NetworkPolicy")
    selector = policy["spec"]["ingress"][1]["from"][0]["namespaceSelector"]
    assert selector == {"matchLabels": {"kubernetes.io/metadata.name": "kuberay"}}
    hosted = '[{"ipBlock": {"cidr": "172.16.0.0/28"}}]'
    (policy,) = by_kind(
        template(
            "--set", "job.networkPolicy.kuberayNamespace=", "--set-json", f"job.networkPolicy.dashboardFrom={hosted}"
        ),
        "NetworkPolicy",
    )
    assert policy["spec"]["ingress"][1]["from"] == [{"ipBlock": {"cidr": "172.16.0.0/28"}}]
    (policy,) = by_kind(template("--set", "job.networkPolicy.kuberayNamespace="), "NetworkPolicy")
    assert len(policy["spec"]["ingress"]) == 1  # no operator peer at all: only the release's own pods


def test_network_policy_is_per_release_and_optional(template: Render) -> None:
    (two,) = by_kind(template(release="job-2"), "NetworkPolicy")
    assert two["spec"]["podSelector"]["matchLabels"]["app.kubernetes.io/instance"] == "job-2"
    assert by_kind(template("--set", "job.networkPolicy.enabled=false"), "NetworkPolicy") == []
    assert by_kind(template("--set", "mode=queues"), "NetworkPolicy") == []


def test_notes_show_the_dashboard_and_its_token(notes: Callable[..., str]) -> None:
    text = notes()
    cluster = "$(kubectl get rayjob job-1 -n default -o jsonpath='{.status.rayClusterName}')"
    assert f"kubectl port-forward -n default service/{cluster}-head-svc 8265:8265" in text
    # KubeRay names the token's Secret after the RayCluster; key auth_token.
    assert f"kubectl get secret {cluster} -n default -o jsonpath='{{.data.auth_token}}' | base64 -d" in text
    assert "kubelet" in text  # why port-forward still works behind the NetworkPolicy


def test_notes_without_auth_have_no_token_step(notes: Callable[..., str]) -> None:
    text = notes("--set", "job.rayAuth=disabled")
    assert "kubectl port-forward" in text
    assert "auth_token" not in text


# -- Pods: quoted images and a restricted security context


def test_images_are_quoted(template: Render) -> None:
    """An image value YAML reads as a number stays a string in every container."""
    objs = template("--set-string", "job.image=2.53", "--set-string", "job.test.image=1e3")
    for which, _, pod in pod_specs(objs):
        for container in pod["containers"]:
            want = "1e3" if which == "helm test" else "2.53"
            assert container["image"] == want, which


@pytest.mark.parametrize("args", [(), ("-f", str(CHART / "values" / "gpu-a3-h100-8.yaml"))], ids=["tpu", "gpu"])
def test_pods_run_as_non_root_without_privileges(template: Render, args: tuple[str, ...]) -> None:
    for which, _, pod in pod_specs(template(*args)):
        ctx = pod["securityContext"]
        # The rayproject/ray images run as user ray, uid 1000, group users (100).
        assert (ctx["runAsNonRoot"], ctx["runAsUser"], ctx["runAsGroup"]) == (True, 1000, 100), which
        assert ctx["seccompProfile"] == {"type": "RuntimeDefault"}, which
        for container in pod["containers"]:
            sec = container["securityContext"]
            assert sec["allowPrivilegeEscalation"] is False, which
            assert sec["capabilities"] == {"drop": ["ALL"]}, which
            assert sec.get("privileged", False) is False, which
