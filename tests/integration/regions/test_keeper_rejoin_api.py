"""The regions keeper's rejoin on a real kube-apiserver: a quarantined region comes
back only once the RayCluster of a stale RayJob is gone, also for a keeper restarted after it deleted that RayJob; a
RayCluster of the same name made for another RayJob does not keep it out; an object stuck on a finalizer is said and
``planb status`` shows what the region waits for.

One throwaway etcd and kube-apiserver from the stack's snapshot (KubeRay's and Kueue's CRDs in it) is both the
manager and region ``a``, which the keeper reaches as it reaches any region: through the MultiKueueCluster's Secret,
a token of a ServiceAccount with the region token's rights (collections/ansible_collections/planb/gke/roles/multikueue/
tasks/worker.yml). No kube-controller-manager runs, so no garbage collector: what KubeRay's RayCluster outlives is
left for the test to delete, as the collector would. Run it under ``flock /tmp/planb-e2e.lock``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb.kube import Kube
from planb.regions.access import kueue_objects as ko
from planb.regions.keeper import leftovers, quarantine
from planb.regions.keeper import origin as origin_mod
from planb.regions.keeper.tick import Keeper, KeeperSettings
from planb.status import gather
from planb.status import regions as status_regions

pytestmark = [pytest.mark.tools]

Obj = dict[str, Any]
KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
RAY = "/apis/ray.io/v1/namespaces/default"
ORIGIN = "planb-mgr"
STATE = "/api/v1/namespaces/kueue-system/configmaps/planb-regions-keeper"
CONFIG = f"{KUEUE}/multikueueconfigs/planb-regions"
WORKLOAD = "rayjob-job-1-abcde"
SINCE = "2026-12-05T16:00:00Z"
#: The region token's rights, as the multikueue role grants them (reads cluster-wide, writes in the job's namespace).
RIGHTS = [
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "planb-multikueue"},
        "rules": [
            {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": ["ray.io"], "resources": ["rayjobs", "rayclusters"], "verbs": ["get", "list", "watch"]},
        ],
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "planb-multikueue", "namespace": "default"},
        "rules": [
            {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"], "verbs": ["delete"]},
            {"apiGroups": ["ray.io"], "resources": ["rayjobs"], "verbs": ["create", "delete"]},
        ],
    },
]


def binding(kind: str, namespace: str = "") -> Obj:
    meta: Obj = {"name": "planb-multikueue", **({"namespace": namespace} if namespace else {})}
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": f"{kind}Binding",
        "metadata": meta,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": "planb-multikueue"},
        "subjects": [{"kind": "ServiceAccount", "name": "planb-multikueue", "namespace": "kueue-system"}],
    }


def active(kube: Kube, name: str) -> None:
    kube.create(
        f"{KUEUE}/multikueueclusters",
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "MultiKueueCluster",
            "metadata": {"name": name},
            "spec": {"clusterSource": {"kubeConfig": {"locationType": "Secret", "location": f"{name}-multikueue"}}},
        },
    )
    condition = {"type": "Active", "status": "True", "reason": "Active", "message": "", "lastTransitionTime": SINCE}
    kube.merge_patch(f"{KUEUE}/multikueueclusters/{name}/status", {"status": {"conditions": [condition]}})


def region_secret(kube: Kube, kubeconfig: Path, name: str) -> None:
    """The Secret the multikueue role writes: the server, its CA inline, a token of the region ServiceAccount."""
    admin = yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]
    answer = kube.create(
        "/api/v1/namespaces/kueue-system/serviceaccounts/planb-multikueue/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}},
    )
    ca = base64.b64encode(Path(admin["certificate-authority"]).read_bytes()).decode()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": admin["server"], "certificate-authority-data": ca}}],
        "users": [{"name": name, "user": {"token": answer["status"]["token"]}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
        "current-context": name,
    }
    data = {"kubeconfig": base64.b64encode(yaml.safe_dump(config).encode()).decode()}
    kube.create(
        "/api/v1/namespaces/kueue-system/secrets",
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": f"{name}-multikueue"}, "data": data},
    )


@dataclass
class Manager:
    kube: Kube
    said: list[str] = field(default_factory=list)
    clock: list[float] = field(default_factory=lambda: [0.0])

    def keeper(self) -> Keeper:
        """A keeper just started: nothing in memory."""
        settings = KeeperSettings(release_after=2.0)
        return Keeper(self.kube, settings, say=self.said.append, clock=lambda: self.clock[0])

    def ticks(self, keeper: Keeper, *at: float) -> None:
        for now in at:
            self.clock[0] = now
            keeper.tick()

    def quarantine_a(self) -> None:
        """Region a out of the config and in the keeper's list, as the keeper leaves a lost region."""
        self.kube.merge_patch(CONFIG, {"spec": {"clusters": ["b"]}})
        self.kube.merge_patch(STATE, {"data": {quarantine.QUARANTINED_KEY: '["a"]'}})

    def config(self) -> list[str]:
        return list(((self.kube.get(CONFIG) or {}).get("spec") or {}).get("clusters") or [])

    def state(self) -> Obj:
        return dict((self.kube.get(STATE) or {}).get("data") or {})


