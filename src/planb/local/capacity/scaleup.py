"""Which queued-provisioning pool takes a ProvisioningRequest, or the reason GKE's autoscaler gives when none does.

GKE's autoscaler gives a request to one node group only, and only if every pod of the request fits that
group: its scale-up orchestrator (GoogleCloudPlatform/cluster-autoscaler at 7d250507,
``pkg/provisioningrequests/scaleup/orchestrator.go``, ``ScaleUp`` and ``computeExpansionOption``)

- skips a group that is not queued (``NotQueuedNodeGroupSkippedReason``) and one whose target size has
  reached its max (``filterValidScaleUpNodeGroups``: ``MaxLimitReachedReason``);
- skips a group the request's pods do not schedule on, with the scheduler's predicate errors
  (``CouldNotScheduleAnyPodsInNodePool``; a pool whose labels miss the pods' nodeSelector fails the
  NodeAffinity filter with ``SELECTOR_MISMATCH``);
- estimates at most ``max - target size`` nodes for a group; when fewer than all the request's pods fit,
  the group gives no option while the request is younger than ``RETRY_PERIOD_SECONDS``, and is then skipped
  as ``MaxLimitReachedReason`` (the estimate hit the group's cap);
- with no option left, leaves a request of the retry period ``Accepted=False`` and fails an older one
  (``failProvisioningRequest``), each with the reason and message ``reasons.GetReasonAndMessage`` makes of
  the skipped groups (``pkg/provisioningrequests/scaleup/reasons/reasons.go``): ``NodepoolSizeReached``
  before ``ProvisioningRequestNotSchedulableInNodepool``, else ``NoQueuedNodepoolAvailable``.

A multi-host TPU pool holds one slice (its max is the slice's hosts), and Kueue asks for all of a job's
slices in one request (count = replicas x hosts), so a request of two or more slices fits no such pool and
ends ``Failed`` with ``NodepoolSizeReached``. Where planb differs: a request that does fit an empty
matching pool, but finds every such pool taken, stays ``Accepted=False`` (``NodepoolSizeReached``) until one
is free instead of failing after the retry period (docs/local-mode.md lists the difference).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from planb.local.capacity.pools import NodePool

_GKE_CA = "https://github.com/GoogleCloudPlatform/cluster-autoscaler/blob/7d250507339b3a7583b380349f217ea191ff15ff/"
#: The orchestrator: one node group per request, all its pods in it, the retry period.
ORCHESTRATOR = _GKE_CA + "pkg/provisioningrequests/scaleup/orchestrator.go"
#: The reasons and messages of a request no node group takes.
SCALEUP_REASONS = _GKE_CA + "pkg/provisioningrequests/scaleup/reasons/reasons.go"

#: ORCHESTRATOR pendingProvisioningRequestRetryPeriod: how long after its creation a request no group takes
#: stays Accepted=False before it fails.
RETRY_PERIOD_SECONDS = 120.0

# SCALEUP_REASONS: noQueuedNodepoolAvailable, nodepoolSizeReached, podsCantBeScheduledInNodepool and their
# messages; the caps on the pools named in one message (maxNodepoolsInMessage, maxPredicateErrorNodepoolsInMessage).
NO_QUEUED_POOL_REASON = "NoQueuedNodepoolAvailable"
NO_QUEUED_POOL_MESSAGE = "No nodepool with QueuedProvisioning enabled is available for scale up"
POOL_SIZE_REASON = "NodepoolSizeReached"
POOL_SIZE_PREFIX = "Max nodepool size reached"
NOT_SCHEDULABLE_REASON = "ProvisioningRequestNotSchedulableInNodepool"
NOT_SCHEDULABLE_PREFIX = "Provisioning Request's pods cannot be scheduled in the nodepool"
MAX_POOLS_IN_MESSAGE = 10
MAX_PREDICATE_POOLS_IN_MESSAGE = 5
#: kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go ErrReasonPod: the
#: predicate error of a node whose labels miss the pod's nodeSelector.
SELECTOR_MISMATCH = "node(s) didn't match Pod's node affinity/selector"

#: Why a pool was skipped: its size (max reached, or too small for the request) or a failed predicate.
SIZE = "size"
PREDICATE = "predicate"


@dataclass(frozen=True)
class Decision:
    """The pool that takes the request, else GKE's reason and message for the request's conditions."""

    pool: NodePool | None
    reason: str = ""
    message: str = ""
    #: Whether GKE fails the request once its retry period is over (False: planb keeps it waiting for a pool
    #: that can hold it once free).
    fails: bool = True


def pool_size_message(pools: Iterable[str]) -> str:
    """SCALEUP_REASONS simpleEntry.findMatch for MaxLimitReachedReason."""
    return f"{POOL_SIZE_PREFIX}, affected nodepools: {', '.join(_capped(sorted(set(pools)), MAX_POOLS_IN_MESSAGE))}"


def not_schedulable_message(pools: Iterable[str]) -> str:
    """SCALEUP_REASONS CouldNotScheduleAnyPodsInNodePoolEntry.findMatch, for pools the nodeSelector misses."""
    errors = [f"{pool} ({SELECTOR_MISMATCH})" for pool in sorted(set(pools))]
    shown = ", ".join(_capped(errors, MAX_PREDICATE_POOLS_IN_MESSAGE))
    return f"{NOT_SCHEDULABLE_PREFIX}. Predicate checking errors: {shown}"


def _capped(items: list[str], cap: int) -> list[str]:
    return [*items[:cap], "..."] if len(items) > cap else items


def decide(
    pools: Iterable[NodePool],
    selector: dict[str, str],
    count: int,
    free: Callable[[NodePool], int],
    retrying: bool,
) -> Decision:
    """The first queued pool that matches the request's ``selector`` and has ``free`` room for all ``count`` pods;
    else the reason GKE gives. ``retrying``: the request is still within RETRY_PERIOD_SECONDS of its creation."""
    skipped: dict[str, str] = {}
    could_hold = False
    for pool in pools:
        if not pool.queued_provisioning:
            continue  # ORCHESTRATOR filterValidScaleUpNodeGroups: NotQueuedNodeGroupSkippedReason
        room = free(pool)
        if room <= 0:
            skipped[pool.name] = SIZE  # filterValidScaleUpNodeGroups: target size >= max
            could_hold = could_hold or (pool.matches(selector) and pool.max_nodes >= count)
            continue
        if not pool.matches(selector):
            skipped[pool.name] = PREDICATE  # computeExpansionOption: CouldNotScheduleAnyPodsInNodePool
            continue
        if room < count:
            # computeExpansionOption: the estimate stops at the group's cap; no option while retrying, then
            # MaxLimitReachedReason.
            could_hold = could_hold or pool.max_nodes >= count
            if not retrying:
                skipped[pool.name] = SIZE
            continue
        return Decision(pool)
    sized = [name for name, why in skipped.items() if why == SIZE]
    unschedulable = [name for name, why in skipped.items() if why == PREDICATE]
    if sized:
        return Decision(None, POOL_SIZE_REASON, pool_size_message(sized), fails=not could_hold)
    if unschedulable:
        return Decision(None, NOT_SCHEDULABLE_REASON, not_schedulable_message(unschedulable))
    return Decision(None, NO_QUEUED_POOL_REASON, NO_QUEUED_POOL_MESSAGE, fails=not could_hold)
