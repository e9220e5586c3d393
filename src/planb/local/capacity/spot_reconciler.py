"""The Spot reconciler: preemption notices to the pools ``planb local capacity set --preempt`` names, then their nodes
go after the pool's notice, GKE's own (30 s, or the 120 s a pool may ask for) unless ``spot_notice_seconds`` sets one
for every pool (planb.local.capacity.spot holds the rules and `Preemption`, which does it).

Its own module because planb.local.capacity.settings imports spot's constants: the switch it reads and clears
lives there.
"""

from __future__ import annotations

import time

from planb.kube import Obj
from planb.local.capacity import settings as settings_mod
from planb.local.capacity.context import Context
from planb.local.capacity.pools import NodePool
from planb.local.capacity.spot import GKE_NOTICE_SECONDS, Preemption


def notice(pool: NodePool | None, settings: settings_mod.Settings) -> float:
    """Seconds between a preemption notice and the pool's nodes going: the setting, else GKE's for the pool."""
    if settings.spot_notice_seconds is not None:
        return settings.spot_notice_seconds
    return pool.spot_notice_seconds if pool is not None else GKE_NOTICE_SECONDS


class Spot:
    """One pass of Spot preemption; the state is on the nodes (the notice's annotation), none is kept here."""

    def __init__(self, ctx: Context, preemption: Preemption) -> None:
        self.ctx = ctx
        self.preemption = preemption

    def step(self, pools: dict[str, NodePool], by_pool: dict[str, list[Obj]], settings: settings_mod.Settings) -> None:
        """Notices to the pools `planb local capacity set --preempt` named, then reclaim; reclaimed nodes leave
        ``by_pool``."""
        if settings.preempt:
            for name in settings.preempt:
                pool = pools.get(name)
                if pool is None or not pool.spot:
                    why = "no such pool" if pool is None else "not a Spot pool (config.spot is false)"
                    self.ctx.log(f"pool {name}: not preempted: {why}; GKE preempts Spot VMs only")
                    continue
                if self.preemption.notify(name, by_pool.get(name, [])):
                    self.ctx.nodes_written = True  # the notices: the next pass lists the nodes
                    self.ctx.deadline(time.time() + notice(pool, settings))
            settings_mod.update(self.ctx.state_dir, preempt=())
        for name, nodes in list(by_pool.items()):
            gone, deadline = self.preemption.reclaim(nodes, notice(pools.get(name), settings))
            self.ctx.deadline(deadline)
            if gone:
                by_pool[name] = [n for n in nodes if n["metadata"]["name"] not in gone]
