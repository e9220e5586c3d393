"""What the regions keeper decides, from what it read: pure functions over the API's JSON (planb.regions.keeper acts).

Three gaps Kueue v0.19.2's MultiKueue leaves when a region is lost (docs/regions.md, section 4):

* **Quarantine.** Kueue keeps a lost winner's check Ready for ``workerLostTimeout`` (default 15 min) before it
  retries (pkg/controller/admissionchecks/multikueue/workload.go#L551-L569). planb's policy: a region whose
  MultiKueueCluster has not been ``Active`` for ``lost_after`` seconds leaves the MultiKueueConfig, because Kueue then
  no longer sees its copy, finds no admitted one and retries at once (workload.go#L568), and requeues the config's
  Workloads when the config changes (workload.go#L1016-L1028). Never the last region: ``spec.clusters`` needs one
  (apis/kueue/v1beta2/multikueue_types.go#L155).
* **Release.** An evicted Workload's quota is released only once its job is inactive
  (pkg/controller/jobframework/reconciler.go#L580-L610); a RayJob is inactive only when its status says Suspended or
  is empty, KubeRay's New (pkg/controller/jobs/rayjob/rayjob_controller.go#L107-L110; kuberay v1.6.2
  ray-operator/apis/ray/v1/rayjob_types.go#L48), and on the manager that status is only ever copied
  from a region (pkg/controller/jobs/ray/ray_multikueue_adapter.go#L188-L200), so with the region gone it never comes
  (kueue#15380). planb's policy: a manager RayJob whose Workload has been evicted and still holds quota for
  ``release_after`` seconds, suspended, gets ``status.jobDeploymentStatus: Suspended``, because no KubeRay acts on a
  RayJob MultiKueue manages (kuberay v1.6.2 ray-operator/controllers/ray/rayjob_controller.go#L108-L110) and the
  next region's status replaces it once the job runs there.
* **Rejoin.** Kueue's GC deletes a region's copy only when the manager's Workload is gone
  (pkg/controller/admissionchecks/multikueue/multikueuecluster.go#L699-L711), and the earliest Admitted copy wins
  (workload.go#L140-L155): a stale copy on a region that comes back could take the job from its new home. planb's
  policy: a quarantined region comes back into the config only after every copy and RayJob there that Kueue's
  MultiKueue made (label ``kueue.x-k8s.io/multikueue-origin``) and whose manager Workload is gone or runs elsewhere
  has been deleted.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence

from planb.kube import Obj

#: The MultiKueueConfig's annotation listing the regions planb took out of it (a JSON list), so they come back.
QUARANTINED = "planb.dev/quarantined-regions"
#: Kueue's marks on what MultiKueue creates in a region: the origin label (apis/kueue/v1beta2/multikueue_types.go#L29)
#: and the copy's name: an annotation of the same key whenever the WorkloadIdentifierAnnotations gate is on (Beta, on
#: by default since 0.18: pkg/features/kube_features.go#L884-L886) or the name is too long for a label, a label
#: otherwise (pkg/controller/jobframework/utils.go#L231-L259; pkg/controller/constants/constants.go#L33-L39).
ORIGIN = "kueue.x-k8s.io/multikueue-origin"
#: The origin label's value when the manager's Kueue configuration sets no ``multiKueue.origin``, as planb's roles do
#: not (apis/config/v1beta2/defaults.go#L49); Kueue's GC lists by the value too
#: (pkg/controller/admissionchecks/multikueue/multikueuecluster.go#L693).
DEFAULT_ORIGIN = "multikueue"
PREBUILT = "kueue.x-k8s.io/prebuilt-workload-name"
#: RayJob deployment states Kueue counts as inactive (rayjob_controller.go#L107-L110): Suspended, and New, which
#: KubeRay spells as the empty string (ray-operator/apis/ray/v1/rayjob_types.go#L48).
INACTIVE = ("Suspended", "")


def condition(obj: Obj, kind: str) -> Obj:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return dict(cond)
    return {}


def is_active(cluster: Obj) -> bool:
    """A MultiKueueCluster Kueue is connected to (its ``Active`` condition True)."""
    return condition(cluster, "Active").get("status") == "True"


def quarantined(config: Obj) -> list[str]:
    """The regions planb took out of this MultiKueueConfig (its annotation), in the order they left."""
    text = ((config.get("metadata") or {}).get("annotations") or {}).get(QUARANTINED, "")
    try:
        names = json.loads(text) if text else []
    except ValueError:
        return []
    return [str(n) for n in names] if isinstance(names, list) else []


def to_quarantine(
    clusters: Sequence[str], inactive_since: Mapping[str, float], now: float, lost_after: float
) -> list[str]:
    """The config's regions lost for `lost_after` seconds or more; never all of them (the last lost one stays)."""
    lost = [c for c in clusters if c in inactive_since and now - inactive_since[c] >= lost_after]
    if lost and len(lost) == len(clusters):
        lost = lost[:-1]
    return lost


