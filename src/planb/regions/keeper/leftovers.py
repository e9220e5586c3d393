"""What keeps a quarantined region out of the MultiKueueConfig, read from the region itself at every tick (the regions
keeper's rejoin, planb.regions.keeper.tick), and how the keeper and ``planb status`` say it.

Pure functions over the API's JSON. The keeper keeps nothing of a region in memory but when it last held something
stale: a keeper restarted after it deleted a stale RayJob finds that RayJob's RayCluster again from the region's own
objects. KubeRay makes a RayJob's RayCluster with the RayJob as its controller ownerReference and with a copy of the
RayJob's labels, MultiKueue's origin label among them (ray-project/kuberay@v1.6.2
ray-operator/controllers/ray/rayjob_controller.go#L969-L973 copies the labels and adds ``ray.io/originated-from-crd``
and ``ray.io/originated-from-cr-name``, #L993 sets the reference; the same at v1.7.0, #L998-L1021), and Kueue deletes
a region's RayJob with background propagation (kubernetes-sigs/kueue@v0.19.2
pkg/controller/jobs/ray/ray_multikueue_adapter.go#L294-L299), so the RayCluster outlives it until the garbage
collector deletes it by that reference.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from planb.kube import Obj
from planb.printable import printable
from planb.regions.access.kueue_objects import (
    RAY_ORIGIN_CRD,
    RAY_ORIGIN_NAME,
    made_by,
    owner_rayjob,
    under_check,
)
from planb.regions.keeper import origin
from planb.regions.keeper.origin import stored_waiting

#: The keeper's ConfigMap's key for what each quarantined region waits for (planb.regions.keeper.origin), read by
#: ``planb status`` (planb.status.regions).
WAITING_KEY = origin.WAITING_KEY
#: How many objects a waiting line names before "and N more".
SHOWN = 3
#: planb's caps on region text the keeper writes to its ConfigMap (at most 1 MiB, or every write fails) and its log,
#: because a region's user can make an object of about 1.5 MiB (thousands of finalizers) that stays being deleted:
#: finalizers shown per object and the characters of each, of one object's line, of a region's `waiting` entry.
FINALIZERS_SHOWN, FINALIZER_CHARS, DESCRIBED_CHARS, WAITING_CHARS = 3, 100, 512, 1024


def cap(text: str, most: int) -> str:
    """`text`, cut to `most` characters with how many more there were."""
    return text if len(text) <= most else f"{text[:most]}... and {len(text) - most} more characters"


def _rayjob_owner(rc: Obj) -> Obj:
    """The RayCluster's controller ownerReference of kind RayJob ({} without one)."""
    for owner in (rc.get("metadata") or {}).get("ownerReferences") or []:
        if (
            owner.get("controller") is True
            and owner.get("kind") == "RayJob"
            and str(owner.get("apiVersion", "")).startswith("ray.io/")
        ):
            return dict(owner)
    return {}