@pytest.fixture(scope="module")
def manager(module_kube: Kube, regions_api_server: Path) -> Iterator[Manager]:
    """The manager (its job now runs in region b) and region a, quarantined, on one API server (the folder's shared
    one, tests/integration/regions/conftest.py)."""
    kube, kubeconfig = module_kube, regions_api_server
    if kube.get("/api/v1/namespaces/kueue-system") is None:
        kube.create(
            "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kueue-system"}}
        )
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "planb-multikueue"}}
    kube.create("/api/v1/namespaces/kueue-system/serviceaccounts", account)
    kube.create("/apis/rbac.authorization.k8s.io/v1/clusterroles", RIGHTS[0])
    kube.create("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", RIGHTS[1])
    kube.create("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding("ClusterRole"))
    kube.create("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", binding("Role", "default"))
    for name in ("a", "b"):
        region_secret(kube, kubeconfig, name)
        active(kube, name)
    config = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "MultiKueueConfig",
        "metadata": {"name": "planb-regions"},
    }
    kube.create(f"{KUEUE}/multikueueconfigs", {**config, "spec": {"clusters": ["b"]}})
    state = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "planb-regions-keeper"}}
    kube.create("/api/v1/namespaces/kueue-system/configmaps", {**state, "data": {origin_mod.ORIGIN_KEY: ORIGIN}})
    owner = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "name": "job-1",
        "uid": "manager-rayjob-uid",
        "controller": True,
    }
    pod = {"spec": {"containers": [{"name": "c", "image": "x"}]}}
    workload = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": WORKLOAD, "ownerReferences": [owner]},
        "spec": {"queueName": "user-queue", "podSets": [{"name": "main", "count": 1, "template": pod}]},
    }
    kube.create(f"{KUEUE}/namespaces/default/workloads", workload)
    check = {"name": "planb-regions", "state": "Ready", "message": "", "lastTransitionTime": SINCE}
    status = {"status": {"clusterName": "b", "admissionChecks": [check]}}
    kube.merge_patch(f"{KUEUE}/namespaces/default/workloads/{WORKLOAD}/status", status)
    found = Manager(kube)
    found.quarantine_a()
    yield found


def region_rayjob(kube: Kube, finalizers: list[str] | None = None) -> Obj:
    """The RayJob MultiKueue made in region a for the manager's job: this manager's origin, the Workload prebuilt."""
    labels = {ko.ORIGIN: ORIGIN, ko.PREBUILT: WORKLOAD}
    meta: Obj = {"name": "job-1", "labels": labels, **({"finalizers": finalizers} if finalizers else {})}
    return kube.create(
        f"{RAY}/rayjobs", {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": meta, "spec": {"suspend": True}}
    )


def raycluster(kube: Kube, name: str, owner_uid: str, labels: Obj) -> Obj:
    """A RayCluster as KubeRay makes it for a RayJob job-1 of uid `owner_uid`: that RayJob its controller, `labels`
    (the RayJob's) copied and KubeRay's own added (ray-project/kuberay@v1.6.2 rayjob_controller.go#L969-L993)."""
    owner = {"apiVersion": "ray.io/v1", "kind": "RayJob", "name": "job-1", "uid": owner_uid, "controller": True}
    labels = {**labels, ko.RAY_ORIGIN_CRD: "RayJob", ko.RAY_ORIGIN_NAME: "job-1"}
    head = {"rayStartParams": {}, "template": {"spec": {"containers": [{"name": "head", "image": "x"}]}}}
    body = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "labels": labels, "ownerReferences": [owner]},
        "spec": {"headGroupSpec": head},
    }
    return kube.create(f"{RAY}/rayclusters", body)


