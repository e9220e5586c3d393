"""DWS's ProvisioningRequest lifecycle, as GKE's autoscaler runs it for queued provisioning.

Requests of class ``queued-provisioning.gke.io`` go through DWS's lifecycle, each step with the
condition type, reason and message GKE's autoscaler sets (GoogleCloudPlatform/cluster-autoscaler:
planb.local.capacity.dws and planb.local.capacity.scaleup cite each; "Run a large-scale workload with flex-start
with queued provisioning", https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest,
shows them), and Kueue v0.19.2's pkg/controller/admissionchecks/provisioning reacts to each type:

- pending: a new request gets ``Accepted=False`` (NotAccepted) and keeps ``Accepted=False`` until a
  node group is chosen for it (planb.local.capacity.scaleup): the first queued-provisioning pool, not
  backed off, whose labels match the nodeSelector of each of its PodSets and that has room for all its pods
  (a request of several PodSets is placed whole in one pool, as GKE's orchestrator places it). When none
  does, the condition carries GKE's reason (NoQueuedNodepoolAvailable, ProvisioningRequestNotSchedulableInNodepool,
  NodepoolSizeReached, NodepoolInBackoff), and two minutes after its creation the request fails with it
  (``Failed=True``), e.g. a request of two or more multi-host slices, which no one-slice pool holds. Kueue
  reports nothing while the request is Accepted=False, and retries a failed one;
- failed at the create call: ``fail_next`` requests and those of a pool or request pattern switched to
  ``fail`` get, when their pool is chosen, GKE's details and then ``Failed=True`` (QueuingInfeasibleNoCapacity)
  with ``Accepted`` still False: on GKE that reason comes only from the resize request's create call, which
  fails before the request is ever accepted (dws.GKE_CA_CREATE_FAILED). The pool is then backed off
  (scaleup.NodeGroupBackoff, ``node_group_backoff_seconds``), and the requests that find no other pool meanwhile
  get NodepoolInBackoff as above;
- queued: ``Accepted=True`` (SuccessfullyQueued) with GKE's ``provisioningClassDetails``
  (ResizeRequestName, NodePoolName, ...) once the pool is chosen; for the request's delay
  (``provisioning_delay_seconds``, per pool or request pattern in ``pools``/``requests``) also
  ``Provisioned=False`` (ResourcePoolExhausted, Compute Engine's "Waiting for resources ..." without a
  time: its expected time is "indefinite"); Kueue copies that message into the Workload's admission check;
- provisioned (planb.local.capacity.booking): the chosen pool gets all the request's nodes at once
  (KWOK nodes with GKE's labels, the ``cloud.google.com/gke-queued`` taint and accelerator capacity),
  ``Provisioned=True``. Its nodes carry ``autoscaling.gke.io/provisioning-request`` with the request's
  resize request name;
  `planb.local.capacity.webhook` gives the request's pods the matching node selector, so no other pod
  lands on them (GKE's sources there);
- booked, booking expired, capacity revoked: planb.local.capacity.booking;
- refused: with GKE's rollout flag ProvisioningRequestMultiplePodSets::Enabled switched off
  (``provisioning_request_multiple_podsets_enabled``; on by default, as GKE's failsafe for the flag is; the live
  value comes from Google's experiments service, which no source shows), a request of several PodSets
  not yet accepted fails at once with MultiplePodSetsUnsupported (dws.GKE_CA_FEATURE_GUARD). When a request is
  deleted its nodes go.

Where this differs from GKE: provisioning takes a fixed delay instead of waiting for real capacity,
a failure is a switch, not a stockout, and a request that fits a matching pool taken by another
request waits for it instead of failing after two minutes.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from planb.kube import KubeError, Obj
from planb.kube_objects import conditions
from planb.local.capacity import dws, scaleup
from planb.local.capacity import settings as settings_mod
from planb.local.capacity.booking import Booking
from planb.local.capacity.context import Context
from planb.local.capacity.nodes import REQUEST, Nodes
from planb.local.capacity.pools import NodePool


@dataclass
class _Pass:
    """What one pass over the requests reads and builds: the pools and their nodes, the switches, the nodes each
    pool is promised and those added, and the deliveries to make at the end."""

    pools: dict[str, NodePool]
    by_pool: dict[str, list[Obj]]
    by_request: dict[str, list[str]]
    settings: settings_mod.Settings
    busy: Callable[[], set[str]]
    committed: dict[str, int]
    added: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    deliveries: list[tuple[Obj, NodePool, int, str]] = field(default_factory=list)


class QueuedProvisioning:
    """The queued-provisioning reconciler: each request of class ``queued-provisioning.gke.io`` one step further
    per pass (its booking and run duration: planb.local.capacity.booking's `Booking`, which it holds)."""

    def __init__(self, ctx: Context, nodes: Nodes) -> None:
        self.ctx = ctx
        self.nodes = nodes
        self.booking = Booking(ctx, nodes)
        #: Per request ("namespace/name"): when this process first saw it (its creation time when it has none).
        self.first_seen: dict[str, float] = {}
        #: Per request: when a pool was chosen for it (wall clock), the start of its delay.
        self.accepted_at: dict[str, float] = {}
        #: Requests delivered by this process (guards against acting twice on a stale cached version).
        self.delivered: set[str] = set()
        #: Per request: the nodeSelector of each of its PodSets' templates and its pod count.
        self.selectors: dict[str, tuple[list[dict[str, str]], int]] = {}
        self.missing_templates: set[str] = set()
        #: Per request with nodes: the pool they are on (rebuilt from the nodes on every pass).
        self.request_pools: dict[str, str] = {}
        #: Pools backed off after a failed scale-up (GKE's autoscaler keeps this in memory too).
        self.backoff = scaleup.NodeGroupBackoff()
        #: ``fail_next`` as this pass has used it (the settings a pass reads do not change during it).
        self.fail_next = 0

    def _pr_pod_selector(self, pr: Obj) -> tuple[list[dict[str, str]], int]:
        """The nodeSelector of each of the request's pod templates and the number of pods it asks for."""
        key = f"{pr['metadata']['namespace']}/{pr['metadata']['name']}"
        cached = self.selectors.get(key)
        if cached is not None:
            return cached
        selectors: list[dict[str, str]] = []
        count = 0
        found = True
        for podset in pr["spec"].get("podSets", []):
            count += int(podset.get("count", 1))
            template = self.ctx.kube.get(
                f"/api/v1/namespaces/{pr['metadata']['namespace']}/podtemplates/{podset['podTemplateRef']['name']}"
            )
            if template is None:
                found = False
            else:
                selectors.append(dict(template["template"]["spec"].get("nodeSelector") or {}))
        if found:
            self.selectors[key] = (selectors, count)  # a request's templates do not change
        else:
            self.missing_templates.add(key)
        return selectors, count

    def created_at(self, key: str, pr: Obj) -> float:
        """The request's creationTimestamp, else when this process first saw it (wall clock; kept for queued
        requests only: a pass forgets the others, as it forgets requests that are gone)."""
        created = dws.parse_time((pr.get("metadata") or {}).get("creationTimestamp"))
        return created if created is not None else self.first_seen.setdefault(key, time.time())

    def _assigned_pool(self, pr: Obj, key: str, pools: dict[str, NodePool]) -> NodePool | None:
        """The pool of the request: the one its nodes are on, else the one GKE chose (its NodePoolName detail)."""
        name = self.request_pools.get(key) or dws.pool_name(pr)
        return pools.get(name) if name else None

    def _accepted_time(self, key: str, conds: dict[str, Obj]) -> float:
        """When the request was accepted: remembered, else its Accepted time (after a restart), else now."""
        if key not in self.accepted_at:
            accepted = conds.get("Accepted") or {}
            self.accepted_at[key] = (
                dws.parse_time(accepted.get("lastTransitionTime")) if accepted.get("status") == "True" else None
            ) or time.time()
        return self.accepted_at[key]

    def _committed(
        self, requests: list[Obj], by_pool: dict[str, list[Obj]], by_request: dict[str, list[str]]
    ) -> dict[str, int]:
        """Per pool: its nodes plus the nodes still to come for the requests accepted on it."""
        committed: dict[str, int] = defaultdict(int, {name: len(nodes) for name, nodes in by_pool.items()})
        for pr in requests:
            key = f"{pr['metadata']['namespace']}/{pr['metadata']['name']}"
            true = {k for k, c in conditions(pr).items() if c.get("status") == "True"}
            pool = dws.pool_name(pr)
            waiting = "Accepted" in true and not true & {"Provisioned", "Failed", "CapacityRevoked"}
            if pool and waiting and key not in self.delivered:
                committed[pool] += max(dws.pod_count(pr) - len(by_request.get(key, [])), 0)
        return committed

    def step(
        self,
        pools: dict[str, NodePool],
        by_pool: dict[str, list[Obj]],
        settings: settings_mod.Settings,
        busy: Callable[[], set[str]],
    ) -> None:
        requests = self.ctx.requests()
        if requests is None:
            return  # the watch has not listed yet: nothing is known to be gone
        requests = [pr for pr in requests if pr["spec"].get("provisioningClassName") == dws.QUEUED_CLASS]
        by_request: dict[str, list[str]] = defaultdict(list)
        self.request_pools = {}
        for pool_name, pool_nodes in by_pool.items():
            for node in pool_nodes:
                request = (node["metadata"].get("annotations") or {}).get(REQUEST)
                if request:
                    by_request[request].append(node["metadata"]["name"])
                    self.request_pools[request] = pool_name
        live: set[str] = set()
        self.fail_next = settings.fail_next
        this = _Pass(pools, by_pool, by_request, settings, busy, self._committed(requests, by_pool, by_request))
        for pr in requests:
            key = f"{pr['metadata']['namespace']}/{pr['metadata']['name']}"
            live.add(key)
            try:
                self._request(pr, key, this)
            except KubeError as exc:
                self.ctx.log(f"ProvisioningRequest {key}: {exc} (will retry)")
        self.booking.deliver(this.deliveries, self.delivered)
        for table in (self.first_seen, self.accepted_at, self.selectors):
            for key in [k for k in table if k not in live]:
                del table[key]
        self.booking.forget(live)
        self.delivered &= live
        # Nodes whose request is gone are removed (the job finished or was evicted).
        for request, names in by_request.items():
            if request not in live:
                for name in names:
                    self.nodes.delete(name, f"ProvisioningRequest {request} deleted")

    def _request(self, pr: Obj, key: str, this: _Pass) -> None:
        """One request, one step further along DWS's lifecycle (the module docstring lists the states)."""
        conds = conditions(pr)
        true = {kind for kind, cond in conds.items() if cond.get("status") == "True"}
        nodes = this.by_request.get(key, [])
        if true & {"Failed", "CapacityRevoked"}:
            for name in nodes:  # terminal: no capacity is left behind
                self.nodes.delete(name, f"ProvisioningRequest {key} is {'Failed' if 'Failed' in true else 'revoked'}")
            return
        if "Provisioned" in true or key in self.delivered:
            if "Provisioned" in true:
                pool = self._assigned_pool(pr, key, this.pools)
                self.booking.step(pr, key, conds, true, nodes, pool, this.settings, this.busy)
            return
        if not conds:
            # dws.GKE_CA_STATE: GKE's initializer makes a new request Pending before any node group is chosen.
            pr = self.ctx.set_pr_conditions(
                pr, [("Accepted", "False", dws.NOT_ACCEPTED_REASON, dws.NOT_ACCEPTED_MESSAGE)]
            )
        podsets = len(pr["spec"].get("podSets", []))
        if podsets > 1 and not this.settings.provisioning_request_multiple_podsets_enabled and "Accepted" not in true:
            # dws.GKE_CA_FEATURE_GUARD: only with the rollout flag off, and only before the request is accepted.
            self.ctx.set_pr_conditions(
                pr, [("Failed", "True", dws.MULTIPLE_PODSETS_REASON, dws.MULTIPLE_PODSETS_MESSAGE)]
            )
            self.ctx.log(f"ProvisioningRequest {key}: Failed, {podsets} PodSets")
            return
        self.missing_templates.discard(key)
        selectors, count = self._pr_pod_selector(pr)
        if key in self.missing_templates:
            # Kueue writes the pod templates first; one not there yet is looked for again shortly.
            self.ctx.deadline(time.time() + 1.0)
            return
        pool = self._assigned_pool(pr, key, this.pools) if "Accepted" in true else None
        if pool is None:
            chosen = self._accept(pr, key, nodes, selectors, count, this)
            if chosen is None:
                return
            pr, pool = chosen
        self._provision(pr, key, pool, true, nodes, count, this)

    def _accept(
        self, pr: Obj, key: str, nodes: list[str], selectors: list[dict[str, str]], count: int, this: _Pass
    ) -> tuple[Obj, NodePool] | None:
        """A pool for a request not yet accepted, as GKE's scale-up chooses it (planb.local.capacity.scaleup): the
        request as Accepted=True with GKE's details and its pool, or None while none takes it or its create call
        failed."""

        def free(candidate: NodePool) -> int:
            """Nodes the pool can still take (this request's own nodes of an earlier attempt count as free)."""
            own = len(nodes) if self.request_pools.get(key) == candidate.name else 0
            return candidate.max_nodes - this.committed[candidate.name] + own

        now = time.time()

        def backed_off(candidate: NodePool) -> bool:
            return self.backoff.until(candidate.name, now) is not None

        created = self.created_at(key, pr)
        retrying = now < created + scaleup.RETRY_PERIOD_SECONDS
        decision = scaleup.decide(this.pools.values(), selectors, count, free, retrying, backed_off)
        if decision.pool is None:
            self._not_accepted(pr, key, decision, retrying, created)
            if decision.reason == scaleup.BACKOFF_REASON:
                ends = [u for p in this.pools.values() if (u := self.backoff.until(p.name, now)) is not None]
                self.ctx.deadline(min(ends))  # a pool can take the request again when its backoff ends
            return None
        pool = decision.pool
        details = dws.class_details(key, pool, dws.template_names(pr))
        if self.fail_next > 0 or this.settings.resolve(pool.name, key).fail:
            self._create_failed(pr, key, pool, details, this.settings)
            return None
        this.committed[pool.name] += count - (len(nodes) if self.request_pools.get(key) == pool.name else 0)
        self.accepted_at[key] = time.time()
        pr = self.ctx.set_pr_conditions(pr, [("Accepted", "True", dws.ACCEPTED_REASON, dws.ACCEPTED_MESSAGE)], details)
        return pr, pool

    def _provision(
        self, pr: Obj, key: str, pool: NodePool, true: set[str], nodes: list[str], count: int, this: _Pass
    ) -> None:
        """An accepted request queued for its delay and until its pool has room, then its nodes added to this pass's
        deliveries."""
        life = this.settings.resolve(pool.name, key)
        ready_at = self._accepted_time(key, conditions(pr)) + life.delay_seconds
        if "Accepted" not in true:
            self.ctx.log(f"ProvisioningRequest {key}: accepted on {pool.name}, queued for {life.delay_seconds:.0f} s")
        in_use = len(this.by_pool.get(pool.name, [])) + this.added[pool.name]
        room = in_use - len(nodes) + count <= pool.max_nodes
        if time.time() < ready_at or not room:
            # dws.GKE_CA_WAITING: the resize request waits for capacity.
            self.ctx.set_pr_conditions(pr, [("Provisioned", "False", dws.WAITING_REASON, dws.WAITING_MESSAGE)])
            if time.time() < ready_at:
                self.ctx.deadline(ready_at)
            return
        missing = count - len(nodes)  # nodes of an earlier attempt that broke off are the request's own
        this.added[pool.name] += missing
        self.delivered.add(key)
        this.deliveries.append((pr, pool, missing, key))

    def _create_failed(
        self, pr: Obj, key: str, pool: NodePool, details: dict[str, str], settings: settings_mod.Settings
    ) -> None:
        """The resize request's create call fails (a switch): GKE's details, then Failed=True
        (QueuingInfeasibleNoCapacity) with Accepted still False, and the pool backed off (dws.GKE_CA_CREATE_FAILED,
        scaleup.SCALEUP_EXECUTOR)."""
        if self.fail_next > 0:
            self.fail_next -= 1
            settings_mod.update(self.ctx.state_dir, fail_next=self.fail_next)
            switch = "planb local capacity set --fail-next"
        else:
            switch = "planb local capacity set --fail"
        pr = self.ctx.set_pr_conditions(pr, [], details)
        # dws.NO_CAPACITY_REASON and its message, with planb's note of the switch that made it.
        message = f"{dws.no_capacity_message(pool.zone or '-')} (simulated: {switch}, node pool {pool.name})"
        self.ctx.set_pr_conditions(pr, [("Failed", "True", dws.NO_CAPACITY_REASON, message)])
        now = time.time()
        until = self.backoff.fail(pool.name, now, settings.node_group_backoff_seconds)
        self.ctx.log(
            f"ProvisioningRequest {key}: Failed (simulated), node pool {pool.name} backed off for {until - now:.0f} s"
        )

    def _not_accepted(self, pr: Obj, key: str, decision: scaleup.Decision, retrying: bool, created: float) -> None:
        """No pool takes the request: Accepted=False with GKE's reason while it may still be taken, else Failed."""
        if retrying or not decision.fails:
            written = self.ctx.set_pr_conditions(pr, [("Accepted", "False", decision.reason, decision.message)])
            if written is not pr:
                self.ctx.log(f"ProvisioningRequest {key}: not accepted, {decision.reason}: {decision.message}")
            if retrying:
                self.ctx.deadline(created + scaleup.RETRY_PERIOD_SECONDS)
            return
        self.ctx.set_pr_conditions(pr, [("Failed", "True", decision.reason, decision.message)])
        self.ctx.log(f"ProvisioningRequest {key}: Failed, {decision.reason}: {decision.message}")
