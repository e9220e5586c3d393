"""What the failover controller decides from a Workload and a pod template: pure functions, no API calls.

Which eviction is a stockout (Kueue's count of PodsReadyTimeout evictions by underlying cause), which
flavors a Workload was admitted on and by which ClusterQueue, which pod templates ask for an
accelerator, and the required node affinity that keeps a pod template off plan A.
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Iterable
from typing import Any

from planb.failover.names import EVICTED_REASON

Obj = dict[str, Any]

RAY_GROUP, RAY_VERSION = "ray.io", "v1"
#: The underlying causes of a PodsReadyTimeout eviction (kueue v0.19.2 pkg/controller/core/workload_controller.go,
#: admittedNotReadyWorkload; apis/kueue/v1beta2/workload_types.go WorkloadWaitForStart/WorkloadWaitForRecovery).
#: Kueue counts each eviction by (reason, underlyingCause) in status.schedulingStats.evictions
#: (pkg/workload/evict/evict.go, workloadEvictionStateInc); the Evicted condition reads the same for both.
#: KubeRay v1.6.2 resets status.rayClusterStatus when it retries a job (ray-operator/controllers/ray/
#: rayjob_controller.go, JobDeploymentStatusRetrying), and Kueue's RayJob PodsReady is that status's state
#: (pkg/controller/jobs/rayjob/rayjob_controller.go, PodsReady): a retry is a WaitForRecovery, not a stockout.
STOCKOUT_CAUSE = "WaitForStart"
RECOVERY_CAUSE = "WaitForRecovery"


def condition(obj: Obj, kind: str) -> Obj | None:
    for cond in obj.get("status", {}).get("conditions", []) or []:
        if cond.get("type") == kind:
            return dict(cond)
    return None


def is_true(obj: Obj, kind: str) -> bool:
    cond = condition(obj, kind)
    return cond is not None and cond.get("status") == "True"


def pods_ready_timeouts(wl: Obj) -> dict[str, int]:
    """Kueue's count of PodsReadyTimeout evictions of this Workload, by underlying cause."""
    stats = (wl.get("status") or {}).get("schedulingStats") or {}
    counts: dict[str, int] = {}
    for entry in stats.get("evictions") or []:
        if entry.get("reason") == EVICTED_REASON:
            counts[str(entry.get("underlyingCause") or "")] = int(entry.get("count") or 0)
    return counts


def is_stockout(wl: Obj, before: dict[str, int] | None) -> bool:
    """Whether the Workload's PodsReadyTimeout eviction is a WaitForStart one (plan A had no capacity).

    ``before``: the counts when the controller last saw the Workload not evicted. The eviction whose count
    rose since is this one. Never seen before it: only a Workload that never timed out recovering is sure."""
    counts = pods_ready_timeouts(wl)
    if before is None:
        return counts.get(STOCKOUT_CAUSE, 0) > 0 and counts.get(RECOVERY_CAUSE, 0) == 0
    return counts.get(STOCKOUT_CAUSE, 0) > before.get(STOCKOUT_CAUSE, 0)


def rayjob_owner(wl: Obj) -> str | None:
    for owner in wl.get("metadata", {}).get("ownerReferences", []) or []:
        if owner.get("kind") == "RayJob" and owner.get("apiVersion", "").startswith(RAY_GROUP + "/"):
            return str(owner["name"])
    return None


def requests_accelerator(pod_spec: Obj, accelerators: Iterable[str]) -> bool:
    wanted = set(accelerators)
    for container in pod_spec.get("containers", []) or []:
        resources = container.get("resources", {}) or {}
        for section in ("requests", "limits"):
            if wanted & set((resources.get(section) or {}).keys()):
                return True
    return False


def admitted_flavors(wl: Obj, accelerators: Iterable[str]) -> set[str]:
    """The flavors of the accelerator pod sets in the Workload's current admission."""
    admission = wl.get("status", {}).get("admission") or {}
    wanted = set(accelerators)
    out: set[str] = set()
    for assignment in admission.get("podSetAssignments", []) or []:
        for resource, flavor in (assignment.get("flavors") or {}).items():
            if resource in wanted:
                out.add(str(flavor))
    return out


def exclusion(key: str, value: str) -> Obj:
    return {"key": key, "operator": "NotIn", "values": [value]}


def excludes(pod_spec: Obj, key: str, value: str) -> bool:
    """True if every required node selector term already excludes key=value."""
    terms = (
        ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        or {}
    ).get("nodeSelectorTerms") or []
    if not terms:
        return False
    return all(exclusion(key, value) in (term.get("matchExpressions") or []) for term in terms)


def with_exclusion(pod_spec: Obj, key: str, value: str) -> Obj:
    """The pod spec's affinity with key NotIn [value] added to every required term (ANDed)."""
    affinity = copy.deepcopy(pod_spec.get("affinity") or {})
    node = affinity.setdefault("nodeAffinity", {})
    required = node.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
    terms = required.get("nodeSelectorTerms") or [{}]
    for term in terms:
        expressions = term.setdefault("matchExpressions", [])
        if exclusion(key, value) not in expressions:
            expressions.append(exclusion(key, value))
    required["nodeSelectorTerms"] = terms
    return affinity


def escape(key: str) -> str:
    """A JSON pointer token (RFC 6901)."""
    return key.replace("~", "~0").replace("/", "~1")


def now_rfc3339() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    try:
        return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
    except ValueError:
        return None


def admitted_cluster_queue(wl: Obj) -> str | None:
    """The ClusterQueue of the Workload's current admission (status.admission.clusterQueue); None if not admitted."""
    admission = (wl.get("status") or {}).get("admission") or {}
    queue = admission.get("clusterQueue")
    return str(queue) if queue else None
