"""The regions keeper: run on (or beside) the MultiKueue manager, it quarantines a lost region, releases the quota an
evicted RayJob holds, and lets a region back only once nothing stale of it is left (planb.regions.decisions says
when, and why; docs/regions.md, section 4).

Each `tick()` reads everything again (MultiKueueClusters, the MultiKueueConfig, the keeper's ConfigMap, the manager's
Workloads) and acts on what it finds, so a keeper restarted at any point picks up where the cluster stands; only the
times a region was lost or last held something stale, and a Workload has held its quota while evicted, are kept
in memory (a restart counts them again); what a region holds is read from it (planb.regions.leftovers). It writes
the MultiKueueConfig and its ConfigMap with their resourceVersions (a conflict is retried at the next tick), never a
Workload's spec; ``nominatedClusterNames`` only through its dispatcher, when it is given one (``planb regions keep
--dispatch``, ``planb.regions.dispatcher``: advice-ordered dispatch, the manager's Kueue configured with planb's
External dispatcher name). The ConfigMap (``<config>-keeper`` in Kueue's namespace, which only the operator and Kueue
write) holds the manager's origin, which the regions playbook wrote, the quarantined regions (a region leaves that
list only after it is back in the config, and joins it before it leaves) and what each waits for (planb status).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from planb.catalog import profiles, training
from planb.kube import Kube, KubeError, Obj, printable
from planb.regions import decisions as d
from planb.regions import grace, leftovers
from planb.regions.access import KUEUE, region_kube
from planb.regions.dispatcher import Dispatcher
from planb.regions.grace import RELEASE_MARGIN_S
from planb.regions.keeper_state import KeeperStateError, checked_origin
from planb.regions.unreached import manager_side

__all__ = ["RELEASE_MARGIN_S", "Keeper", "KeeperSettings", "KeeperStateError"]

RAY = "/apis/ray.io/v1"
#: The most characters of one region line the keeper says once (planb.regions.leftovers.cap).
SAID_CHARS = 4096
#: The default release_after: the largest terminationGracePeriodSeconds of the chart's workers over the catalog's
#: profiles (planb.catalog.training; 75 s, its preStop save included) plus the margin; a job whose pods are given more
#: (job.workers.terminationGracePeriodSeconds) is waited for longer (planb.regions.grace).
RELEASE_AFTER_S = float(max(training.grace_period_seconds(p) for p in profiles.names()) + RELEASE_MARGIN_S)


def _say(line: str) -> None:
    print(
        f"{time.strftime('%H:%M:%S')} planb regions keep: {printable(line, one_line=True)}", file=sys.stderr, flush=True
    )


@dataclass(frozen=True)
class KeeperSettings:
    #: The MultiKueueConfig planb's multikueue role writes, and its AdmissionCheck (the role names both alike).
    config: str = "planb-regions"
    admission_check: str = "planb-regions"
    #: Seconds a region may be not Active before it is quarantined: Kueue's own workerLostTimeout, 15 min
    #: (kubernetes-sigs/kueue@v0.19.2 apis/config/v1beta2/defaults.go#L50, waited in
    #: pkg/controller/admissionchecks/multikueue/workload.go#L551-L560). planb's policy: not less, because a quarantine
    #: makes Kueue retry at once (workload.go#L568), and a zonal control plane can be out longer than 5 min (an
    #: upgrade, an outage) while the region's nodes still run the job.
    lost_after: float = 900.0
    #: Seconds an evicted Workload may hold its quota, its RayJob suspended, before the keeper releases it, counted
    #: from the eviction and from the last tick at which a region still held its RayJob or RayCluster: past the
    #: largest grace period of the chart's workers, whose pods outlive their RayCluster (`RELEASE_AFTER_S`).
    release_after: float = RELEASE_AFTER_S
    #: Seconds past a job's own largest grace period the keeper waits as well (planb.regions.grace).
    release_margin: float = RELEASE_MARGIN_S
    #: The manager Kueue's ``multiKueue.origin``: the keeper deletes in a region only what carries it. Empty: the one
    #: the regions playbook wrote in the keeper's ConfigMap (the keeper acts on nothing without one).
    origin: str = ""
    #: Kueue's namespace on the manager, where the keeper's ConfigMap lives.
    namespace: str = "kueue-system"


class Keeper:
    def __init__(
        self,
        manager: Kube,
        settings: KeeperSettings,
        say: Callable[[str], None] = _say,
        clock: Callable[[], float] = time.monotonic,
        dispatcher: Dispatcher | None = None,
    ) -> None:
        self.manager = manager
        #: Advice-ordered dispatch (planb.regions.dispatcher), or None: Kueue's own dispatcher nominates.
        self.dispatcher = dispatcher
        self.settings = settings
        # Every line escaped (cluster text: a MultiKueueCluster's message, an API server's error), whoever says it.
        self.say: Callable[[str], None] = lambda line: say(printable(line, one_line=True))
        self.clock = clock
        self.inactive_since: dict[str, float] = {}
        self.evicted_since: dict[str, float] = {}
        #: Workloads (uid) and the last tick at which a region Kueue reaches still held their RayJob or RayCluster.
        self.held_at: dict[str, float] = {}
        #: Workloads (uid) whose release waits, and the reason last said (each said once).
        self.waiting: dict[str, str] = {}
        #: Per quarantined region: what was last said of it, by topic; the first tick it answered, then the last at
        #: which it held anything stale (let back release_after after); what it waits for as last written.
        self.said_of: dict[tuple[str, str], str] = {}
        self.region_held_at: dict[str, float] = {}
        self.region_wait: dict[str, float] = {}  # and the wait after it (planb.regions.grace)
        self.waiting_written: dict[str, str] | None = None
        #: Regions not Active for lost_after but not taken as lost (planb.regions.unreached), as last said.
        self.excused_said: dict[str, str] = {}

    @property
    def config_path(self) -> str:
        return f"{KUEUE}/multikueueconfigs/{self.settings.config}"

    @property
    def state_path(self) -> str:
        return f"/api/v1/namespaces/{self.settings.namespace}/configmaps/{self.settings.config}-keeper"

    def state(self) -> tuple[Obj, str]:
        """The keeper's ConfigMap and this manager's origin (the settings' if given, else the ConfigMap's)."""
        name = f"{self.settings.namespace}/{self.settings.config}-keeper"
        return checked_origin(self.manager.get(self.state_path), self.settings.origin, name)

    def tick(self) -> None:
        """One look at the manager and the quarantined regions, and what it calls for."""
        now = self.clock()
        state, origin = self.state()
        clusters = {str(c["metadata"]["name"]): c for c in self.manager.items(f"{KUEUE}/multikueueclusters")}
        for name, cluster in clusters.items():
            if d.is_active(cluster):
                self.inactive_since.pop(name, None)
            else:
                self.inactive_since.setdefault(name, now)
        # Not Active for lost_after, unless the cause is on the manager's side (planb.regions.unreached says why).
        late = [n for n, since in self.inactive_since.items() if now - since >= self.settings.lost_after]
        excused = {
            n: why for n in late if n in clusters and (why := manager_side(self.manager, n, clusters[n], time.time()))
        }
        for name, why in excused.items():
            if self.excused_said.get(name) != why:
                self.say(f"not taking {why.split(': ', 1)[0]} as lost: {why.split(': ', 1)[-1]}")
        self.excused_said = excused
        lost = {n for n in late if n not in excused}
        workloads = self.manager.items(f"{KUEUE}/workloads")
        self.release(workloads, clusters, origin, now, lost, excused)
        config = self.manager.get(self.config_path)
        if config is None:
            return
        if not self.quarantine(config, state, clusters, now, lost):
            self.rejoin(config, state, clusters, workloads, origin, now)
        if self.dispatcher is not None:
            self.dispatcher.tick(workloads, clusters, config)

    # ------------------------------------------------------------------ quarantine
    def quarantine(self, config: Obj, state: Obj, clusters: dict[str, Obj], now: float, gone: set[str]) -> bool:
        """Take the lost regions (`gone`) out of the config (the ConfigMap's list first); True when it wrote them."""
        listed = [str(c) for c in (config.get("spec") or {}).get("clusters") or []]
        since = {n: s for n, s in self.inactive_since.items() if n in gone}
        lost = d.to_quarantine(listed, since, now, self.settings.lost_after)
        if not lost:
            return False
        for name in lost:
            active = d.condition(clusters.get(name, {}), "Active")
            self.say(
                f"quarantining {name}: Kueue has not reached it for {now - self.inactive_since[name]:.0f} s "
                f"({active.get('reason', 'no Active condition')}: {active.get('message', '')}); it leaves the "
                f"MultiKueueConfig {self.settings.config} until it answers again and nothing stale is left there"
            )
        away = d.quarantined(state)
        if self._write_state(state, away + [n for n in lost if n not in away]):
            self._write_config(config, [c for c in listed if c not in lost])
        return True

    # ------------------------------------------------------------------ release
    def release(
        self, workloads: list[Obj], clusters: dict[str, Obj], origin: str, now: float, lost: set[str], excused: d.Why
    ) -> None:
        """Mark Suspended the manager RayJobs whose evicted Workloads still hold their quota, once no region Kueue
        reaches, or lost less than lost_after ago, still holds the job's RayJob or a RayCluster of it
        (planb.regions.decisions.release_blocker), and release_after has passed since the eviction and since the last
        tick at which a region still held either (`held_at`): the RayCluster's pods keep running for their grace
        period after it is gone. Only the RayJob the Workload's ownerReference names by uid."""
        holding = set()
        for workload in workloads:
            meta = workload["metadata"]
            owner = d.owner_rayjob(workload)
            if not owner or not d.holds_quota_evicted(workload, self.settings.admission_check):
                continue
            uid = str(meta.get("uid"))
            holding.add(uid)
            evicted = self.evicted_since.setdefault(uid, now)
            path = f"{RAY}/namespaces/{meta['namespace']}/rayjobs/{owner}"
            job = self.manager.get(path)
            if job is None or not d.owns(workload, job) or not d.needs_release(job):
                continue
            jobs, rayclusters = self._region_holds(clusters, meta["namespace"], owner, origin)
            if d.still_held(clusters, jobs, origin, region_clusters=rayclusters):
                self.held_at[uid] = now
            blocker = d.release_blocker(clusters, jobs, origin, lost, region_clusters=rayclusters, excused=excused)
            if blocker:
                if self.waiting.get(uid) != blocker:
                    self.say(f"not releasing the quota of {meta['namespace']}/{owner} yet: {blocker}")
                    self.waiting[uid] = blocker
                continue
            quiet_since = max(evicted, self.held_at.get(uid, evicted))
            if now - quiet_since < grace.wait_after([job], self.settings.release_after, self.settings.release_margin):
                continue
            # Preconditioned on the resourceVersion read (d.release_patch says why not the uid): a RayJob recreated
            # under the name, or changed, meanwhile is not suspended; the next tick reads it again.
            body = d.release_patch(job)
            if body is None:
                self.say(f"not releasing the quota of {meta['namespace']}/{owner}: its RayJob has no resourceVersion")
                continue
            if not self._patch(f"{path}/status", body, "RayJob"):
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
        (planb.regions.decisions.rayclusters_of; the region token lists RayClusters cluster-wide); a region planb
        cannot read is left out of both, and so blocks the release."""
        jobs: dict[str, Obj | None] = {}
        rayclusters: dict[str, list[Obj]] = {}
        for region, cluster in clusters.items():
            if not d.is_active(cluster):
                continue
            try:
                kube = region_kube(self.manager, region)
                job = kube.get(f"{RAY}/namespaces/{namespace}/rayjobs/{name}")
                mine = d.rayclusters_of(name, kube.items(f"{RAY}/namespaces/{namespace}/rayclusters"))
                d.still_held({region: cluster}, {region: job}, origin, region_clusters={region: mine})  # read here
            # planb's policy: any error reading one region makes it unreadable, because one must never stop the others
            except Exception as exc:
                self.say(d.unreadable(region, exc))
                continue
            jobs[region], rayclusters[region] = job, mine
        return jobs, rayclusters

    # ------------------------------------------------------------------ rejoin
    def rejoin(
        self, config: Obj, state: Obj, clusters: dict[str, Obj], workloads: list[Obj], origin: str, now: float
    ) -> None:
        """Delete what is stale on each quarantined region that answers again; let back those left clean for
        release_after (into the config first, then out of the ConfigMap's list)."""
        away = d.quarantined(state)
        homes = {(str(w["metadata"]["namespace"]), str(w["metadata"]["name"])): w for w in workloads}
        # The config as this tick read it, once: `region in listed` decides both whether a region is cleaned and
        # (stale_copies) whether a copy of a Workload still racing is live there. Only a region out of it is cleaned,
        # so such copies are deleted. The config may change between this read and a delete (an operator or the
        # playbook puts the region back): the keeper itself adds a region back only after a tick whose cleaning left
        # nothing, by a write preconditioned on the resourceVersion read here (a change meanwhile is a conflict, and
        # the next tick reads again); another writer's add is bounded by one tick's deletes, each preconditioned on
        # the uid listed, so a copy Kueue creates after the add is never deleted, and a deleted copy is one Kueue
        # either re-creates (racing) or never sees: deleting never lets a job run twice.
        listed = [str(c) for c in (config.get("spec") or {}).get("clusters") or []]
        back = []
        waiting: dict[str, str] = {}
        for name in away:
            # Removed from the manager: forget it. Back in the config (put there by hand or by the playbook): Kueue
            # races it again, so planb's policy is to clean nothing there, because its copies may be live.
            if name not in clusters or name in listed:
                back.append(name)
                continue
            if not d.is_active(clusters[name]):
                self.region_held_at.pop(name, None)  # counted again from when it answers
                waiting[name] = "waiting for Kueue to reach it again"
                continue
            try:
                stale, wait = self._clean(name, homes, origin, listed)
            except Exception as exc:  # planb's policy: any error: unreadable, because one region never stops the others
                waiting[name] = d.unreadable(name, exc, "answers Kueue again but not planb yet")
                self.say(waiting[name])
                self.region_held_at[name] = now  # unread: taken as holding something stale, as the release path does
                continue
            # planb's policy: a region is let back release_after after the first tick it answered and the last at
            # which it still held a stale copy, RayJob or RayCluster, as the release path waits (held_at), because
            # KubeRay's Suspended waits for the RayCluster object only, not its pods (ray-project/kuberay@v1.6.2
            # ray-operator/controllers/ray/rayjob_controller.go#L369-L407, #L771-L807) and Kueue deletes a region's
            # RayJob with background propagation (kubernetes-sigs/kueue@v0.19.2
            # pkg/controller/jobs/ray/ray_multikueue_adapter.go#L294-L299): back earlier, Kueue could start the job
            # there while the old one's pods still run their grace period. From the first answer too: a keeper
            # restarted after the last RayCluster went cannot tell how long ago that was.
            # The wait: the largest of the stale RayJobs' and RayClusters' grace periods seen (planb.regions.grace).
            held = self.region_held_at.setdefault(name, now)
            wait = self.region_wait[name] = max(wait, self.region_wait.get(name, wait))
            if stale:
                self.region_held_at[name] = now
                waiting[name] = leftovers.waiting_line(stale)
            elif now - held >= wait:
                back.append(name)
            else:
                waiting[name] = f"nothing stale left; back {wait:g} s after the last was gone"
        self.region_held_at = {k: v for k, v in self.region_held_at.items() if k in away}  # a conflict: no new wait
        self.region_wait = {k: v for k, v in self.region_wait.items() if k in away}
        self.said_of = {k: v for k, v in self.said_of.items() if k[0] in away}
        returning = [n for n in back if n in clusters and n not in listed]
        if returning and not self._write_config(config, listed + returning):
            return
        if (back or waiting != self._written(state)) and self._write_state(
            state, [n for n in away if n not in back], waiting
        ):
            self.waiting_written = waiting
        if returning:
            self.say(f"{', '.join(returning)} back in the MultiKueueConfig {self.settings.config}: nothing stale left")

    def _written(self, state: Obj) -> dict[str, str]:  # what they wait for as this keeper wrote it, else as stored
        return self.waiting_written if self.waiting_written is not None else leftovers.waiting_of(state)

    def _clean(
        self, region: str, homes: dict[tuple[str, str], Obj], origin: str, listed: list[str]
    ) -> tuple[list[str], float]:
        """Delete the region's stale copies and RayJobs this manager's Kueue made for its Workloads; what keeps the
        region out (leftovers.describe of each; none: clean) and the wait after the last is gone (their RayJobs' and
        RayClusters' grace, planb.regions.grace): those, copies of gone Workloads (Kueue's GC's) and the
        RayClusters of stale RayJobs, listed now or deleted before (leftovers.stale_rayclusters). `listed`: the
        MultiKueueConfig's clusters as this tick read them. The region token lists RayJobs and RayClusters anywhere."""
        kube = region_kube(self.manager, region)
        check = self.settings.admission_check
        workloads = kube.items(f"{KUEUE}/workloads", {"labelSelector": f"{d.ORIGIN}={origin}"})
        copies, orphans = d.stale_copies(region, workloads, homes, origin, check, listed=listed)
        rayjobs = kube.items(f"{RAY}/rayjobs")
        jobs, gone = d.stale_jobs(region, rayjobs, homes, origin, check, listed=listed)
        mine = leftovers.dispatched(homes.values(), check)  # only a job's of this manager keeps it out
        listed_rcs = kube.items(f"{RAY}/rayclusters")
        rayclusters = leftovers.stale_rayclusters(listed_rcs, rayjobs, [*jobs, *gone], origin, mine)
        names = ", ".join(f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in orphans)
        self._say_once(region, "orphans", f"waiting for Kueue's GC to delete the copies of gone Workloads: {names}")
        names = ", ".join(f"{rc['metadata'].get('namespace')}/{rc['metadata'].get('name')}" for rc in rayclusters)
        self._say_once(region, "rayclusters", f"waiting for the RayClusters of its stale RayJobs to be gone: {names}")
        left = [
            *((leftovers.describe("Workload", w), w) for w in [*copies, *orphans]),
            *((leftovers.describe("RayJob", j), j) for j in jobs),
            *((leftovers.describe("RayCluster", rc), rc) for rc in rayclusters),
        ]
        # planb's policy: one stuck on a finalizer is said with its finalizers, because it keeps the region out.
        going = "; ".join(text for text, obj in left if (obj.get("metadata") or {}).get("deletionTimestamp"))
        self._say_once(region, "going", f"kept out until these are deleted (their finalizers cleared): {going}")
        for obj, kind in [*((c, "workloads") for c in copies), *((j, "rayjobs") for j in jobs)]:
            meta = obj["metadata"]
            # Going: its finalizers are Kueue's or KubeRay's to clear there. No uid (never so from an API server):
            # nothing to precondition on, and a null uid would make the delete unconditional.
            if meta.get("deletionTimestamp") or not meta.get("uid"):
                continue
            group = KUEUE if kind == "workloads" else RAY
            # Preconditioned on the uid listed: an object of the same name made meanwhile (another manager's RayJob
            # under the same key) is not this one.
            options = {"propagationPolicy": "Background", "preconditions": {"uid": str(meta["uid"])}}
            kube.delete(f"{group}/namespaces/{meta['namespace']}/{kind}/{meta['name']}", options)
            name = f"{meta['namespace']}/{meta['name']}"
            self.say(f"{region}: deleted the stale {kind[:-1]} {name} (its job is gone or runs elsewhere)")
        return [text for text, _ in left], grace.wait_after(
            [*jobs, *gone, *rayclusters], self.settings.release_after, self.settings.release_margin
        )

    def _say_once(self, region: str, topic: str, line: str) -> None:  # when what follows its colon is new, not ""
        line = leftovers.cap(line, SAID_CHARS)
        detail = line.split(": ", 1)[-1]
        if detail and self.said_of.get((region, topic)) != detail:
            self.say(f"{region}: {line}")
        self.said_of[(region, topic)] = detail

    def _write_config(self, config: Obj, clusters: list[str]) -> bool:
        """The config's clusters (the old annotation removed); False when it changed meanwhile."""
        annotations = (config.get("metadata") or {}).get("annotations") or {}
        metadata: Obj = {"resourceVersion": config["metadata"]["resourceVersion"]}
        if d.OLD_QUARANTINED in annotations:
            metadata["annotations"] = {d.OLD_QUARANTINED: None}
        return self._patch(self.config_path, {"metadata": metadata, "spec": {"clusters": clusters}}, "MultiKueueConfig")

    def _write_state(self, state: Obj, away: list[str], waiting: dict[str, str] | None = None) -> bool:
        """The ConfigMap's quarantine list, and what its regions wait for when that changed (`waiting`, for planb
        status: leftovers.WAITING_KEY); False when the ConfigMap changed meanwhile."""
        data: Obj = {d.QUARANTINED_KEY: json.dumps(away) if away else None}
        kept = {k: v for k, v in (waiting or {}).items() if k in away}
        if waiting is not None and kept != self._written(state):
            data[leftovers.WAITING_KEY] = json.dumps(kept, sort_keys=True) if kept else None
        body = {"metadata": {"resourceVersion": state["metadata"]["resourceVersion"]}, "data": data}
        return self._patch(self.state_path, body, "ConfigMap")

    def _patch(self, path: str, body: Obj, kind: str) -> bool:
        try:
            self.manager.merge_patch(path, body)
        except KubeError as exc:
            name = path.removesuffix("/status").rsplit("/", 1)[-1]
            if exc.status == 422:  # planb's policy: said, and the tick goes on, because the rest of it does not need it
                self.say(f"the manager refused the write of the {kind} {name} (422: {leftovers.cap(str(exc), 500)})")
                return False
            if exc.status != 409:
                raise
            self.say(f"the {kind} {name} changed meanwhile; trying again")
            return False
        return True
