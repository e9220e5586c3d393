"""The Ray head stand-in's copy of a ready RayCluster's state into its RayJob: which jobs get it, and when it runs."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from planb.kube import Kube, Obj
from planb.local import failover_settings
from planb.local.failover_settings import FailoverSettings
from planb.local.informer import Informer
from planb.local.rayhead import ray_ready

READY = {"state": "ready", "head": {"podName": "job-1-raycluster-abcde-head"}}


def cluster(name: str = "job-1-raycluster-abcde", owner: str = "job-1", state: Obj | None = None) -> Obj:
    return {
        "metadata": {"name": name, "namespace": "default", "ownerReferences": [{"kind": "RayJob", "name": owner}]},
        "status": READY if state is None else state,
    }


def job(name: str = "job-1", cluster_name: str = "job-1-raycluster-abcde", **extra: object) -> Obj:
    return {
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"suspend": bool(extra.pop("suspend", False))},
        "status": {"rayClusterName": cluster_name, **extra},
    }


def test_a_ready_cluster_is_copied_into_the_job_that_made_it_and_names_it() -> None:
    assert ray_ready.copies([cluster()], [job()]) == [("default", "job-1", READY)]


def test_nothing_is_copied_when_the_state_is_not_ready_or_the_job_reads_it_already_or_the_link_fails() -> None:
    assert ray_ready.copies([cluster(state={"state": "suspended"})], [job()]) == []
    assert ray_ready.copies([cluster()], [job(rayClusterStatus=READY)]) == []
    assert ray_ready.copies([cluster()], [job(suspend=True)]) == []
    assert ray_ready.copies([cluster()], [job(cluster_name="another-cluster")]) == []
    assert ray_ready.copies([cluster(owner="job-2")], [job()]) == []


def test_it_copies_only_in_the_failover_namespaces_while_failover_is_on(tmp_path: Path) -> None:
    settings = failover_settings.path(tmp_path)
    assert ray_ready.namespaces_of(settings) == []  # no file: failover off
    failover_settings.save(tmp_path, FailoverSettings(after_seconds=8, namespaces="default, team-a"))
    assert ray_ready.namespaces_of(settings) == ["default", "team-a"]
    failover_settings.save(tmp_path, FailoverSettings(after_seconds=0))
    assert ray_ready.namespaces_of(settings) == []
    settings.write_text("{not json")
    assert ray_ready.namespaces_of(settings) == []


class RayApi:
    """Lists (counted) and the status patch, which answers the RayJob as written."""

    def __init__(self, clusters: list[Obj], jobs: list[Obj]) -> None:
        self.objects = {"rayclusters": clusters, "rayjobs": jobs}
        self.lists: list[str] = []
        self.patched: list[str] = []

    def items(self, path: str) -> list[Obj]:
        self.lists.append(path)
        return self.objects[path.rsplit("/", 1)[1]]

    def merge_patch(self, path: str, body: Obj) -> Obj:
        self.patched.append(path)
        written = job()
        written["status"].update(body["status"])
        written["metadata"]["resourceVersion"] = "7"
        return written


def watched(api: RayApi, path: str, objects: list[Obj]) -> Informer:
    informer = Informer(cast(Kube, api), path)
    informer.items = {f"{o['metadata']['namespace']}/{o['metadata']['name']}": o for o in objects}
    informer.synced.set()
    return informer


def test_a_look_reads_the_watches_caches_and_keeps_its_own_write_so_it_copies_once() -> None:
    other = cluster(name="elsewhere")
    other["metadata"]["namespace"] = "team-b"
    api = RayApi([], [])
    clusters = watched(api, f"{ray_ready.RAY}/rayclusters", [cluster(), other])
    jobs = watched(api, f"{ray_ready.RAY}/rayjobs", [job()])
    assert ray_ready.copy_once(cast(Kube, api), ["default"], clusters, jobs) == 1
    assert ray_ready.copy_once(cast(Kube, api), ["default"], clusters, jobs) == 0  # the written RayJob is cached
    assert api.lists == []
    assert api.patched == [f"{ray_ready.RAY}/namespaces/default/rayjobs/job-1/status"]


def test_a_look_lists_while_a_watch_is_not_in_step() -> None:
    api = RayApi([cluster()], [job()])
    clusters = watched(api, f"{ray_ready.RAY}/rayclusters", [])
    jobs = watched(api, f"{ray_ready.RAY}/rayjobs", [])
    jobs.error = "watch of rayjobs: connection refused"
    assert ray_ready.copy_once(cast(Kube, api), ["default"], clusters, jobs) == 1
    where = f"{ray_ready.RAY}/namespaces/default"
    assert api.lists == [f"{where}/rayclusters", f"{where}/rayjobs"]
