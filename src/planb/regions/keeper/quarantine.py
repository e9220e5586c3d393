"""Which lost regions the keeper takes out of the MultiKueueConfig, and which it keeps out (its ConfigMap's list):
pure functions over the API's JSON and what the keeper's tick read (planb.regions.keeper.tick runs them;
docs/regions.md, section 4).

Kueue keeps a lost winner's check Ready for ``workerLostTimeout`` (default 15 min) before it
retries (pkg/controller/admissionchecks/multikueue/workload.go#L551-L569). planb's policy: a region whose
MultiKueueCluster has not been ``Active`` for ``lost_after`` seconds leaves the MultiKueueConfig, because Kueue then
no longer sees its copy, finds no admitted one and retries at once (workload.go#L568), and requeues the config's
Workloads when the config changes (workload.go#L1016-L1028). Never the last region: ``spec.clusters`` needs one
(apis/kueue/v1beta2/multikueue_types.go#L155).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from planb.kube import Obj
from planb.regions.keeper import origin
from planb.regions.keeper.options import KeeperSettings

#: The keeper's ConfigMap's list of quarantined regions and its reading live with the rest of that ConfigMap
#: (planb.regions.keeper.origin); named here too for whoever reads the quarantine.
QUARANTINED_KEY, OLD_QUARANTINED, quarantined = origin.QUARANTINED_KEY, origin.OLD_QUARANTINED, origin.quarantined


def to_quarantine(
    clusters: Sequence[str], inactive_since: Mapping[str, float], now: float, lost_after: float
) -> list[str]:
    """The config's regions lost for `lost_after` seconds or more; never all of them (the last lost one stays)."""
    lost = [c for c in clusters if c in inactive_since and now - inactive_since[c] >= lost_after]
    if lost and len(lost) == len(clusters):
        lost = lost[:-1]
    return lost


@dataclass(frozen=True)
class Quarantining:
    """The lost regions one tick takes out of the MultiKueueConfig: the lines to say, the ConfigMap's list with them
    (`away`, written first) and the config's clusters without them."""

    said: tuple[str, ...]
    away: list[str]
    clusters: list[str]


def decide_quarantine(
    away: Sequence[str],
    listed: Sequence[str],
    conditions: Mapping[str, Obj],
    inactive_since: Mapping[str, float],
    gone: Collection[str],
    now: float,
    settings: KeeperSettings,
) -> Quarantining | None:
    """The lost regions (`gone`) of the config's clusters `listed` to take out (`to_quarantine`), None when there are
    none: added to the ConfigMap's list (`away`) first, so they come back, then out of the config. `conditions`: each
    region's Active condition, for what is said."""
    since = {n: s for n, s in inactive_since.items() if n in gone}
    lost = to_quarantine(listed, since, now, settings.lost_after)
    said = []
    for name in lost:
        active = conditions.get(name, {})
        said.append(
            f"quarantining {name}: Kueue has not reached it for {now - inactive_since[name]:.0f} s "
            f"({active.get('reason', 'no Active condition')}: {active.get('message', '')}); it leaves the "
            f"MultiKueueConfig {settings.config} until it answers again and nothing stale is left there"
        )
    if not lost:
        return None
    return Quarantining(tuple(said), [*away, *(n for n in lost if n not in away)], [c for c in listed if c not in lost])