def _key(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def dispatched(manager_workloads: Iterable[Obj], check: str) -> set[tuple[str, str]]:
    """The (namespace, name) of each RayJob this manager dispatched to its regions: the one a manager Workload under
    its MultiKueue `check` names as owner (a Workload being deleted too). Kueue's MultiKueue makes the region's copy
    of a job under the manager job's namespace and name (kubernetes-sigs/kueue@v0.19.2
    pkg/controller/jobs/ray/ray_multikueue_adapter.go#L174-L221, the key of both; the copy's metadata cloned by
    pkg/controller/jobs/rayjob/rayjob_multikueue_adapter.go#L34-L39)."""
    found = set()
    for workload in manager_workloads:
        name = owner_rayjob(workload)
        if name and under_check(workload, check):
            found.add((str((workload.get("metadata") or {}).get("namespace") or ""), name))
    return found


def _rayjob_named(rc: Obj, owner: Obj) -> str:
    """The name of the RayJob a RayCluster was made for: its controller reference's, else KubeRay's labels' ("")."""
    labels = (rc.get("metadata") or {}).get("labels") or {}
    if owner:
        return str(owner.get("name") or "")
    return str(labels.get(RAY_ORIGIN_NAME) or "") if labels.get(RAY_ORIGIN_CRD) == "RayJob" else ""


def stale_rayclusters(
    rayclusters: Sequence[Obj],
    rayjobs: Sequence[Obj],
    stale: Sequence[Obj],
    origin: str,
    jobs: Collection[tuple[str, str]],
) -> list[Obj]:
    """Of a region's RayClusters (every namespace), those made for a stale RayJob, which keep the region out. Only
    those made for a RayJob this manager dispatched (`jobs`, from `dispatched`: its namespace and the name of the
    RayJob the RayCluster's controller reference, else KubeRay's originated-from labels, name), and of those:

    * whatever their labels, those whose controller ownerReference names by uid a RayJob in `stale` (the RayJobs of
      this manager the keeper deletes there, or waits for Kueue's GC to delete);
    * those carrying this manager's `origin` label (KubeRay copied it from the RayJob) whose RayJob is no longer
      among the region's `rayjobs` but as a stale one: by the reference's uid, else by namespace and name. A keeper
      restarted after it deleted the RayJob finds its RayCluster so.

    planb's policy: never by name alone, because a RayCluster of the same name that
    another party made, for a RayJob of its own, would keep the region out for as long as it lives. planb's policy:
    never by the origin label or an owner's uid alone either, because a region's user can copy the
    label (and make a RayJob carrying it, whose RayCluster KubeRay then makes) in any namespace, and would keep the
    region out for as long as they like; only one of a job this manager dispatched, in that job's namespace, does.
    What that leaves out: a RayCluster of a job whose manager Workload is gone; the keeper still waits the grace of
    its RayJob after the last tick it saw that RayJob or its Workload copy there
    (planb.regions.keeper.rejoin)."""
    stale_uids = {str((j.get("metadata") or {}).get("uid") or "") for j in stale} - {""}
    stale_keys = {_key(j) for j in stale}
    alive_uids = {str((j.get("metadata") or {}).get("uid") or "") for j in rayjobs} - stale_uids - {""}
    alive_keys = {_key(j) for j in rayjobs if str((j.get("metadata") or {}).get("uid") or "") not in stale_uids}
    alive_keys -= stale_keys
    found = []
    for rc in rayclusters:
        owner = _rayjob_owner(rc)
        job = (_key(rc)[0], _rayjob_named(rc, owner))
        if not job[1] or job not in jobs:
            continue
        uid = str(owner.get("uid") or "")
        gone = uid not in alive_uids if uid else job not in alive_keys
        if (uid and uid in stale_uids) or (made_by(rc, origin) and gone):
            found.append(rc)
    return found


def describe(kind: str, obj: Obj) -> str:
    """``<Kind>/<namespace>/<name>``, and for an object being deleted when that began and the finalizers it waits on:
    an object stuck on a finalizer keeps its region out until whoever owns the finalizer clears it."""
    meta = obj.get("metadata") or {}
    name = f"{kind}/{meta.get('namespace')}/{meta.get('name')}"
    since = meta.get("deletionTimestamp")
    if not since:
        return printable(name, one_line=True)
    found = [str(f) for f in meta.get("finalizers") or []]
    finalizers = ", ".join(cap(f, FINALIZER_CHARS) for f in found[:FINALIZERS_SHOWN]) or "none"
    if len(found) > FINALIZERS_SHOWN:
        finalizers += f" and {len(found) - FINALIZERS_SHOWN} more"
    return cap(printable(f"{name} (deleting since {since}, finalizers: {finalizers})", one_line=True), DESCRIBED_CHARS)


def waiting_line(described: Sequence[str]) -> str:
    """One line for what a region waits for ("" for nothing): the first `SHOWN` objects and how many more."""
    if not described:
        return ""
    more = f" and {len(described) - SHOWN} more" if len(described) > SHOWN else ""
    return cap("waiting for " + "; ".join(described[:SHOWN]) + more, WAITING_CHARS)


def waiting_of(state: Obj) -> dict[str, str]:
    """What each quarantined region waits for, as the keeper last wrote it in its ConfigMap
    (planb.regions.keeper.origin.stored_waiting), each line escaped for a terminal."""
    return {k: printable(v, one_line=True) for k, v in stored_waiting(state).items()}
