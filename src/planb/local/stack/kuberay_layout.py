"""Where the local stack's KubeRay operator appears to run, as the cluster's API shows it: the two layouts the chart's
queues release tells apart (charts/planb/templates/_helpers.tpl, planb.kuberayDetect).

The operator itself is always the stack's host process (planb.local.stack.parts, the pinned KubeRay). What differs
is what a reader of the API sees:

* ``in-cluster`` (the default): a self-installed operator, a Deployment ``kuberay-operator`` in ``ray-system`` whose
  pods carry ``app.kubernetes.io/name: kuberay-operator`` and whose container, ``kuberay-operator``, runs
  ``quay.io/kuberay/operator:<tag>``, as KubeRay's Helm chart makes it (ray-project/kuberay
  helm-chart/kuberay-operator/templates/deployment.yaml: the pod template's labels, the container named after the
  chart, image repository:tag; ray-system is the namespace of Ray's KubeRay installation guide). It has 0 replicas,
  so KWOK makes no pod for it: the host process is the operator.
* ``hosted``: no operator Deployment at all, only the KubeRay CRDs, as with GKE's Ray Operator add-on ("GKE
  automatically installs and hosts the KubeRay operator",
  https://cloud.google.com/kubernetes-engine/docs/add-on/ray-on-gke/concepts/overview; Google does not say in
  which namespace, with which labels or at which KubeRay version it runs).

``PLANB_KUBERAY_LAYOUT`` picks one at `planb local up`; ``PLANB_KUBERAY_OPERATOR_VERSION`` the in-cluster image tag
(default: the pinned KUBERAY_VERSION), so an older operator can be shown without running one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from planb import paths
from planb.kube import Kube, Obj
from planb.local.stack.errors import LocalStackError

LAYOUTS = ("in-cluster", "hosted")
LAYOUT_ENV = "PLANB_KUBERAY_LAYOUT"
VERSION_ENV = "PLANB_KUBERAY_OPERATOR_VERSION"
NAMESPACE = "ray-system"
NAME = "kuberay-operator"
IMAGE = "quay.io/kuberay/operator"
DEPLOYMENTS = f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments"


class KubeRayLayoutError(LocalStackError):
    """An unknown layout or version was asked for."""


def from_env(env: Mapping[str, str] | None = None) -> tuple[str, str]:
    """The layout and the in-cluster operator's version tag the environment asks for."""
    env = os.environ if env is None else env
    layout = env.get(LAYOUT_ENV, "").strip() or LAYOUTS[0]
    if layout not in LAYOUTS:
        raise KubeRayLayoutError(f"{LAYOUT_ENV}={layout!r}: expected one of {', '.join(LAYOUTS)}")
    version = env.get(VERSION_ENV, "").strip() or paths.versions()["KUBERAY_VERSION"]
    if not version.startswith("v") or not all(part.isdigit() for part in version[1:].split(".")):
        raise KubeRayLayoutError(
            f"KubeRay operator version {version!r} ({VERSION_ENV}, or --version): expected a tag such as v1.6.2"
        )
    return layout, version


def deployment(version: str) -> Obj:
    """The operator Deployment KubeRay's Helm chart would make (its labels, container and image), at 0 replicas."""
    labels = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/instance": NAME}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": dict(labels)},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": {**labels, "app.kubernetes.io/component": NAME}},
                "spec": {"containers": [{"name": NAME, "image": f"{IMAGE}:{version}"}]},
            },
        },
    }


def apply(kube: Kube, layout: str, version: str) -> bool:
    """Make the API show `layout` (with `version` for in-cluster); True when something changed."""
    if layout not in LAYOUTS:
        raise KubeRayLayoutError(f"unknown KubeRay layout {layout!r}: expected one of {', '.join(LAYOUTS)}")
    path = f"{DEPLOYMENTS}/{NAME}"
    current = kube.get(path)
    if layout == "hosted":
        return kube.delete(path) if current is not None else False
    wanted = deployment(version)
    if current is not None:
        labels = current["spec"]["template"].get("metadata", {}).get("labels", {})
        if _image(current) == _image(wanted) and labels.get("app.kubernetes.io/name") == NAME:
            return False
        kube.merge_patch(path, {"spec": {"template": wanted["spec"]["template"]}})
        return True
    if kube.get(f"/api/v1/namespaces/{NAMESPACE}") is None:
        kube.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    kube.create(DEPLOYMENTS, wanted)
    return True


def _image(obj: Obj) -> str:
    containers = obj["spec"]["template"]["spec"].get("containers") or [{}]
    return str(containers[0].get("image", ""))
