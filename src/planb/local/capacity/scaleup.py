"""Which queued-provisioning pool takes a ProvisioningRequest, or the reason GKE's autoscaler gives when none does.

GKE's autoscaler gives a request to one node group only, and only if every pod of the request fits that
group: its scale-up orchestrator (GoogleCloudPlatform/cluster-autoscaler at 7d250507,
``pkg/provisioningrequests/scaleup/orchestrator.go``, ``ScaleUp`` and ``computeExpansionOption``)

- skips a group that is not queued (``NotQueuedNodeGroupSkippedReason``), one in backoff after a failed
  scale-up (L530-L533, ``IsNodeGroupReadyToScaleUp``: ``BackoffReason``) and one whose target size has
  reached its max (L541-L545, ``filterValidScaleUpNodeGroups``: ``MaxLimitReachedReason``);
- skips a group the request's pods do not schedule on, with the scheduler's predicate errors
  (``CouldNotScheduleAnyPodsInNodePool``; a pool whose labels miss the pods' nodeSelector fails the
  NodeAffinity filter with ``SELECTOR_MISMATCH``). A request of several PodSets is placed whole in one
  group: all its PodSets' pods must schedule on the same group (L590-L598), so a pool must match every
  PodSet's nodeSelector;
- estimates at most ``max - target size`` nodes for a group; when fewer than all the request's pods fit,
  the group gives no option while the request is younger than ``RETRY_PERIOD_SECONDS``, and is then skipped
  as ``MaxLimitReachedReason`` (the estimate hit the group's cap);
- with no option left, leaves a request of the retry period ``Accepted=False`` and fails an older one
  (``failProvisioningRequest``, L1142-L1167), each with the reason and message ``reasons.GetReasonAndMessage``
  makes of the skipped groups (``pkg/provisioningrequests/scaleup/reasons/reasons.go`` L74-L105):
  ``NodepoolSizeReached``, then ``NodepoolInBackoff``, then ``ProvisioningRequestNotSchedulableInNodepool``,
  else ``NoQueuedNodepoolAvailable``.

A pool is backed off when a request's scale-up in it fails (`NodeGroupBackoff`): the resize request's create
call fails, with ``QUEUING_INFEASIBLE_NO_CAPACITY`` among others, and the executor registers the failed
scale-up (``pkg/provisioningrequests/scaleup/executor.go`` L116-L126: ``RegisterFailedScaleUp``).

A multi-host TPU pool holds one slice (its max is the slice's hosts), and Kueue asks for all of a job's
slices in one request (count = replicas x hosts), so a request of two or more slices fits no such pool and
ends ``Failed`` with ``NodepoolSizeReached``. Where planb differs: a request that does fit an empty
matching pool, but finds every such pool taken, stays ``Accepted=False`` (``NodepoolSizeReached``) until one
is free instead of failing after the retry period (docs/local-mode.md lists the difference).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from planb.local.capacity.pools import NodePool

_GKE_CA = "https://github.com/GoogleCloudPlatform/cluster-autoscaler/blob/7d250507339b3a7583b380349f217ea191ff15ff/"
#: The orchestrator: one node group per request, all its pods in it, the retry period.
ORCHESTRATOR = _GKE_CA + "pkg/provisioningrequests/scaleup/orchestrator.go"
#: The reasons and messages of a request no node group takes.
SCALEUP_REASONS = _GKE_CA + "pkg/provisioningrequests/scaleup/reasons/reasons.go"
#: The failed scale-up the executor registers, which backs the node group off (L116-L126).
SCALEUP_EXECUTOR = _GKE_CA + "pkg/provisioningrequests/scaleup/executor.go#L116-L126"
#: GKE's backoff durations (L26-L33) and its per-MIG exponential backoff (single_mig_backoff.go L38-L42).
GKE_BACKOFF = _GKE_CA + "pkg/backoff/gke_mig_backoff.go#L26-L33"
#: The exponential backoff GKE's per-MIG backoff wraps: kubernetes-sigs/cluster-autoscaler at the commit GKE's
#: cluster-autoscaler go.mod (L48) pins. The first failure backs off for the initial duration; a failure while backed
#: off starts the same duration again; one after the backoff ended doubles it, up to the max (Backoff, L73-L99); the
#: record goes when the last failure is older than the reset timeout (RemoveStaleBackoffData, L123-L131, which
#: clusterstate.go L343 calls).
UPSTREAM_BACKOFF = (
    "https://github.com/kubernetes-sigs/cluster-autoscaler/blob/991000421cbb/pkg/utils/backoff/exponential_backoff.go"
)

#: ORCHESTRATOR pendingProvisioningRequestRetryPeriod: how long after its creation a request no group takes
#: stays Accepted=False before it fails.
RETRY_PERIOD_SECONDS = 120.0

# SCALEUP_REASONS: noQueuedNodepoolAvailable, nodepoolSizeReached, podsCantBeScheduledInNodepool and their
# messages; the caps on the pools named in one message (maxNodepoolsInMessage, maxPredicateErrorNodepoolsInMessage).
NO_QUEUED_POOL_REASON = "NoQueuedNodepoolAvailable"
NO_QUEUED_POOL_MESSAGE = "No nodepool with QueuedProvisioning enabled is available for scale up"
POOL_SIZE_REASON = "NodepoolSizeReached"
POOL_SIZE_PREFIX = "Max nodepool size reached"
#: SCALEUP_REASONS L46-L47: a group skipped for upstream's BackoffReason ("in backoff after failed scale-up").
BACKOFF_REASON = "NodepoolInBackoff"
BACKOFF_PREFIX = "Nodepool in backoff after failed scale-up"
NOT_SCHEDULABLE_REASON = "ProvisioningRequestNotSchedulableInNodepool"
NOT_SCHEDULABLE_PREFIX = "Provisioning Request's pods cannot be scheduled in the nodepool"
MAX_POOLS_IN_MESSAGE = 10
MAX_PREDICATE_POOLS_IN_MESSAGE = 5
#: kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go ErrReasonPod: the
#: predicate error of a node whose labels miss the pod's nodeSelector.
SELECTOR_MISMATCH = "node(s) didn't match Pod's node affinity/selector"

#: GKE_BACKOFF: the longest backoff (MaxNodeGroupBackoffDuration, 30 min) and when a pool's record of failures
#: is dropped (NodeGroupBackoffResetTimeout, 3 h), each as a multiple of the first backoff
#: (InitialNodeGroupBackoffDuration, 5 min). planb's policy: a shortened first backoff (``node_group_backoff_seconds``)
#: keeps these proportions, because a test that shortens it must not meet GKE's 30 minutes on the next failure.
MAX_BACKOFF_FACTOR = 30 / 5
BACKOFF_RESET_FACTOR = 180 / 5

#: Why a pool was skipped: its size (max reached, or too small for the request), a backoff or a failed predicate.
SIZE = "size"
BACKOFF = "backoff"
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


def backoff_message(pools: Iterable[str]) -> str:
    """SCALEUP_REASONS simpleEntry.findMatch (L193-L218) for BackoffReason."""
    return f"{BACKOFF_PREFIX}, affected nodepools: {', '.join(_capped(sorted(set(pools)), MAX_POOLS_IN_MESSAGE))}"


def not_schedulable_message(pools: Iterable[str]) -> str:
    """SCALEUP_REASONS CouldNotScheduleAnyPodsInNodePoolEntry.findMatch, for pools the nodeSelector misses."""
    errors = [f"{pool} ({SELECTOR_MISMATCH})" for pool in sorted(set(pools))]
    shown = ", ".join(_capped(errors, MAX_PREDICATE_POOLS_IN_MESSAGE))
    return f"{NOT_SCHEDULABLE_PREFIX}. Predicate checking errors: {shown}"


def _capped(items: list[str], cap: int) -> list[str]:
    return [*items[:cap], "..."] if len(items) > cap else items


def decide(
    pools: Iterable[NodePool],
    selectors: Sequence[dict[str, str]],
    count: int,
    free: Callable[[NodePool], int],
    retrying: bool,
    backed_off: Callable[[NodePool], bool] = lambda _: False,
) -> Decision:
    """The first queued pool that is not ``backed_off``, matches every PodSet's nodeSelector in ``selectors`` and has
    ``free`` room for all ``count`` pods; else the reason GKE gives. ``retrying``: the request is still within
    RETRY_PERIOD_SECONDS of its creation."""
    skipped: dict[str, str] = {}
    could_hold = False
    for pool in pools:
        if not pool.queued_provisioning:
            continue  # ORCHESTRATOR filterValidScaleUpNodeGroups: NotQueuedNodeGroupSkippedReason
        if backed_off(pool):
            skipped[pool.name] = BACKOFF  # ORCHESTRATOR L530-L533: BackoffReason, before its size is looked at
            continue
        matches = all(pool.matches(selector) for selector in selectors)
        room = free(pool)
        if room <= 0:
            skipped[pool.name] = SIZE  # filterValidScaleUpNodeGroups: target size >= max
            could_hold = could_hold or (matches and pool.max_nodes >= count)
            continue
        if not matches:
            # computeExpansionOption: CouldNotScheduleAnyPodsInNodePool (L596-L609: every PodSet in this one group)
            skipped[pool.name] = PREDICATE
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
    backoff = [name for name, why in skipped.items() if why == BACKOFF]
    unschedulable = [name for name, why in skipped.items() if why == PREDICATE]
    if sized:
        return Decision(None, POOL_SIZE_REASON, pool_size_message(sized), fails=not could_hold)
    if backoff:
        return Decision(None, BACKOFF_REASON, backoff_message(backoff))
    if unschedulable:
        return Decision(None, NOT_SCHEDULABLE_REASON, not_schedulable_message(unschedulable))
    return Decision(None, NO_QUEUED_POOL_REASON, NO_QUEUED_POOL_MESSAGE, fails=not could_hold)


@dataclass
class _Backoff:
    duration: float
    until: float
    last_failure: float


class NodeGroupBackoff:
    """Queued-provisioning pools backed off after a failed scale-up, as GKE's autoscaler backs off a node group
    (SCALEUP_EXECUTOR registers the failure; GKE_BACKOFF and UPSTREAM_BACKOFF time it). Kept in memory, as GKE's
    autoscaler keeps it: a restart forgets it."""

    def __init__(self) -> None:
        self._pools: dict[str, _Backoff] = {}

    def fail(self, pool: str, now: float, initial: float) -> float:
        """Register a failed scale-up of ``pool`` at ``now`` with a first backoff of ``initial`` seconds; returns when
        its backoff ends."""
        self.forget_stale(now, initial)
        duration = initial
        old = self._pools.get(pool)
        if old is not None:
            # UPSTREAM_BACKOFF L73-L99: the same duration again while backed off, doubled (up to the max) after.
            duration = old.duration if old.until >= now else min(2 * old.duration, initial * MAX_BACKOFF_FACTOR)
        self._pools[pool] = _Backoff(duration, now + duration, now)
        return now + duration

    def until(self, pool: str, now: float) -> float | None:
        """When ``pool``'s backoff ends, None if it is not backed off (UPSTREAM_BACKOFF L95-L98)."""
        entry = self._pools.get(pool)
        return entry.until if entry is not None and entry.until > now else None

    def forget_stale(self, now: float, initial: float) -> None:
        """Drop the record of pools whose last failure is older than the reset timeout (UPSTREAM_BACKOFF L106-L112)."""
        reset = initial * BACKOFF_RESET_FACTOR
        for pool in [p for p, entry in self._pools.items() if entry.last_failure + reset < now]:
            del self._pools[pool]
