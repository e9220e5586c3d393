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
  next region's status replaces it once the job runs there; but only once no region Kueue reaches still holds the
  job's RayJob or a RayCluster of it (`release_blocker`), and ``release_after`` has passed since one last did
  (`still_held`, counted by the keeper). A region's KubeRay reads ``Suspending`` while it deletes the job's RayCluster
  and submitter, and stays there until both objects are gone (rayjob_controller.go#L369-L407, the RayCluster's
  deletion awaited in deleteClusterResources, #L771-L807; only Running and Initializing go to Suspending,
  #L1015-L1031), not their pods; Kueue deletes the region's RayJob with background propagation
  (pkg/controller/jobs/ray/ray_multikueue_adapter.go#L294-L299), so the RayCluster can outlive it; and the pods keep
  their grace period (the chart's workers: planb.catalog.training.grace_period_seconds, 50-75 s, the preStop save
  included) after the RayCluster is gone: released earlier, the job could start in a second region while it still
  runs in the first. Kueue resets the Workload's ``clusterName`` at eviction (pkg/workload/evict/evict.go#L205-L217), so
  every region is asked, not only the one that admitted it. Where that RayJob is gone Kueue will copy nothing more;
  where its region is lost Kueue hears nothing more: either way, only planb releases. A region counts as lost only
  once it has not been Active for ``lost_after`` (as the quarantine counts it): Kueue turns Active False on any
  failed reconnect (multikueuecluster.go#L911-L918) and itself waits ``workerLostTimeout`` before it takes a job
  from an unreachable region, "the remote is likely still running" (workload.go#L541-L560).
* **Rejoin.** Kueue's GC deletes a region's copy only when the manager's Workload is gone
  (pkg/controller/admissionchecks/multikueue/multikueuecluster.go#L699-L711), and the earliest Admitted copy wins
  (workload.go#L140-L155): a stale copy on a region that comes back could take the job from its new home. planb's
  policy: a quarantined region comes back into the config only after every copy there that this manager's
  MultiKueue made and whose manager Workload is gone, runs elsewhere or runs nowhere yet is gone, and the RayJobs Kueue
  made for them (`_not_home`: out of the config, a copy of a Workload still racing is no candidate of Kueue's).

What the keeper deletes in a region, and why no more (docs/regions.md, section 4, "Origin"): only an object whose origin
label carries this manager's own value (the regions playbook gives each manager's Kueue its own ``multiKueue.origin``;
Kueue's default ``multikueue`` would be every manager's) and that Kueue made for a Workload this manager still has under
its MultiKueue check: a copy of the same namespace and name (cloneForCreate,
pkg/controller/admissionchecks/multikueue/workload.go#L1348-L1356), a RayJob of the name of that Workload's RayJob that
names the Workload as its prebuilt one (the adapter creates the remote job under the manager job's own key,
pkg/controller/jobs/ray/ray_multikueue_adapter.go#L188 and #L211-L220; utils.go#L250-L259). A copy whose manager
Workload is gone is Kueue's own GC's to delete, with its job (multikueuecluster.go#L675-L733, run for every
MultiKueueCluster, in a config or not, #L1170-L1189), as Kueue itself deletes only what carries its origin
(pkg/controller/jobframework/utils.go#L292-L340): the keeper waits for it and touches nothing a label alone names. The
label is anyone's to write in a region, the Workload's name the manager's alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from types import MappingProxyType

from planb.errors import UnreachableError
from planb.kube import Obj
from planb.regions.kubeconfig import is_dns_subdomain

#: The keeper's ConfigMap (in Kueue's namespace on the manager, written only by the operator's regions playbook and
#: the keeper): ``origin``, the manager Kueue's multiKueue.origin, and ``quarantined``, the regions the keeper took
#: out of the MultiKueueConfig (a JSON list), so they come back. planb's policy: not an annotation of the
#: MultiKueueConfig, because whoever may edit that config (a batch admin) would then choose which regions the keeper
#: cleans and adds back.
ORIGIN_KEY, QUARANTINED_KEY = "origin", "quarantined"
#: Where earlier planb kept the quarantine list; no longer read (see above), only removed when the keeper writes.
OLD_QUARANTINED = "planb.dev/quarantined-regions"
#: Kueue's marks on what MultiKueue creates in a region: the origin label (apis/kueue/v1beta2/multikueue_types.go#L29)
#: and the copy's name: an annotation of the same key whenever the WorkloadIdentifierAnnotations gate is on (Beta, on
#: by default since 0.18: pkg/features/kube_features.go#L884-L886) or the name is too long for a label, a label
#: otherwise (pkg/controller/jobframework/utils.go#L231-L259; pkg/controller/constants/constants.go#L33-L39).
ORIGIN = "kueue.x-k8s.io/multikueue-origin"
#: The origin label's value when a manager's Kueue configuration sets no ``multiKueue.origin``
#: (apis/config/v1beta2/defaults.go#L49, #L136): the same for every such manager, so never the keeper's.
DEFAULT_ORIGIN = "multikueue"
#: Per region, why it is (a line naming it first, then the reason and the fix).
Why = Mapping[str, str]
PREBUILT = "kueue.x-k8s.io/prebuilt-workload-name"
#: KubeRay's labels on the RayCluster it makes for a RayJob: the RayJob's name and kind (kuberay v1.6.2
#: ray-operator/controllers/ray/utils/constant.go#L17-L18, set in rayjob_controller.go#L970-L973).
RAY_ORIGIN_NAME, RAY_ORIGIN_CRD = "ray.io/originated-from-cr-name", "ray.io/originated-from-crd"
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


def quarantined(state: Obj) -> list[str]:
    """The regions the keeper took out of the MultiKueueConfig (its ConfigMap's ``quarantined``), in the order they
    left."""
    text = (state.get("data") or {}).get(QUARANTINED_KEY, "")
    try:
        names = json.loads(text) if text else []
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes: the keeper goes on
        return []
    return [str(n) for n in names] if isinstance(names, list) else []


def origin_of(state: Obj) -> str:
    """This manager's origin value as the regions playbook wrote it in the keeper's ConfigMap ("" without one)."""
    return str((state.get("data") or {}).get(ORIGIN_KEY) or "")


def to_quarantine(
    clusters: Sequence[str], inactive_since: Mapping[str, float], now: float, lost_after: float
) -> list[str]:
    """The config's regions lost for `lost_after` seconds or more; never all of them (the last lost one stays)."""
    lost = [c for c in clusters if c in inactive_since and now - inactive_since[c] >= lost_after]
    if lost and len(lost) == len(clusters):
        lost = lost[:-1]
    return lost


def under_check(workload: Obj, check: str) -> bool:
    """A manager Workload of MultiKueue check `check`: one this manager dispatches to its regions."""
    return check in [c.get("name") for c in (workload.get("status") or {}).get("admissionChecks") or []]


def holds_quota_evicted(workload: Obj, check: str) -> bool:
    """A manager Workload under MultiKueue check `check`, evicted, whose quota is still reserved."""
    return (
        under_check(workload, check)
        and condition(workload, "Evicted").get("status") == "True"
        and condition(workload, "QuotaReserved").get("status") == "True"
    )


def _rayjob_reference(workload: Obj) -> Obj:
    for owner in (workload.get("metadata") or {}).get("ownerReferences") or []:
        if owner.get("kind") == "RayJob" and str(owner.get("apiVersion", "")).startswith("ray.io/"):
            return dict(owner)
    return {}


def owner_rayjob(workload: Obj) -> str:
    """The name of the RayJob that owns this Workload, "" if a RayJob does not or the name is not a Kubernetes name:
    the API server does not check an ownerReference's name, and the keeper puts it into a URL (``../`` would reach
    another namespace's RayJob)."""
    name = str(_rayjob_reference(workload).get("name") or "")
    return name if is_dns_subdomain(name) else ""


def owns(workload: Obj, rayjob: Obj) -> bool:
    """Whether `rayjob` is the one this Workload's RayJob ownerReference names by uid, as Kueue writes it
    (ctrl.SetControllerReference, pkg/controller/jobframework/reconciler.go#L1630): a name alone is whatever whoever
    may edit Workloads wrote."""
    uid = _rayjob_reference(workload).get("uid")
    return bool(uid) and (rayjob.get("metadata") or {}).get("uid") == uid


#: The spec.managedBy Kueue defaults on a job whose ClusterQueue has a MultiKueue check
#: (kubernetes-sigs/kueue@v0.19.2 pkg/controller/jobframework/defaults.go#L127-L148), and for which KubeRay leaves the
#: job alone (ray-project/kuberay@v1.6.2 ray-operator/controllers/ray/rayjob_controller.go#L108-L111).
MULTIKUEUE_MANAGED_BY = "kueue.x-k8s.io/multikueue"


def needs_release(rayjob: Obj) -> bool:
    """A RayJob Kueue has suspended whose status still reads active, so its Workload keeps its quota; only one that
    MultiKueue manages. planb's policy: a RayJob KubeRay reconciles on the
    manager tears its own RayCluster down on suspend and would skip that when its status read Suspended, so the keeper
    never writes it, whatever a Workload's ownerReference (which whoever may write Workloads chooses) names."""
    spec = rayjob.get("spec") or {}
    deployment = (rayjob.get("status") or {}).get("jobDeploymentStatus", "")
    managed = spec.get("managedBy") == MULTIKUEUE_MANAGED_BY
    return managed and bool(spec.get("suspend")) and deployment not in INACTIVE


def release_patch(rayjob: Obj) -> Obj | None:
    """The merge patch to the manager RayJob's ``/status`` that releases its quota, preconditioned on the
    resourceVersion read (None when it has none: the keeper never sends an unconditional one).

    planb's policy: the precondition is the resourceVersion, never ``metadata.uid``, because on a
    custom resource's status subresource the API server replaces the patched object's metadata with the stored
    one before it validates (kubernetes/apiextensions-apiserver@v0.34.2
    pkg/registry/customresource/status_strategy.go#L66-L90, called by kubernetes/apiserver@v0.34.2
    pkg/registry/rest/update.go#L107-L129): a wrong uid is dropped silently (only a uid sent for an object that does
    not exist is a conflict, kubernetes/apiserver@v0.34.2 pkg/endpoints/handlers/patch.go#L597-L607), while the
    resourceVersion is compared with the stored one before that, a conflict (409) when it differs
    (kubernetes/apiserver@v0.34.2 pkg/registry/generic/registry/store.go#L735-L736). A RayJob recreated under the
    name, or changed since the keeper read it, has another resourceVersion: it is not suspended
    (tests/integration/regions/test_status_preconditions.py shows both on the pinned kube-apiserver)."""
    version = str((rayjob.get("metadata") or {}).get("resourceVersion") or "")
    if not version:
        return None
    return {"metadata": {"resourceVersion": version}, "status": {"jobDeploymentStatus": "Suspended"}}


def made_by(obj: Obj | None, origin: str) -> bool:
    """An object carrying this manager's origin label (never true for an empty origin)."""
    return bool(origin) and (((obj or {}).get("metadata") or {}).get("labels") or {}).get(ORIGIN) == origin


def unreadable(region: str, exc: Exception, unanswered: str = "answers Kueue but not planb") -> str:
    """What the keeper and the dispatcher say of a region they could not read: planb's own error (it did not answer,
    no kubeconfig for it: the error's text) or objects of a shape planb cannot read (the exception's type only: its
    text may quote the region's objects, another party's input)."""
    if isinstance(exc, UnreachableError):
        return f"{region} {unanswered}: {exc}"
    return f"{region} answers objects planb cannot read ({type(exc).__name__}); taken as unreadable"


def rayclusters_of(rayjob: str, rayclusters: Sequence[Obj]) -> list[Obj]:
    """Of a region's RayClusters (in the job's namespace), those made for its RayJob `rayjob`, whatever their origin
    label: KubeRay's originated-from labels name it, or a controller ownerReference of kind RayJob does (KubeRay
    sets both, kuberay v1.6.2 ray-operator/controllers/ray/rayjob_controller.go#L969-L995).
    Not by the RayJob's uid: the RayCluster outlives the RayJob Kueue deleted, and one an earlier RayJob of the name
    left still has pods; a false match only holds the release longer."""

    def made_for(rc: Obj) -> bool:
        meta = rc.get("metadata") or {}
        labels = meta.get("labels") or {}
        if labels.get(RAY_ORIGIN_CRD) == "RayJob" and labels.get(RAY_ORIGIN_NAME) == rayjob:
            return True
        owners = meta.get("ownerReferences") or []
        return any(
            o.get("controller") is True and o.get("kind") == "RayJob" and o.get("name") == rayjob for o in owners
        )

    # planb's policy: a RayCluster KubeRay's labels or a controller reference tie to the job blocks the release
    # whether or not it carries this manager's origin, because it may still run the job, and releasing
    # its quota then could start the job in a second region (blocking is the safe side).
    return [rc for rc in rayclusters if made_for(rc)]


def _held_in(
    region: str, region_jobs: Mapping[str, Obj | None], region_clusters: Mapping[str, Sequence[Obj]], origin: str
) -> str:
    """Why `region`, which Kueue reaches, may still run the job ('' when it does not): it was not read, or it still has
    the job's RayJob this manager made, or a RayCluster of it (`region_clusters`, from `rayclusters_of`)."""
    if region not in region_jobs or region not in region_clusters:
        return f"{region} answers Kueue but was not read by planb"
    job = region_jobs[region]
    if job is not None:  # a RayJob of the job's key blocks even without this manager's origin (the safe side)
        meta = (job or {}).get("metadata") or {}
        state = ((job or {}).get("status") or {}).get("jobDeploymentStatus", "")
        going = ", being deleted" if meta.get("deletionTimestamp") else ""
        theirs = "" if made_by(job, origin) else " (without this manager's origin)"
        return f"{region} still has its RayJob{theirs}, reading {state!r}{going}"
    for rc in region_clusters[region]:
        meta = rc.get("metadata") or {}
        going = ", being deleted" if meta.get("deletionTimestamp") else ""
        return f"{region} still has RayCluster {meta.get('name')} of its RayJob{going}: its pods may still run"
    return ""


def still_held(
    clusters: Mapping[str, Obj],
    region_jobs: Mapping[str, Obj | None],
    origin: str,
    *,
    region_clusters: Mapping[str, Sequence[Obj]],
) -> str:
    """Why a region Kueue reaches may still run the job ('' when none may): `_held_in` for each Active region. The
    keeper counts release_after from the last time this was said, because the RayCluster's pods keep running for
    their grace period after the RayCluster is gone (docs/regions.md, section 4)."""
    for region, cluster in clusters.items():
        held = _held_in(region, region_jobs, region_clusters, origin) if is_active(cluster) else ""
        if held:
            return held
    return ""


def release_blocker(
    clusters: Mapping[str, Obj],
    region_jobs: Mapping[str, Obj | None],
    origin: str,
    lost: Collection[str] = (),
    *,
    region_clusters: Mapping[str, Sequence[Obj]],
    excused: Why = MappingProxyType({}),
) -> str:
    """Why an evicted Workload's quota may not be released yet ('' when it may): a region Kueue reaches (its
    MultiKueueCluster Active) whose RayJob of the job (`region_jobs`, read there: None when it is gone) this manager
    made still exists, whatever it reads (``Suspending`` included), or whose RayCluster of that RayJob
    (`region_clusters`, `rayclusters_of` each region's) does: Kueue deletes a region's RayJob with background
    propagation (kueue v0.19.2 pkg/controller/jobs/ray/ray_multikueue_adapter.go#L294-L299) and KubeRay's Suspended
    waits for the RayCluster object only, not its pods (rayjob_controller.go#L369-L407, #L771-L807). A region that is
    Active but was not read (absent from either mapping) blocks too: planb cannot tell; so does one not Active that is
    not `lost` yet (not Active for lost_after): it may still run the job; nor is one `excused`, unreached for a cause
    on the manager's side (planb.regions.unreached: why, and the fix)."""
    for region, cluster in clusters.items():
        if region in lost:
            continue
        if region in excused:
            return f"{region} is not Active in Kueue, not taken as lost ({excused[region].split(': ', 1)[-1]})"
        if not is_active(cluster):
            return f"{region} is not Active in Kueue, but not lost yet: it may still run the job"
        held = _held_in(region, region_jobs, region_clusters, origin)
        if held:
            return held
    return ""


def stale_copies(
    region: str,
    copies: Sequence[Obj],
    manager_workloads: Mapping[tuple[str, str], Obj],
    origin: str,
    check: str,
    *,
    listed: Collection[str],
) -> tuple[list[Obj], list[Obj]]:
    """The region's copies this manager's MultiKueue made (its `origin`), as (the keeper's to delete, Kueue's GC's):
    the keeper's are copies of a Workload the manager has under its MultiKueue `check` (same namespace and name)
    that is not the job's home (`_not_home`: it runs elsewhere, or, `region` out of the config's clusters `listed`,
    it runs nowhere yet); Kueue's GC's are copies whose manager Workload is gone or being deleted."""

    def name(meta: Obj) -> str:
        return str(meta.get("name"))

    return _stale(region, copies, manager_workloads, origin, check, name, lambda meta, home: True, region in listed)


def stale_jobs(
    region: str,
    jobs: Sequence[Obj],
    manager_workloads: Mapping[tuple[str, str], Obj],
    origin: str,
    check: str,
    *,
    listed: Collection[str],
) -> tuple[list[Obj], list[Obj]]:
    """The region's RayJobs this manager's MultiKueue made (its `origin`), as (the keeper's to delete, Kueue's GC's):
    the keeper's name by their prebuilt-workload mark a Workload the manager has under its MultiKueue `check`, carry
    the name of that Workload's RayJob, and are not where that Workload's job is at home (`_not_home`, with the
    config's clusters `listed`)."""

    def prebuilt(meta: Obj) -> str:
        return str((meta.get("labels") or {}).get(PREBUILT) or (meta.get("annotations") or {}).get(PREBUILT, ""))

    def own(meta: Obj, home: Obj) -> bool:
        return bool(meta.get("name")) and owner_rayjob(home) == meta.get("name")

    return _stale(region, jobs, manager_workloads, origin, check, prebuilt, own, region in listed)


def _stale(
    region: str,
    objs: Sequence[Obj],
    manager_workloads: Mapping[tuple[str, str], Obj],
    origin: str,
    check: str,
    workload_name: Callable[[Obj], str],
    own: Callable[[Obj, Obj], bool],
    in_config: bool,
) -> tuple[list[Obj], list[Obj]]:
    """Of the objects carrying `origin`: those whose manager Workload (same namespace, `workload_name` of their
    metadata) is under `check`, `own`s them and is not at home in `region` (`_not_home`); and those whose manager
    Workload is gone or being deleted. Nothing for an empty origin."""
    delete: list[Obj] = []
    gc: list[Obj] = []
    for obj in objs:
        if not made_by(obj, origin):
            continue
        meta = obj.get("metadata") or {}
        home = manager_workloads.get((str(meta.get("namespace")), workload_name(meta)))
        if home is None or (home.get("metadata") or {}).get("deletionTimestamp"):
            gc.append(obj)
        elif under_check(home, check) and own(meta, home) and _not_home(home, region, in_config):
            delete.append(obj)
    return delete, gc


def _not_home(home: Obj, region: str, in_config: bool) -> bool:
    """Whether the manager Workload's copy in `region` is stale: the Workload runs in another region, or it runs
    nowhere yet (no clusterName) and `region` is not in the MultiKueueConfig (`in_config` False).

    planb's policy: a copy of a Workload still racing is live only in a region of the config,
    because Kueue reads and deletes copies only in the config's clusters (kueue@v0.19.2
    pkg/controller/admissionchecks/multikueue/workload.go#L293-L306, readGroup #L334-L363): a copy left in a region
    out of it is Kueue's to see again only once the region is back, and the earliest Admitted copy wins
    (workload.go#L140-L155), so kept, it could run the job beside the region Kueue chose meanwhile."""
    name = (home.get("status") or {}).get("clusterName") or ""
    if not name:
        return not in_config
    return name != region
