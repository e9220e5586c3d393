"""The Ray head stand-in's copy of a ready RayCluster's state into its RayJob: which jobs get it, and when it runs."""

from __future__ import annotations

from pathlib import Path

from planb.kube import Obj
from planb.local import failover_settings
from planb.local.failover_settings import FailoverSettings
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
