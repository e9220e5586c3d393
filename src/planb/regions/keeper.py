"""The regions keeper: run on (or beside) the MultiKueue manager, it quarantines a lost region, releases the quota an
evicted RayJob holds, and lets a region back only once nothing stale of it is left (planb.regions.decisions says
when, and why; docs/regions.md, section 4).

Each `tick()` reads everything again (MultiKueueClusters, the MultiKueueConfig, the manager's Workloads) and acts on
what it finds, so a keeper restarted at any point picks up where the cluster stands; only the time a region has
been lost and a Workload has held its quota while evicted are kept in memory (a restart counts them again). It
writes the MultiKueueConfig with its resourceVersion (a conflict is retried at the next tick), never
``nominatedClusterNames`` and never a Workload.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from planb.kube import Kube, KubeError, Obj
from planb.regions import decisions as d
from planb.regions.access import KUEUE, RegionAccessError, region_kube

RAY = "/apis/ray.io/v1"


def _say(line: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} planb regions keep: {line}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class KeeperSettings:
    #: The MultiKueueConfig planb's multikueue role writes, and its AdmissionCheck (the role names both alike).
    config: str = "planb-regions"
    admission_check: str = "planb-regions"
    #: Seconds a region may be not Active before it is quarantined (Kueue's own workerLostTimeout is 15 min).
    lost_after: float = 300.0
    #: Seconds an evicted Workload may hold its quota, its RayJob suspended, before the keeper releases it.
    release_after: float = 30.0
    #: The manager Kueue's ``multiKueue.origin``: the keeper deletes in a region only what carries it.
    origin: str = d.DEFAULT_ORIGIN


class Keeper:
    def __init__(
        self,
        manager: Kube,
        settings: KeeperSettings,
        say: Callable[[str], None] = _say,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.manager = manager
        self.settings = settings
        self.say = say
        self.clock = clock
        self.inactive_since: dict[str, float] = {}
        self.evicted_since: dict[str, float] = {}

    @property
    def config_path(self) -> str:
        return f"{KUEUE}/multikueueconfigs/{self.settings.config}"

    def tick(self) -> None:
        """One look at the manager and the quarantined regions, and what it calls for."""
        now = self.clock()
        clusters = {str(c["metadata"]["name"]): c for c in self.manager.items(f"{KUEUE}/multikueueclusters")}
        for name, cluster in clusters.items():
            if d.is_active(cluster):
                self.inactive_since.pop(name, None)
            else:
                self.inactive_since.setdefault(name, now)
        workloads = self.manager.items(f"{KUEUE}/workloads")
        self.release(workloads, now)
        config = self.manager.get(self.config_path)
        if config is None:
            return
        if not self.quarantine(config, clusters, now):
            self.rejoin(config, clusters, workloads)

    # ------------------------------------------------------------------ quarantine
    def quarantine(self, config: Obj, clusters: dict[str, Obj], now: float) -> bool:
        """Take the lost regions out of the config; True when it wrote it."""
        listed = [str(c) for c in (config.get("spec") or {}).get("clusters") or []]
        lost = d.to_quarantine(listed, self.inactive_since, now, self.settings.lost_after)
        if not lost:
            return False
        for name in lost:
            active = d.condition(clusters.get(name, {}), "Active")
            self.say(
                f"quarantining {name}: Kueue has not reached it for {now - self.inactive_since[name]:.0f} s "
                f"({active.get('reason', 'no Active condition')}: {active.get('message', '')}); it leaves the "
                f"MultiKueueConfig {self.settings.config} until it answers again and nothing stale is left there"
            )
        self._write_config(config, [c for c in listed if c not in lost], d.quarantined(config) + lost)
        return True

    # ------------------------------------------------------------------ release
    def release(self, workloads: list[Obj], now: float) -> None:
        """Mark Suspended the manager RayJobs whose evicted Workloads have held their quota for release_after."""
        holding = set()
        for workload in workloads:
            meta = workload["metadata"]
            owner = d.owner_rayjob(workload)
            if not owner or not d.holds_quota_evicted(workload, self.settings.admission_check):
                continue
            uid = str(meta.get("uid"))
            holding.add(uid)
            if now - self.evicted_since.setdefault(uid, now) < self.settings.release_after:
                continue
            path = f"{RAY}/namespaces/{meta['namespace']}/rayjobs/{owner}"
            job = self.manager.get(path)
            if job is None or not d.needs_release(job):
                continue
            self.manager.merge_patch(f"{path}/status", {"status": {"jobDeploymentStatus": "Suspended"}})
            self.say(
                f"released the quota of {meta['namespace']}/{owner}: its Workload was evicted "
                f"{now - self.evicted_since[uid]:.0f} s ago and still held it, its RayJob suspended but reading "
                f"{(job.get('status') or {}).get('jobDeploymentStatus', '')!r} (kueue#15380); it now reads Suspended"
            )
        self.evicted_since = {k: v for k, v in self.evicted_since.items() if k in holding}

    # ------------------------------------------------------------------ rejoin
    def rejoin(self, config: Obj, clusters: dict[str, Obj], workloads: list[Obj]) -> None:
        """Delete what is stale on each quarantined region that answers again; let back those left clean."""
        away = d.quarantined(config)
        homes = {(str(w["metadata"]["namespace"]), str(w["metadata"]["name"])): w for w in workloads}
        back = []
        for name in away:
            if name not in clusters:  # the region was removed from the manager: forget it
                back.append(name)
                continue
            if not d.is_active(clusters[name]):
                continue
            try:
                if self._clean(name, homes):
                    back.append(name)
            except (RegionAccessError, KubeError) as exc:
                self.say(f"{name} answers Kueue again but not planb yet: {exc}")
        if back:
            listed = [str(c) for c in (config.get("spec") or {}).get("clusters") or []]
            returning = [n for n in back if n in clusters and n not in listed]
            self._write_config(config, listed + returning, [n for n in away if n not in back])
            if returning:
                self.say(
                    f"{', '.join(returning)} back in the MultiKueueConfig {self.settings.config}: nothing stale left"
                )

    def _clean(self, region: str, homes: dict[tuple[str, str], Obj]) -> bool:
        """Delete the region's stale copies and RayJobs; True when there were none left to delete."""
        kube = region_kube(self.manager, region)
        origin = self.settings.origin
        selector = {"labelSelector": f"{d.ORIGIN}={origin}"}
        copies = d.stale_copies(region, kube.items(f"{KUEUE}/workloads", selector), homes, origin)
        jobs = d.stale_jobs(region, kube.items(f"{RAY}/rayjobs", selector), homes, origin)
        for obj, kind in [*((c, "workloads") for c in copies), *((j, "rayjobs") for j in jobs)]:
            meta = obj["metadata"]
            if meta.get("deletionTimestamp"):  # going: its finalizers are Kueue's or KubeRay's to clear there
                continue
            group = KUEUE if kind == "workloads" else RAY
            kube.delete(
                f"{group}/namespaces/{meta['namespace']}/{kind}/{meta['name']}", {"propagationPolicy": "Background"}
            )
            name = f"{meta['namespace']}/{meta['name']}"
            self.say(f"{region}: deleted the stale {kind[:-1]} {name} (its job is gone or runs elsewhere)")
        return not copies and not jobs

    def _write_config(self, config: Obj, clusters: list[str], away: list[str]) -> None:
        body = {
            "metadata": {
                "resourceVersion": config["metadata"]["resourceVersion"],
                "annotations": {d.QUARANTINED: json.dumps(away) if away else None},
            },
            "spec": {"clusters": clusters},
        }
        try:
            self.manager.merge_patch(self.config_path, body)
        except KubeError as exc:
            if exc.status != 409:
                raise
            self.say(f"the MultiKueueConfig {self.settings.config} changed meanwhile; trying again")


def run(keeper: Keeper, poll_seconds: float, once: bool = False) -> None:
    """Tick every poll_seconds until interrupted; a manager that does not answer is said and tried again."""
    while True:
        try:
            keeper.tick()
        except (KubeError, RegionAccessError) as exc:
            keeper.say(f"the manager did not answer: {exc}")
        if once:
            return
        time.sleep(poll_seconds)