def test_a_restarted_keeper_waits_for_the_raycluster_of_a_rayjob_it_deleted_and_not_for_a_users(
    manager: Manager,
) -> None:
    """Findings 1 and 2: the first keeper deletes the stale RayJob (no garbage collector here: its RayCluster stays,
    as it outlives a background delete); a keeper started afresh keeps region a out while that RayCluster is there,
    whatever a user's RayCluster made for another RayJob job-1 does, then lets it back the RayCluster's pods' grace
    period (none set: Kubernetes' 30 s) plus planb.regions.keeper.grace's 30 s margin later, more than
    release_after (2 s)."""
    kube = manager.kube
    job = region_rayjob(kube)
    raycluster(kube, "job-1-raycluster-x", job["metadata"]["uid"], job["metadata"]["labels"])
    raycluster(kube, "job-1-raycluster-user", "0b6f4a5e-0000-4000-8000-000000000001", {})
    manager.ticks(manager.keeper(), 0)
    assert kube.get(f"{RAY}/rayjobs/job-1") is None
    assert "a: deleted the stale rayjob default/job-1 (its job is gone or runs elsewhere)" in manager.said
    restarted = manager.keeper()
    manager.ticks(restarted, 100, 110)
    assert manager.config() == ["b"], "let back while the RayCluster of a RayJob deleted before is there"
    assert "a: waiting for the RayClusters of its stale RayJobs to be gone: default/job-1-raycluster-x" in manager.said
    waiting = "waiting for RayCluster/default/job-1-raycluster-x"
    assert json.loads(manager.state()[leftovers.WAITING_KEY]) == {"a": waiting}
    assert status_regions.quarantined(gather.keeper_state(kube)) == {"a": waiting}
    kube.delete(f"{RAY}/rayclusters/job-1-raycluster-x")  # the garbage collector, after its RayJob
    manager.ticks(restarted, 111, 169)
    assert manager.config() == ["b"], "let back before its pods' grace passed since the RayCluster was last there"
    manager.ticks(restarted, 171)
    assert manager.config() == ["b", "a"], "kept out by a user's RayCluster of the same name"
    assert quarantine.QUARANTINED_KEY not in manager.state() and leftovers.WAITING_KEY not in manager.state()
    assert kube.get(f"{RAY}/rayclusters/job-1-raycluster-user") is not None
    kube.delete(f"{RAY}/rayclusters/job-1-raycluster-user")


def test_a_stale_rayjob_stuck_on_a_finalizer_is_said_and_shown_by_planb_status(manager: Manager) -> None:
    """Finding 3: the stale RayJob is being deleted but a finalizer holds it: the keeper says so once, with when its
    deletion began and the finalizer, and planb status shows region a waiting for it; once the finalizer is
    cleared, the region comes back release_after later."""
    kube = manager.kube
    manager.quarantine_a()
    region_rayjob(kube, ["example.com/held"])
    kube.delete(f"{RAY}/rayjobs/job-1")
    since = (kube.get(f"{RAY}/rayjobs/job-1") or {})["metadata"]["deletionTimestamp"]
    keeper = manager.keeper()
    manager.said.clear()
    manager.ticks(keeper, 0, 1, 5)
    assert manager.config() == ["b"]
    stuck = f"RayJob/default/job-1 (deleting since {since}, finalizers: example.com/held)"
    assert manager.said == [f"a: kept out until these are deleted (their finalizers cleared): {stuck}"], manager.said
    assert status_regions.quarantined(gather.keeper_state(kube)) == {"a": f"waiting for {stuck}"}
    workload = kube.get(f"{KUEUE}/namespaces/default/workloads/{WORKLOAD}") or {}
    assert (
        status_regions.dispatch(workload, gather.dispatch_reads(kube, workload))
        .line()
        .endswith(f"; a quarantined: waiting for {stuck}")
    )
    kube.merge_patch(f"{RAY}/rayjobs/job-1", {"metadata": {"finalizers": None}})
    manager.ticks(keeper, 6, 7)
    assert manager.config() == ["b", "a"]
