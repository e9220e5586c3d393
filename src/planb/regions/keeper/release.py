"""When the keeper releases the quota an evicted RayJob holds, and why not yet: pure functions over the API's JSON
(the functions) and the
keeper's acts on it (`Release`, run by planb.regions.keeper.tick; docs/regions.md, section 4).

An evicted Workload's quota is released only once its job is inactive
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
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from types import MappingProxyType

from planb.kube import Kube, Obj
from planb.regions.access.connection import region_kube
from planb.regions.access.kueue_objects import (
    RAY_ORIGIN_CRD,
    RAY_ORIGIN_NAME,
    Why,
    condition,
    is_active,
    made_by,
    owner_rayjob,
    owns,
    under_check,
    unreadable,
)
from planb.regions.keeper import grace
from planb.regions.keeper.options import RAY, KeeperSettings
from planb.regions.keeper.writes import ManagerWrites

#: RayJob deployment states Kueue counts as inactive (rayjob_controller.go#L107-L110): Suspended, and New, which
#: KubeRay spells as the empty string (ray-operator/apis/ray/v1/rayjob_types.go#L48).
INACTIVE = ("Suspended", "")

#: The spec.managedBy Kueue defaults on a job whose ClusterQueue has a MultiKueue check
#: (kubernetes-sigs/kueue@v0.19.2 pkg/controller/jobframework/defaults.go#L127-L148), and for which KubeRay leaves the
#: job alone (ray-project/kuberay@v1.6.2 ray-operator/controllers/ray/rayjob_controller.go#L108-L111).
MULTIKUEUE_MANAGED_BY = "kueue.x-k8s.io/multikueue"


def holds_quota_evicted(workload: Obj, check: str) -> bool:
    """A manager Workload under MultiKueue check `check`, evicted, whose quota is still reserved."""
    return (
        under_check(workload, check)
        and condition(workload, "Evicted").get("status") == "True"
        and condition(workload, "QuotaReserved").get("status") == "True"
    )


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


class Release:
    """The keeper's release of held quota: what it remembers between ticks of each evicted Workload, and its acts."""

    def __init__(
        self, manager: Kube, settings: KeeperSettings, say: Callable[[str], None], writes: ManagerWrites
    ) -> None:
        self.manager, self.settings, self.say, self.writes = manager, settings, say, writes
        self.evicted_since: dict[str, float] = {}
        #: Workloads (uid) and the last tick at which a region Kueue reaches still held their RayJob or RayCluster.
        self.held_at: dict[str, float] = {}
        #: Workloads (uid) whose release waits, and the reason last said (each said once).
        self.waiting: dict[str, str] = {}

    def release_held(
        self, workloads: list[Obj], clusters: dict[str, Obj], origin: str, now: float, lost: set[str], excused: Why
    ) -> None:
        """Mark Suspended the manager RayJobs whose evicted Workloads still hold their quota, once no region Kueue
        reaches, or lost less than lost_after ago, still holds the job's RayJob or a RayCluster of it
        (release_blocker), and release_after has passed since the eviction and
        since the last tick at which a region still held either (`held_at`): the RayCluster's pods keep running for
        their grace period after it is gone. Only the RayJob the Workload's ownerReference names by uid."""
        holding = set()
        for workload in workloads:
            meta = workload["metadata"]
            owner = owner_rayjob(workload)
            if not owner or not holds_quota_evicted(workload, self.settings.admission_check):
                continue
            uid = str(meta.get("uid"))
            holding.add(uid)
            evicted = self.evicted_since.setdefault(uid, now)
            path = f"{RAY}/namespaces/{meta['namespace']}/rayjobs/{owner}"
            job = self.manager.get(path)
            if job is None or not owns(workload, job) or not needs_release(job):
                continue
            jobs, rayclusters = self._region_holds(clusters, meta["namespace"], owner, origin)
            if still_held(clusters, jobs, origin, region_clusters=rayclusters):
                self.held_at[uid] = now
            blocker = release_blocker(clusters, jobs, origin, lost, region_clusters=rayclusters, excused=excused)
            if blocker:
                if self.waiting.get(uid) != blocker:
                    self.say(f"not releasing the quota of {meta['namespace']}/{owner} yet: {blocker}")
                    self.waiting[uid] = blocker
                continue
            quiet_since = max(evicted, self.held_at.get(uid, evicted))
            if now - quiet_since < grace.wait_after([job], self.settings.release_after, self.settings.release_margin):
                continue
            # Preconditioned on the resourceVersion read (release.release_patch says why not the uid): a RayJob
            # recreated under the name, or changed, meanwhile is not suspended; the next tick reads it again.
            body = release_patch(job)
            if body is None:
                self.say(f"not releasing the quota of {meta['namespace']}/{owner}: its RayJob has no resourceVersion")
                continue
            if not self.writes.patch(f"{path}/status", body, "RayJob"):
                continue
            self.say(
                f"released the quota of {meta['namespace']}/{owner}: its Workload was evicted "
                f"{now - evicted:.0f} s ago and still held it, no region has held its RayJob or RayCluster for "
                f"{now - quiet_since:.0f} s, its RayJob suspended but reading "
                f"{(job.get('status') or {}).get('jobDeploymentStatus', '')!r} (kueue#15380); it now reads Suspended"
            )
        self.evicted_since = {k: v for k, v in self.evicted_since.items() if k in holding}
        self.held_at = {k: v for k, v in self.held_at.items() if k in holding}
        self.waiting = {k: v for k, v in self.waiting.items() if k in holding}

    def _region_holds(
        self, clusters: dict[str, Obj], namespace: str, name: str, origin: str
    ) -> tuple[dict[str, Obj | None], dict[str, list[Obj]]]:
        """The job's RayJob in each region Kueue reaches (None where it is gone), and the RayClusters of it there
        (rayclusters_of; the region token lists RayClusters cluster-wide); a
        region planb cannot read is left out of both, and so blocks the release."""
        jobs: dict[str, Obj | None] = {}
        rayclusters: dict[str, list[Obj]] = {}
        for region, cluster in clusters.items():
            if not is_active(cluster):
                continue
            try:
                kube = region_kube(self.manager, region)
                job = kube.get(f"{RAY}/namespaces/{namespace}/rayjobs/{name}")
                mine = rayclusters_of(name, kube.items(f"{RAY}/namespaces/{namespace}/rayclusters"))
                still_held({region: cluster}, {region: job}, origin, region_clusters={region: mine})  # read here
            # planb's policy: any error reading one region makes it unreadable, because one must never stop the others
            except Exception as exc:
                self.say(unreadable(region, exc))
                continue
            jobs[region], rayclusters[region] = job, mine
        return jobs, rayclusters
