"""When the keeper releases the quota an evicted RayJob holds, and why not yet: pure functions over the API's JSON and
over what the keeper's tick read (`decide_releases`; planb.regions.keeper.reads reads, planb.regions.keeper.writes
writes; docs/regions.md, section 4).

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

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from planb.kube import Obj
from planb.regions.access.kueue_objects import (
    RAY_ORIGIN_CRD,
    RAY_ORIGIN_NAME,
    Why,
    made_by,
    unreadable,
)
from planb.regions.access.kueue_objects import holds_quota_evicted as holds_quota_evicted  # named here too
from planb.regions.keeper import grace
from planb.regions.keeper.options import KeeperSettings
from planb.regions.keeper.reads import Evicted, Seen
from planb.regions.keeper.writes import Patch

#: RayJob deployment states Kueue counts as inactive (rayjob_controller.go#L107-L110): Suspended, and New, which
#: KubeRay spells as the empty string (ray-operator/apis/ray/v1/rayjob_types.go#L48).
INACTIVE = ("Suspended", "")

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
    active: Sequence[str],
    region_jobs: Mapping[str, Obj | None],
    origin: str,
    *,
    region_clusters: Mapping[str, Sequence[Obj]],
) -> str:
    """Why a region Kueue reaches may still run the job ('' when none may): `_held_in` for each Active region
    (`active`, in the MultiKueueClusters' order). The keeper counts release_after from the last time this was said,
    because the RayCluster's pods keep running for their grace period after the RayCluster is gone (docs/regions.md,
    section 4)."""
    for region in active:
        held = _held_in(region, region_jobs, region_clusters, origin)
        if held:
            return held
    return ""


def release_blocker(
    regions: Mapping[str, bool],
    region_jobs: Mapping[str, Obj | None],
    origin: str,
    lost: Collection[str] = (),
    *,
    region_clusters: Mapping[str, Sequence[Obj]],
    excused: Why = MappingProxyType({}),
) -> str:
    """Why an evicted Workload's quota may not be released yet ('' when it may): a region Kueue reaches (`regions`, in
    the MultiKueueClusters' order: True where it is Active) whose RayJob of the job (`region_jobs`, read there: None
    when it is gone) this manager made still exists, whatever it reads (``Suspending`` included), or whose RayCluster
    of that RayJob (`region_clusters`, `rayclusters_of` each region's) does: Kueue deletes a region's RayJob with
    background propagation (kueue v0.19.2 pkg/controller/jobs/ray/ray_multikueue_adapter.go#L294-L299) and KubeRay's
    Suspended waits for the RayCluster object only, not its pods (rayjob_controller.go#L369-L407, #L771-L807). A
    region that is Active but was not read (absent from either mapping) blocks too: planb cannot tell; so does one not
    Active that is not `lost` yet (not Active for lost_after): it may still run the job; nor is one `excused`,
    unreached for a cause on the manager's side (planb.regions.keeper.unreached: why, and the fix)."""
    for region, active in regions.items():
        if region in lost:
            continue
        if region in excused:
            return f"{region} is not Active in Kueue, not taken as lost ({excused[region].split(': ', 1)[-1]})"
        if not active:
            return f"{region} is not Active in Kueue, but not lost yet: it may still run the job"
        held = _held_in(region, region_jobs, region_clusters, origin)
        if held:
            return held
    return ""


@dataclass(frozen=True)
class ReleaseMemory:
    """What the keeper remembers between ticks of each evicted Workload (by uid): since when it holds its quota
    evicted, the last tick at which a region Kueue reaches still held its RayJob or RayCluster, and why its release
    waits, as last said (each said once)."""

    evicted_since: Mapping[str, float] = field(default_factory=dict)
    held_at: Mapping[str, float] = field(default_factory=dict)
    waiting: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Releases:
    """The release decisions of one tick: the memory after it, the lines to say, the RayJob status writes."""

    memory: ReleaseMemory
    said: tuple[str, ...]
    patches: tuple[Patch, ...]


def decide_releases(
    seen: Seen, lost: Collection[str], excused: Why, memory: ReleaseMemory, settings: KeeperSettings, now: float
) -> Releases:
    """Which manager RayJobs, their evicted Workloads still holding quota (`seen.evicted`, by uid), to mark Suspended:
    once no region Kueue reaches, or lost less than lost_after ago, still holds the job's RayJob or a RayCluster of it
    (release_blocker), and release_after has passed since the eviction and since the last tick at which a region
    still held either (`held_at`): the RayCluster's pods keep running for their grace period after it is gone. Only
    the RayJob the Workload's ownerReference names by uid, and only one MultiKueue manages (`needs_release`)."""
    evicted_since = {uid: memory.evicted_since.get(uid, now) for uid in seen.evicted}
    held_at = {uid: at for uid, at in memory.held_at.items() if uid in seen.evicted}
    waiting = {uid: why for uid, why in memory.waiting.items() if uid in seen.evicted}
    said: list[str | tuple[str, Exception]] = []  # a region not read: its line said in its place (unreadable)
    patches: list[Patch] = []
    for uid, held in seen.evicted.items():
        job = held.rayjob
        if job is None or not held.owned or not needs_release(job):
            continue
        jobs, rayclusters = _region_holds(seen, held, said)
        name, evicted = f"{held.namespace}/{held.owner}", evicted_since[uid]
        regions = {r: r in seen.active for r in seen.clusters}
        if still_held([r for r, active in regions.items() if active], jobs, seen.origin, region_clusters=rayclusters):
            held_at[uid] = now
        why = release_blocker(regions, jobs, seen.origin, lost, region_clusters=rayclusters, excused=excused)
        # Preconditioned on the resourceVersion read (release_patch says why not the uid): a RayJob recreated under
        # the name, or changed, meanwhile is not suspended; the next tick reads it again.
        body = release_patch(job)
        if why:
            if waiting.get(uid) != why:
                said.append(f"not releasing the quota of {name} yet: {why}")
                waiting[uid] = why
            continue
        quiet_since = max(evicted, held_at.get(uid, evicted))
        if now - quiet_since < grace.wait_after([job], settings.release_after, settings.release_margin):
            continue
        if body is None:
            said.append(f"not releasing the quota of {name}: its RayJob has no resourceVersion")
            continue
        reading = (job.get("status") or {}).get("jobDeploymentStatus", "")
        done = (
            f"released the quota of {name}: its Workload was evicted {now - evicted:.0f} s ago and still held it, no "
            f"region has held its RayJob or RayCluster for {now - quiet_since:.0f} s, its RayJob suspended but "
            f"reading {reading!r} (kueue#15380); it now reads Suspended"
        )
        patches.append(Patch(f"{held.path}/status", body, "RayJob", done))
    lines = tuple(line if isinstance(line, str) else unreadable(*line) for line in said)
    return Releases(ReleaseMemory(evicted_since, held_at, waiting), lines, tuple(patches))


def _region_holds(
    seen: Seen, held: Evicted, said: list[str | tuple[str, Exception]]
) -> tuple[dict[str, Obj | None], dict[str, list[Obj]]]:
    """The job's RayJob in each region Kueue reaches (None where it is gone), and the RayClusters of it there
    (rayclusters_of; the region token lists RayClusters cluster-wide), as read; a region planb could not read, or
    whose answer it cannot read, is left out of both, and so blocks the release (it and why added to `said`)."""
    jobs: dict[str, Obj | None] = {}
    rayclusters: dict[str, list[Obj]] = {}
    for region in seen.clusters:
        if region not in seen.active:
            continue
        try:
            answers = seen.regions[region]
            job = answers.get(held.region_job)
            mine = rayclusters_of(held.owner, answers.items(held.region_clusters))
            still_held([region], {region: job}, seen.origin, region_clusters={region: mine})  # readable
        # planb's policy: any error reading one region makes it unreadable, because one must never stop the others
        except Exception as exc:
            said.append((region, exc))
            continue
        jobs[region], rayclusters[region] = job, mine
    return jobs, rayclusters
