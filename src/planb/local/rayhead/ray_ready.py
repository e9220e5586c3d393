"""KubeRay's copy of a ready RayCluster's state into its RayJob, made at once while local failover is on.

Kueue's PodsReady for a RayJob reads the RayJob's ``status.rayClusterStatus``, which KubeRay copies from the
job's RayCluster on its reads of the Ray head's dashboard. Locally KubeRay reaches the Ray head stand-in as that
dashboard and makes the copy too, but not always within the short waitForPodsReady timeouts the tests and the demo
use (8 and 15 s): a job whose pods were ready was then evicted from plan A in one of three full test runs. So, while
local mode's failover settings (planb.local.failover_settings) switch failover on, the Ray head stand-in makes
that copy itself as soon as a RayCluster is ready, in the failover's LocalQueue namespaces, with the local stack's
admin kubeconfig. The failover controller the queues chart ships (planb.failover) never does: on GKE a Ray head
answers KubeRay.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from planb.kube import Kube, KubeError, Obj
from planb.local.failover_settings import FailoverSettings, SettingsError

RAY = "/apis/ray.io/v1"
#: Seconds between two looks (the failover controller's own loop did the same).
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


def copy_once(kube: Kube, namespaces: list[str]) -> int:
    """One look at the namespaces' RayClusters and RayJobs, and the copies they need; how many were made."""
    made = 0
    for namespace in namespaces:
        where = f"{RAY}/namespaces/{namespace}"
        for _, job, status in copies(kube.items(f"{where}/rayclusters"), kube.items(f"{where}/rayjobs")):
            kube.merge_patch(f"{where}/rayjobs/{job}/status", {"status": {"rayClusterStatus": status}})
            made += 1
    return made


def namespaces_of(settings_file: Path) -> list[str]:
    """The failover's LocalQueue namespaces while its settings switch it on; none when off (or the file is unusable)."""
    try:
        settings = FailoverSettings.load(settings_file)
    except SettingsError:
        return []
    return [n.strip() for n in settings.namespaces.split(",") if n.strip()] if settings.enabled else []


def run(kube: Kube, settings_file: Path, stop: threading.Event, log: Callable[[str], None]) -> None:
    """Copy until `stop`, reading the failover settings at every look (`planb local failover` flips them)."""
    error = ""
    while not stop.wait(INTERVAL_S):
        try:
            copy_once(kube, namespaces_of(settings_file))
            error = ""
        except (KubeError, OSError, ValueError) as exc:  # best effort: the next look retries
            if str(exc) != error:
                log(f"copying ready RayClusters into their RayJobs: {exc} (will retry)")
                error = str(exc)


def start(kubeconfig: Path, settings_file: Path, stop: threading.Event, log: Callable[[str], None]) -> None:
    """`run` on a daemon thread of its own, with a client of its own."""
    thread = threading.Thread(
        target=run, args=(Kube(kubeconfig), settings_file, stop, log), daemon=True, name="ray-ready"
    )
    thread.start()