def holds_quota_evicted(workload: Obj, check: str) -> bool:
    """A manager Workload under MultiKueue check `check`, evicted, whose quota is still reserved."""
    checks = [c.get("name") for c in (workload.get("status") or {}).get("admissionChecks") or []]
    return (
        check in checks
        and condition(workload, "Evicted").get("status") == "True"
        and condition(workload, "QuotaReserved").get("status") == "True"
    )


def owner_rayjob(workload: Obj) -> str:
    """The name of the RayJob that owns this Workload, "" if a RayJob does not."""
    for owner in (workload.get("metadata") or {}).get("ownerReferences") or []:
        if owner.get("kind") == "RayJob" and str(owner.get("apiVersion", "")).startswith("ray.io/"):
            return str(owner.get("name", ""))
    return ""


def needs_release(rayjob: Obj) -> bool:
    """A RayJob Kueue has suspended whose status still reads active, so its Workload keeps its quota."""
    spec = rayjob.get("spec") or {}
    deployment = (rayjob.get("status") or {}).get("jobDeploymentStatus", "")
    return bool(spec.get("suspend")) and deployment not in INACTIVE


def stale_copies(
    region: str, copies: Sequence[Obj], manager_workloads: Mapping[tuple[str, str], Obj], origin: str = DEFAULT_ORIGIN
) -> list[Obj]:
    """The region's copies this manager's MultiKueue made (its `origin`) whose manager Workload (same namespace and
    name) is gone or runs elsewhere."""
    return _stale(region, copies, manager_workloads, origin, lambda meta: str(meta.get("name")))


def stale_jobs(
    region: str, jobs: Sequence[Obj], manager_workloads: Mapping[tuple[str, str], Obj], origin: str = DEFAULT_ORIGIN
) -> list[Obj]:
    """The region's RayJobs this manager's MultiKueue made (its `origin`) whose manager Workload (named by their
    prebuilt-workload mark) is gone or runs elsewhere."""

    def prebuilt(meta: Obj) -> str:
        return str((meta.get("labels") or {}).get(PREBUILT) or (meta.get("annotations") or {}).get(PREBUILT, ""))

    return _stale(region, jobs, manager_workloads, origin, prebuilt)


def _stale(
    region: str,
    objs: Sequence[Obj],
    manager_workloads: Mapping[tuple[str, str], Obj],
    origin: str,
    workload_name: Callable[[Obj], str],
) -> list[Obj]:
    """The objects carrying `origin` whose manager Workload (same namespace, `workload_name` of their metadata) is
    gone or runs in another region than `region`."""
    stale = []
    for obj in objs:
        meta = obj.get("metadata") or {}
        if (meta.get("labels") or {}).get(ORIGIN) != origin:
            continue
        home = manager_workloads.get((str(meta.get("namespace")), workload_name(meta)))
        if home is None or (home.get("status") or {}).get("clusterName") != region:
            stale.append(obj)
    return stale
