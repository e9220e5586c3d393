"""ProvisioningRequests of class ``best-effort-atomic-scale-up.autoscaling.x-k8s.io``, as GKE's autoscaler answers them.

GKE's autoscaler registers upstream's best-effort-atomic class next to its own queued provisioning
(GoogleCloudPlatform/cluster-autoscaler at 7d250507, pkg/autoscaler/builder.go:991, ``besteffortatomic.New``), so a
request of this class scales ordinary (autoscaled, non-queued) pools. What it answers comes from upstream's
kubernetes/autoscaler at f7bb0c36 (``BEA`` and the other constants of planb.local.capacity.besteffort_facts cite
file:line):

- the injector takes one request per loop, marks it ``Accepted=True`` (``Accepted``) and hands its pods to the
  class (INJECTOR ``GetPodsFromNextRequest``, ``MarkAsAccepted``);
- when every pod fits a free node already there: ``Provisioned=True`` (``CapacityIsFound``);
- else one all-or-nothing scale-up of a single node group for the pods that do not fit: an ordinary pool whose
  nodes fit the pods (planb.local.capacity.autoscaler's fit: nodeSelector, taints, one node holds the pod), not in
  backoff (``stockout``) and with room for all of them, in pool order; then ``Provisioned=True``
  (``CapacityIsProvisioned``), as soon as the scale-up is requested;
- otherwise ``Provisioned=False`` (``CapacityIsNotFound``), and the request is taken again after a backoff that
  starts at 60 s and doubles up to 600 s (INJECTOR ``IsAvailableForProvisioning``, FLAGS); it never fails for want
  of capacity, only ``Failed=True`` (``Expired``) seven days after its creation (PROCESSOR ``refresh``);
- a provisioned request books capacity: free nodes that fit its pods, up to its pod count, count as used, so no
  other pod takes them and scale-down leaves them (PROCESSOR ``bookCapacity``); the booking ends with
  ``BookingExpired=True``, ``CapacityBookingConsumed`` once all its pods run, or ``CapacityReservationTimeExpired``
  ten minutes after ``Provisioned=True`` (PROCESSOR ``refresh``); its nodes are then ordinary nodes of their pool;
- pending pods that consume a ProvisioningRequest (Kueue's annotation) trigger no ordinary scale-up
  (GKE_PODS_FILTER), whatever their class: the request answers for them.

The nodes made for a request are ordinary nodes of the pool: they carry no planb.local.capacity.nodes.REQUEST
annotation (which only queued provisioning's lifecycle gives, and deletes with its request). A request deleted
before its booking ends leaves its nodes to the ordinary scale-down.

Where this differs from GKE: a request whose pod template is not there yet waits for it instead of being taken
without it; the node group is the first that fits in pool order (GKE's expander chooses among those that fit); the
``IgnoredInScaleUp`` Events on the ignored pods are not recorded; the backoff is remembered per process, as upstream's
LRU cache is, but a restarted simulator takes its first retry 60 s after the request's ``Provisioned=False``.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable

from planb.kube import Obj
from planb.kube_objects import conditions
from planb.local.capacity import dws
from planb.local.capacity import settings as settings_mod
from planb.local.capacity.autoscaler import fits
from planb.local.capacity.besteffort_facts import (
    ACCEPTED_MESSAGE,
    ACCEPTED_REASON,
    BEST_EFFORT_CLASS,
    CONSUMED_MESSAGE,
    CONSUMED_REASON,
    EXPIRATION_SECONDS,
    EXPIRED_MESSAGE,
    EXPIRED_REASON,
    FOUND_MESSAGE,
    FOUND_REASON,
    INITIAL_BACKOFF_SECONDS,
    NOT_FOUND_MESSAGE,
    NOT_FOUND_REASON,
    PROVISIONED_MESSAGE,
    PROVISIONED_REASON,
    RESERVATION_EXPIRED_MESSAGE,
    RESERVATION_EXPIRED_REASON,
    RESERVATION_SECONDS,
    consumed_request,
    next_backoff,
)
from planb.local.capacity.context import Context
from planb.local.capacity.nodes import REQUEST, Nodes
from planb.local.capacity.pools import NodePool

#: One PodSet's pods: the pod (its template's spec) and how many.
PodSet = tuple[Obj, int]


class BestEffortAtomic:
    """The best-effort-atomic reconciler: its requests one step per pass (the module docstring's rules)."""

    def __init__(self, ctx: Context, nodes: Nodes, created_at: Callable[[str, Obj], float]) -> None:
        self.ctx = ctx
        self.nodes = nodes
        #: When a request was created (planb.local.capacity.provisioning's QueuedProvisioning.created_at: the
        #: creationTimestamp, else when that reconciler first saw it).
        self.created_at = created_at
        #: Per request: when it was last tried and left Provisioned=False, and the wait before it is tried again.
        self.retry: dict[str, tuple[float, float]] = {}
        #: Per request: when it got Provisioned=True (wall clock), the start of its booking.
        self.provisioned: dict[str, float] = {}
        #: Per request: its PodSets (a request's templates do not change).
        self.podsets: dict[str, list[PodSet]] = {}

    def step(
        self,
        pools: dict[str, NodePool],
        by_pool: dict[str, list[Obj]],
        busy: Callable[[], set[str]],
        settings: settings_mod.Settings,
    ) -> set[str]:
        """One pass over the best-effort-atomic requests; returns the nodes their bookings hold (count them as used).

        Nodes this pass makes are added to ``by_pool``, so the ordinary scale-up after it sees them."""
        requests = self.ctx.requests()
        if requests is None:
            return set()
        mine = [pr for pr in requests if pr["spec"].get("provisioningClassName") == BEST_EFFORT_CLASS]
        live = {f"{pr['metadata']['namespace']}/{pr['metadata']['name']}" for pr in mine}
        for table in (self.retry, self.provisioned, self.podsets):
            for key in [k for k in table if k not in live]:
                del table[key]
        if not mine:
            return set()
        free = [
            (node["metadata"]["name"], pools[name])
            for name, nodes in by_pool.items()
            if name in pools and not pools[name].queued_provisioning
            for node in nodes
            if node["metadata"]["name"] not in busy() and not (node["metadata"].get("annotations") or {}).get(REQUEST)
        ]
        scheduled: dict[str, int] = defaultdict(int)
        for pod in self.ctx.pods():
            consumer = consumed_request(pod)
            if (
                consumer
                and pod["spec"].get("nodeName")
                and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
            ):
                scheduled[consumer] += 1
        booked: set[str] = set()
        waiting: list[tuple[Obj, str]] = []
        # PROCESSOR: refresh (booking over, expired requests) and bookCapacity run before the injector takes one.
        for pr in mine:
            key = f"{pr['metadata']['namespace']}/{pr['metadata']['name']}"
            true = {kind for kind, cond in conditions(pr).items() if cond.get("status") == "True"}
            if true & {"Failed", "BookingExpired"}:
                continue
            if "Provisioned" in true:
                self._best_effort_booking(pr, key, scheduled[key], free, booked)
            elif time.time() > self.created_at(key, pr) + EXPIRATION_SECONDS:
                self.ctx.set_pr_conditions(pr, [("Failed", "True", EXPIRED_REASON, EXPIRED_MESSAGE)])
                self.ctx.log(f"ProvisioningRequest {key}: Failed, {EXPIRED_REASON}: not provisioned within 7 days")
            else:
                self.ctx.deadline(self.created_at(key, pr) + EXPIRATION_SECONDS)
                waiting.append((pr, key))
        # INJECTOR:110-142 GetPodsFromNextRequest: one request per loop, the first that is not in its backoff.
        for index, (pr, key) in enumerate(waiting):
            if not self._best_effort_due(key, pr):
                continue
            podsets = self._podsets(key, pr)
            if podsets is None:
                self.ctx.deadline(time.time() + 1.0)  # Kueue writes the pod templates first
                continue
            self._best_effort_provision(pr, key, podsets, pools, by_pool, settings, free, booked)
            if any(self._best_effort_due(k, p) for p, k in waiting[index + 1 :]):
                self.ctx.deadline(time.time())  # the next loop takes the next one
            break
        return booked

    def _best_effort_due(self, key: str, pr: Obj) -> bool:
        """INJECTOR:49-74 IsAvailableForProvisioning: never tried, or its backoff since the last try is over."""
        provisioned = conditions(pr).get("Provisioned")
        if provisioned is None:
            return True
        tried = self.retry.get(key)
        if tried is None:  # a restart: the backoff starts again from the condition's time
            at = dws.parse_time(provisioned.get("lastTransitionTime")) or time.time()
            tried = self.retry[key] = (at, INITIAL_BACKOFF_SECONDS)
        at, wait = tried
        if time.time() > at + wait:
            return True
        self.ctx.deadline(at + wait)
        return False

    def _podsets(self, key: str, pr: Obj) -> list[PodSet] | None:
        """Each PodSet's pod spec (its PodTemplate's) and count; None while a template is missing."""
        if key in self.podsets:
            return self.podsets[key]
        out: list[PodSet] = []
        for podset in pr["spec"].get("podSets", []):
            template = self.ctx.kube.get(
                f"/api/v1/namespaces/{pr['metadata']['namespace']}/podtemplates/{podset['podTemplateRef']['name']}"
            )
            if template is None:
                return None
            spec = (template.get("template") or {}).get("spec") or {}
            out.append(({"spec": {"containers": [], **spec}}, int(podset.get("count", 1))))
        self.podsets[key] = out
        return out

    def _take(self, podsets: list[PodSet], free: list[tuple[str, NodePool]]) -> tuple[list[str], list[PodSet]]:
        """Free nodes for the pods, one pod a node, as the scheduler would place them; the pods left without one.

        Taken nodes leave ``free``."""
        taken: list[str] = []
        left: list[PodSet] = []
        for pod, count in podsets:
            fitting = [item for item in free if fits(pod, item[1])][:count]
            for item in fitting:
                free.remove(item)
                taken.append(item[0])
            if count > len(fitting):
                left.append((pod, count - len(fitting)))
        return taken, left

    def _best_effort_provision(
        self,
        pr: Obj,
        key: str,
        podsets: list[PodSet],
        pools: dict[str, NodePool],
        by_pool: dict[str, list[Obj]],
        settings: settings_mod.Settings,
        free: list[tuple[str, NodePool]],
        booked: set[str],
    ) -> None:
        """BEA:82-170 Provision: Accepted, then found, provisioned by one all-or-nothing scale-up, or not found."""
        pr = self.ctx.set_pr_conditions(pr, [("Accepted", "True", ACCEPTED_REASON, ACCEPTED_MESSAGE)])
        # BEA:99-103: the class places the pods on a fork of the cluster and scales up for those that do not fit.
        kept = list(free)
        taken, left = self._take(podsets, free)
        if not left:
            self._best_effort_provisioned(pr, key, FOUND_REASON, FOUND_MESSAGE, f"{len(taken)} free node(s) fit")
            booked.update(taken)
            return
        pool = self._best_effort_pool(left, pools, by_pool, settings)
        if pool is None:
            free[:] = kept  # BEA:100 Revert: the nodes stay free for others
            retry = self.retry.get(key)
            wait = next_backoff(retry[1] if retry and conditions(pr).get("Provisioned") else None)
            self.retry[key] = (time.time(), wait)
            self.ctx.deadline(time.time() + wait)
            self.ctx.set_pr_conditions(pr, [("Provisioned", "False", NOT_FOUND_REASON, NOT_FOUND_MESSAGE)])
            why = "no ordinary pool takes all its pods at once"
            self.ctx.log(f"ProvisioningRequest {key}: {NOT_FOUND_REASON}, {why}; retry in {wait:.0f} s")
            return
        needed = sum(count for _, count in left)
        slices = -(-needed // pool.hosts_per_slice)
        made: list[str] = []
        for _ in range(slices):
            made += self.nodes.add_slice(pool, pool.hosts_per_slice, f"ProvisioningRequest {key} (best-effort atomic)")
        # Seen by this pass's scale-up and scale-down (which hold them: they are booked); listed in full next pass.
        by_pool.setdefault(pool.name, []).extend(
            {"metadata": {"name": n, "labels": {}, "annotations": {}}} for n in made
        )
        booked.update(taken + made)
        self._best_effort_provisioned(
            pr, key, PROVISIONED_REASON, PROVISIONED_MESSAGE, f"+{len(made)} node(s) on {pool.name}"
        )

    def _best_effort_pool(
        self,
        left: list[PodSet],
        pools: dict[str, NodePool],
        by_pool: dict[str, list[Obj]],
        settings: settings_mod.Settings,
    ) -> NodePool | None:
        """The node group of the all-or-nothing scale-up: the first ordinary autoscaled pool the pods all fit, not in
        backoff and with room for every one of them (core/scaleup/orchestrator/orchestrator.go:321-376
        filterValidScaleUpNodeGroups skips groups in backoff or at their max; :1059-1060 drops an option that does
        not hold all the pods; :1118-1123 and :1165-1169 abort rather than scale up part of them)."""
        needed = sum(count for _, count in left)
        for pool in pools.values():
            if not pool.autoscaling or pool.queued_provisioning or pool.name in settings.stockout:
                continue
            if not all(fits(pod, pool) for pod, _ in left):
                continue
            nodes = -(-needed // pool.hosts_per_slice) * pool.hosts_per_slice
            if len(by_pool.get(pool.name, [])) + nodes <= pool.max_nodes:
                return pool
        return None

    def _best_effort_provisioned(self, pr: Obj, key: str, reason: str, message: str, how: str) -> None:
        self.retry.pop(key, None)  # INJECTOR:52-54: a provisioned request leaves the backoff
        self.provisioned[key] = time.time()
        self.ctx.deadline(time.time() + RESERVATION_SECONDS)
        self.ctx.set_pr_conditions(pr, [("Provisioned", "True", reason, message)])
        self.ctx.log(f"ProvisioningRequest {key}: Provisioned, {reason} ({how})")

    def _best_effort_booking(
        self, pr: Obj, key: str, scheduled: int, free: list[tuple[str, NodePool]], booked: set[str]
    ) -> None:
        """A provisioned request: its booking ends (PROCESSOR:95-99,107-108; :164-170), else it holds free nodes that
        fit its pods, up to its pod count (PROCESSOR:139-193 bookCapacity schedules all of them as fake pods)."""
        since = self.provisioned.get(key)
        if since is None:  # a restart: the condition's time
            ltt = dws.parse_time((conditions(pr).get("Provisioned") or {}).get("lastTransitionTime"))
            since = self.provisioned[key] = ltt or time.time()
        if time.time() > since + RESERVATION_SECONDS:
            self.ctx.set_pr_conditions(
                pr, [("BookingExpired", "True", RESERVATION_EXPIRED_REASON, RESERVATION_EXPIRED_MESSAGE)]
            )
            self.ctx.log(f"ProvisioningRequest {key}: BookingExpired, {RESERVATION_EXPIRED_REASON}")
            return
        if scheduled >= dws.pod_count(pr):
            self.ctx.set_pr_conditions(pr, [("BookingExpired", "True", CONSUMED_REASON, CONSUMED_MESSAGE)])
            self.ctx.log(f"ProvisioningRequest {key}: BookingExpired, {CONSUMED_REASON}")
            return
        self.ctx.deadline(since + RESERVATION_SECONDS)
        podsets = self._podsets(key, pr)
        if podsets is not None:
            booked.update(self._take(podsets, free)[0])
