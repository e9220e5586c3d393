"""The regions keeper: run on (or beside) the MultiKueue manager, it quarantines a lost region, releases the quota an
evicted RayJob holds, and lets a region back only once nothing stale of it is left (planb.regions.keeper.tick says
when, and why; docs/regions.md, section 4).

Each `tick()` reads everything again (MultiKueueClusters, the MultiKueueConfig, the keeper's ConfigMap, the manager's
Workloads) and acts on what it finds, so a keeper restarted at any point picks up where the cluster stands; only the
times a region was lost or last held something stale, and a Workload has held its quota while evicted, are kept
in memory (a restart counts them again); what a region holds is read from it (planb.regions.keeper.leftovers). It
writes the MultiKueueConfig and its ConfigMap with their resourceVersions (a conflict is retried at the next tick),
never a Workload's spec; ``nominatedClusterNames`` only through its dispatcher, when it is given one (``planb regions
keep
--dispatch``, ``planb.regions.dispatcher.tick``: advice-ordered dispatch, the manager's Kueue configured with
planb's External dispatcher name). The ConfigMap (``<config>-keeper`` in Kueue's namespace, which only the operator and
Kueue write) holds the manager's origin, which the regions playbook wrote, the quarantined regions (a region leaves that
list only after it is back in the config, and joins it before it leaves) and what each waits for (planb status).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from planb.kube import Kube, Obj, printable
from planb.regions.access import kueue_objects as ko
from planb.regions.access.connection import KUEUE
from planb.regions.dispatcher.tick import Dispatcher
from planb.regions.keeper import quarantine
from planb.regions.keeper.options import KeeperSettings, say
from planb.regions.keeper.origin import KeeperStateError, checked_origin
from planb.regions.keeper.rejoin import Rejoin
from planb.regions.keeper.release import Release
from planb.regions.keeper.unreached import manager_side
from planb.regions.keeper.writes import ManagerWrites

__all__ = ["Keeper", "KeeperSettings", "KeeperStateError", "say"]


class Keeper:
    def __init__(
        self,
        manager: Kube,
        settings: KeeperSettings,
        say: Callable[[str], None] = say,
        clock: Callable[[], float] = time.monotonic,
        dispatcher: Dispatcher | None = None,
    ) -> None:
        self.manager = manager
        #: Advice-ordered dispatch (planb.regions.dispatcher.tick), or None: Kueue's own dispatcher nominates.
        self.dispatcher = dispatcher
        self.settings = settings
        # Every line escaped (cluster text: a MultiKueueCluster's message, an API server's error), whoever says it.
        self.say: Callable[[str], None] = lambda line: say(printable(line, one_line=True))
        self.clock = clock
        self.inactive_since: dict[str, float] = {}
        #: Regions not Active for lost_after but not taken as lost (planb.regions.keeper.unreached), as last said.
        self.excused_said: dict[str, str] = {}
        self.writes = ManagerWrites(manager, settings, self.say)
        self.releases = Release(manager, settings, self.say, self.writes)
        self.rejoins = Rejoin(manager, settings, self.say, self.writes)

    def state(self) -> tuple[Obj, str]:
        """The keeper's ConfigMap and this manager's origin (the settings' if given, else the ConfigMap's)."""
        name = f"{self.settings.namespace}/{self.settings.config}-keeper"
        return checked_origin(self.manager.get(self.writes.state_path), self.settings.origin, name)

    def tick(self) -> None:
        """One look at the manager and the quarantined regions, and what it calls for."""
        now = self.clock()
        state, origin = self.state()
        clusters = {str(c["metadata"]["name"]): c for c in self.manager.items(f"{KUEUE}/multikueueclusters")}
        for name, cluster in clusters.items():
            if ko.is_active(cluster):
                self.inactive_since.pop(name, None)
            else:
                self.inactive_since.setdefault(name, now)
        # Not Active for lost_after, unless the cause is on the manager's side (planb.regions.keeper.unreached says
        # why).
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
        self.releases.release_held(workloads, clusters, origin, now, lost, excused)
        config = self.manager.get(self.writes.config_path)
        if config is None:
            return
        if not self.quarantine(config, state, clusters, now, lost):
            self.rejoins.let_back(config, state, clusters, workloads, origin, now)
        if self.dispatcher is not None:
            self.dispatcher.tick(workloads, clusters, config)

    def quarantine(self, config: Obj, state: Obj, clusters: dict[str, Obj], now: float, gone: set[str]) -> bool:
        """Take the lost regions (`gone`) out of the config (the ConfigMap's list first); True when it wrote them."""
        listed = [str(c) for c in (config.get("spec") or {}).get("clusters") or []]
        since = {n: s for n, s in self.inactive_since.items() if n in gone}
        lost = quarantine.to_quarantine(listed, since, now, self.settings.lost_after)
        if not lost:
            return False
        for name in lost:
            active = ko.condition(clusters.get(name, {}), "Active")
            self.say(
                f"quarantining {name}: Kueue has not reached it for {now - self.inactive_since[name]:.0f} s "
                f"({active.get('reason', 'no Active condition')}: {active.get('message', '')}); it leaves the "
                f"MultiKueueConfig {self.settings.config} until it answers again and nothing stale is left there"
            )
        away = quarantine.quarantined(state)
        if self.writes.write_state(state, away + [n for n in lost if n not in away]):
            self.writes.write_config(config, [c for c in listed if c not in lost])
        return True
