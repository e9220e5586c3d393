"""Which lost regions the keeper takes out of the MultiKueueConfig, and which it keeps out (its ConfigMap's list):
pure functions over the API's JSON (planb.regions.keeper.tick acts; docs/regions.md, section 4).

Kueue keeps a lost winner's check Ready for ``workerLostTimeout`` (default 15 min) before it
retries (pkg/controller/admissionchecks/multikueue/workload.go#L551-L569). planb's policy: a region whose
MultiKueueCluster has not been ``Active`` for ``lost_after`` seconds leaves the MultiKueueConfig, because Kueue then
no longer sees its copy, finds no admitted one and retries at once (workload.go#L568), and requeues the config's
Workloads when the config changes (workload.go#L1016-L1028). Never the last region: ``spec.clusters`` needs one
(apis/kueue/v1beta2/multikueue_types.go#L155).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from planb.kube import Obj

#: The keeper's ConfigMap (in Kueue's namespace on the manager, written only by the operator's regions playbook and
#: the keeper): ``quarantined``, the regions the keeper took
#: out of the MultiKueueConfig (a JSON list), so they come back. planb's policy: not an annotation of the
#: MultiKueueConfig, because whoever may edit that config (a batch admin) would then choose which regions the keeper
#: cleans and adds back.
QUARANTINED_KEY = "quarantined"
#: Where earlier planb kept the quarantine list; no longer read (see above), only removed when the keeper writes.
OLD_QUARANTINED = "planb.dev/quarantined-regions"


def quarantined(state: Obj) -> list[str]:
    """The regions the keeper took out of the MultiKueueConfig (its ConfigMap's ``quarantined``), in the order they
    left."""
    text = (state.get("data") or {}).get(QUARANTINED_KEY, "")
    try:
        names = json.loads(text) if text else []
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes: the keeper goes on
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
