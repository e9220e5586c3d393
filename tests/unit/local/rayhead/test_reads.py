"""The Ray head stand-in's reads of the head's Service and RayCluster (planb.local.rayhead.reads): from the watches'
caches while they are in step, by GET otherwise, and again by GET when a cache a moment behind gives no head."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import cast

from planb.kube import Kube, Obj
from planb.local.rayhead.heads import RayHeads
from tests.support.shared.rayhead_cluster import HEAD, NS, OBJECTS, FakeKube, feed

SERVICE = f"/api/v1/namespaces/{NS}/services/rc-head-svc"
CLUSTER = f"/apis/ray.io/v1/namespaces/{NS}/rayclusters/rc"


class CountingKube(FakeKube):
    def __init__(self, objects: dict[str, Obj]) -> None:
        super().__init__(objects)
        self.got: list[str] = []

    def get(self, path: str) -> Obj | None:
        self.got.append(path)
        return super().get(path)


def _heads(tmp_path: Path) -> tuple[RayHeads, CountingKube]:
    kube = CountingKube(copy.deepcopy(OBJECTS))
    heads = RayHeads(cast(Kube, kube), state_dir=tmp_path)
    feed(heads, HEAD)
    return heads, kube


def _cache(heads: RayHeads, service: Obj, cluster: Obj) -> None:
    """The watches' caches as their lists would fill them: each object under "namespace/name"."""
    for informer, obj, name in ((heads.reads.services, service, "rc-head-svc"), (heads.reads.clusters, cluster, "rc")):
        obj = copy.deepcopy(obj)
        obj.setdefault("metadata", {}).update(namespace=NS, name=name)
        informer.items = {f"{NS}/{name}": obj}
        informer.synced.set()


def test_the_head_and_its_token_mode_are_read_from_the_caches_without_a_get(tmp_path: Path) -> None:
    heads, kube = _heads(tmp_path)
    _cache(heads, OBJECTS[SERVICE], OBJECTS[CLUSTER])
    assert heads.head_pod(NS, "rc-head-svc") is HEAD
    assert heads.auth_token(NS, "rc") is None  # no authOptions: no Secret is read either
    assert kube.got == []


def test_a_cache_behind_a_change_is_read_again_and_one_not_in_step_is_not_read(tmp_path: Path) -> None:
    heads, kube = _heads(tmp_path)
    stale = copy.deepcopy(OBJECTS[CLUSTER])
    stale["status"]["head"]["podName"] = "rc-head-before"  # KubeRay's newer status not seen by the watch yet
    _cache(heads, OBJECTS[SERVICE], stale)
    assert heads.head_pod(NS, "rc-head-svc") is HEAD
    assert kube.got == [SERVICE, CLUSTER]
    kube.got.clear()
    heads.reads.clusters.error = "watch of rayclusters: connection refused"
    assert heads.head_pod(NS, "rc-head-svc") is HEAD
    assert kube.got == [CLUSTER]  # the Service's cache is in step; the RayClusters' is not
    kube.got.clear()
    heads.reads.services.synced.clear()
    heads.reads.clusters.error = ""
    heads.reads.clusters.items = {}
    assert heads.head_pod(NS, "rc-head-svc") is HEAD
    assert kube.got == [SERVICE, CLUSTER]  # not listed yet, and not cached: read by GET
