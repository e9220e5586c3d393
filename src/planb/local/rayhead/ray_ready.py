"""KubeRay's copy of a ready RayCluster's state into its RayJob, made at once while local failover is on.

Kueue's PodsReady for a RayJob reads the RayJob's ``status.rayClusterStatus``, which KubeRay copies from the
job's RayCluster on its reads of the Ray head's dashboard. Locally KubeRay reaches the Ray head stand-in as that
dashboard and makes the copy too, but not always within the short waitForPodsReady timeouts the tests and the demo
use (8 and 15 s): a job whose pods were ready was then evicted from plan A in one of three full test runs. So, while
local mode's failover settings (planb.local.failover_settings) switch failover on, the Ray head stand-in makes
that copy itself as soon as a RayCluster is ready, in the failover's LocalQueue namespaces, with the local stack's
admin kubeconfig. The failover controller the queues chart ships (planb.failover) never does: on GKE a Ray head
answers KubeRay.

It reads the RayClusters and RayJobs from watches (planb.local.informer; the RayClusters' is the head tracking's,
planb.local.rayhead.heads) and looks again on every change they bring, and every `INTERVAL_S` for the settings file
(`planb local failover` flips it). A look lists nothing: two lists every half second were a sixth of the idle local
stack's requests to its API server. While a watch is not in step (before its first list, or failing) a look lists
both itself, as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from planb.kube import Kube, KubeError, Obj
from planb.local.failover_settings import FailoverSettings, SettingsError
from planb.local.informer import Informer

RAY = "/apis/ray.io/v1"
#: Seconds between two looks at the settings file when no watch brings a change (the failover controller's own loop
#: once looked as often).
INTERVAL_S = 0.5


def copies(clusters: list[Obj], jobs: list[Obj]) -> list[tuple[str, str, Obj]]:
    """(namespace, RayJob, the status to copy) for each ready RayCluster whose unsuspended RayJob, the one that made
    it and names it in ``status.rayClusterName``, does not read it ready yet."""
    by_name = {(j["metadata"]["namespace"], j["metadata"]["name"]): j for j in jobs}
    found: list[tuple[str, str, Obj]] = []
    for cluster in clusters:
        status = cluster.get("status") or {}
        if status.get("state") != "ready":
            continue
        namespace = cluster["metadata"]["namespace"]
        for owner in cluster["metadata"].get("ownerReferences") or []:
            job = by_name.get((namespace, owner.get("name")))
            if owner.get("kind") != "RayJob" or job is None or job["spec"].get("suspend"):
                continue
            job_status = job.get("status") or {}
            if job_status.get("rayClusterName") != cluster["metadata"]["name"]:
                continue
            if (job_status.get("rayClusterStatus") or {}).get("state") == "ready":
                continue
            found.append((namespace, job["metadata"]["name"], status))
    return found


def copy_once(kube: Kube, namespaces: list[str], clusters: Informer | None = None, jobs: Informer | None = None) -> int:
    """One look at the namespaces' RayClusters and RayJobs, and the copies they need; how many were made. The objects
    come from the watches `clusters` and `jobs` while both are in step, else from a list of each namespace's; a RayJob
    as written goes into `jobs`, so the next look does not copy again from the version before."""
    cached = clusters is not None and jobs is not None and clusters.usable and jobs.usable
    made = 0
    for namespace in namespaces:
        where = f"{RAY}/namespaces/{namespace}"
        if cached and clusters is not None and jobs is not None:
            found = copies(in_namespace(clusters.snapshot(), namespace), in_namespace(jobs.snapshot(), namespace))
        else:
            found = copies(kube.items(f"{where}/rayclusters"), kube.items(f"{where}/rayjobs"))
        for _, job, status in found:
            written = kube.merge_patch(f"{where}/rayjobs/{job}/status", {"status": {"rayClusterStatus": status}})
            if jobs is not None and written:
                jobs.put(written)
            made += 1
    return made


def in_namespace(objects: list[Obj], namespace: str) -> list[Obj]:
    return [o for o in objects if (o.get("metadata") or {}).get("namespace") == namespace]


def namespaces_of(settings_file: Path) -> list[str]:
    """The failover's LocalQueue namespaces while its settings switch it on; none when off (or the file is unusable)."""
    try:
        settings = FailoverSettings.load(settings_file)
    except SettingsError:
        return []
    return [n.strip() for n in settings.namespaces.split(",") if n.strip()] if settings.enabled else []


def run(
    kube: Kube,
    settings_file: Path,
    stop: threading.Event,
    log: Callable[[str], None],
    watched: tuple[Informer, Informer, threading.Event] | None = None,
) -> None:
    """Copy until `stop`, reading the failover settings at every look (`planb local failover` flips them). With
    `watched` (the RayClusters' and RayJobs' watches and the event they set on a change), a look comes at once on a
    change and reads their caches; the RayJobs' watch is stopped with the loop."""
    clusters, jobs, changed = watched if watched is not None else (None, None, threading.Event())
    error = ""
    try:
        while not stop.is_set():
            changed.wait(INTERVAL_S)
            changed.clear()
            if stop.is_set():
                return
            try:
                copy_once(kube, namespaces_of(settings_file), clusters, jobs)
                error = ""
            except (KubeError, OSError, ValueError) as exc:  # best effort: the next look retries
                if str(exc) != error:
                    log(f"copying ready RayClusters into their RayJobs: {exc} (will retry)")
                    error = str(exc)
    finally:
        if jobs is not None:
            jobs.stop()


def start(
    kubeconfig: Path, clusters: Informer, settings_file: Path, stop: threading.Event, log: Callable[[str], None]
) -> None:
    """`run` on a daemon thread of its own, with a client of its own and a watch of the RayJobs on it; `clusters` (the
    head tracking's RayCluster watch, not started yet) wakes it too."""
    kube, changed = Kube(kubeconfig), threading.Event()
    clusters.on_change = changed.set
    jobs = Informer(kube, f"{RAY}/rayjobs", on_change=changed.set, log=log).start()
    thread = threading.Thread(
        target=run, args=(kube, settings_file, stop, log, (clusters, jobs, changed)), daemon=True, name="ray-ready"
    )
    thread.start()
