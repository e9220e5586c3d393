"""The Ray head stand-in's reads of Services and RayClusters: from watches, with a GET where a cache does not serve.

KubeRay asks each running RayJob's head for its job every `RayJobDefaultRequeueDuration`, 3 s (ray-project/kuberay
@v1.6.2 ray-operator/controllers/ray/rayjob_controller.go), and the stand-in answers each request only after reading
the head's Service and its RayCluster (planb.local.rayhead.heads: the chain of heads, the token). Read by GET, those
were three requests to the API server per job every 3 s while nothing changed; here they come from a list-and-watch
cache (planb.local.informer) instead. An object the cache does not hold, or any object while the cache is not in
step (before its first list, or while its watch fails), is read by GET as before, and a caller that finds no head
in the cache reads again with `cached=False`, so a cache a moment behind a change never refuses what a read would
take.
"""

from __future__ import annotations

from collections.abc import Callable

from planb.kube import Kube, Obj
from planb.local.informer import Informer

RAY_GROUP_PATH = "/apis/ray.io/v1"


class ObjectReads:
    """The Services and RayClusters of every namespace, each from its watch or by GET."""

    def __init__(self, kube: Kube, watch_kube: Kube, log: Callable[[str], None]) -> None:
        self.kube = kube
        self.services = Informer(watch_kube, "/api/v1/services", log=log)
        #: Also the watch planb.local.rayhead.ray_ready looks again on (it sets `on_change` before `start`).
        self.clusters = Informer(watch_kube, f"{RAY_GROUP_PATH}/rayclusters", log=log)

    def start(self) -> None:
        self.services.start()
        self.clusters.start()

    def service(self, namespace: str, name: str, cached: bool = True) -> Obj | None:
        return self._read(self.services, f"/api/v1/namespaces/{namespace}/services/{name}", namespace, name, cached)

    def cluster(self, namespace: str, name: str, cached: bool = True) -> Obj | None:
        path = f"{RAY_GROUP_PATH}/namespaces/{namespace}/rayclusters/{name}"
        return self._read(self.clusters, path, namespace, name, cached)

    def _read(self, informer: Informer, path: str, namespace: str, name: str, cached: bool) -> Obj | None:
        found = informer.get(f"{namespace}/{name}") if cached and informer.usable else None
        return found if found is not None else self.kube.get(path)
