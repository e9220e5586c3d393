"""The regions keeper: run on (or beside) the MultiKueue manager, it quarantines a lost region, releases the quota an
evicted RayJob holds, and lets a region back only once nothing stale of it is left (planb.regions.keeper.tick says
when, and why; docs/regions.md, section 4).

Each `tick()` reads everything again (planb.regions.keeper.reads: MultiKueueClusters, the MultiKueueConfig, the
keeper's ConfigMap, the manager's Workloads, and the regions a decision needs), then decides over what it read,
nothing read or written meanwhile (release, quarantine, rejoin), then writes (planb.regions.keeper.writes), so a
keeper restarted at any point picks up where the cluster stands; only the times a region was lost or last held
something stale, and a Workload has held its quota while evicted, are kept in memory (a restart counts them again);
what a region holds is read from it (planb.regions.keeper.leftovers). It writes the MultiKueueConfig and its ConfigMap
with their resourceVersions (a conflict is retried at the next tick), never a Workload's spec;
``nominatedClusterNames`` only through its dispatcher, when it is given one (``planb regions keep --dispatch``,
``planb.regions.dispatcher.tick``: advice-ordered dispatch, the manager's Kueue configured with planb's External
dispatcher name). The ConfigMap (``<config>-keeper`` in Kueue's namespace, which only the operator and Kueue write)
holds the manager's origin, which the regions playbook wrote, the quarantined regions (a region leaves that list only
after it is back in the config, and joins it before it leaves) and what each waits for (planb status).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from planb.kube import Kube, Obj
from planb.printable import printable
from planb.regions.dispatcher.tick import Dispatcher
from planb.regions.keeper.options import KeeperSettings, say
from planb.regions.keeper.origin import KeeperStateError, checked_origin
from planb.regions.keeper.quarantine import decide_quarantine
from planb.regions.keeper.reads import read
from planb.regions.keeper.rejoin import RejoinMemory, decide_rejoin
from planb.regions.keeper.release import ReleaseMemory, decide_releases
from planb.regions.keeper.unreached import excused
from planb.regions.keeper.writes import ManagerWrites, config_patches

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
        self.releases = ReleaseMemory()
        self.rejoins = RejoinMemory()
        self.writes = ManagerWrites(manager, self.say)

    def state(self) -> tuple[Obj, str]:
        """The keeper's ConfigMap and this manager's origin (the settings' if given, else the ConfigMap's)."""
        name = f"{self.settings.namespace}/{self.settings.config}-keeper"
        return checked_origin(self.manager.get(self.settings.state_path), self.settings.origin, name)

    def tick(self) -> None:
        """One look at the manager and the regions it calls for (read), what it calls for (decided over what was
        read), and the writes; then the dispatcher's tick over the same reading."""
        now, s = self.clock(), self.settings
        seen = read(self.manager, s, self.inactive_since, now)
        self.inactive_since = seen.inactive_since
        # Not Active for lost_after, unless the cause is on the manager's side (planb.regions.keeper.unreached says
        # why).
        late = [n for n, since in seen.inactive_since.items() if now - since >= s.lost_after]
        excuses = excused(seen, late, time.time())
        lost = {n for n in late if n not in excuses}
        said = [
            f"not taking {why.split(': ', 1)[0]} as lost: {why.split(': ', 1)[-1]}"
            for name, why in excuses.items()
            if self.excused_said.get(name) != why
        ]
        self.excused_said = excuses
        released = decide_releases(seen, lost, excuses, self.releases, s, now)
        self.releases = released.memory
        quarantining = rejoining = None
        if seen.config is not None:
            quarantining = decide_quarantine(seen.away, seen.listed, seen.conditions, seen.inactive_since, lost, now, s)
        if seen.config is not None and quarantining is None:  # a tick that quarantines lets none back
            rejoining = decide_rejoin(seen, self.rejoins, s, now)
            self.rejoins = rejoining.memory
        decided = quarantining.said if quarantining else rejoining.said if rejoining else ()
        for line in [*said, *released.said, *decided]:
            self.say(line)
        patches = [*released.patches]
        if seen.config is not None:
            patches += config_patches(seen.state, seen.config, s, quarantining, rejoining)
        written = self.writes.write_tick(rejoining.deletes if rejoining else {}, patches)
        if rejoining is not None and any(p.kind == "ConfigMap" for p in written):
            self.rejoins = replace(self.rejoins, waiting_written=rejoining.waiting)
        if self.dispatcher is not None and seen.config is not None:
            self.dispatcher.tick(seen.workloads, seen.clusters, seen.config)
