"""DWS's ProvisioningRequest lifecycle, as GKE's autoscaler runs it for queued provisioning.

Requests of class ``queued-provisioning.gke.io`` go through DWS's lifecycle, each step with the
condition type, reason and message GKE sets ("Run a large-scale workload with flex-start with
queued provisioning", section on the Provisioning Request's status:
https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest; the reasons and
messages are the ones GKE's autoscaler writes (planb.capacity.dws), and Kueue v0.19.2's
pkg/controller/admissionchecks/provisioning reacts to each type):

- queued: ``Accepted=True`` (SuccessfullyQueued) and ``Provisioned=False``
  (ResourcePoolExhausted, "Waiting for resources ... ETA: <time>.") for the request's delay
  (``provisioning_delay_seconds``, per pool or request pattern in ``pools``/``requests``);
  Kueue copies the message, ETA included, into the Workload's admission check;
- provisioned: the matching queued-provisioning pool gets all the request's nodes at once (KWOK
  nodes with GKE's labels, the ``cloud.google.com/gke-queued`` taint and accelerator capacity),
  ``Provisioned=True``; a request the pool has no room for stays queued. Its nodes carry
  ``autoscaling.gke.io/provisioning-request`` with the request's resize request name, also written
  to ``status.provisioningClassDetails.ResizeRequestName``; `planb.capacity.webhook` gives the
  request's pods the matching node selector, so no other pod lands on them (GKE's sources there);
- booking expired: ``booking_window_seconds`` after delivery (GKE: 10 minutes) the request gets
  ``BookingExpired=True``; if no pod of the request runs on its nodes by then they are taken
  back at once, else they go once its pods are gone (scale-down of underutilized nodes). Kueue
  retries a request that expires before its Workload is admitted and ignores it afterwards;
- capacity revoked: at the request's ``maxRunDurationSeconds`` parameter (Kueue passes the
  job's ``provreq.kueue.x-k8s.io/maxRunDurationSeconds`` annotation; GKE's default and cap: 7
  days) after delivery, or a pool's/request's ``max_run_seconds`` switch, the nodes go and the
  request gets ``CapacityRevoked=True`` (after ``BookingExpired``, as on GKE); Kueue then
  rejects the check, which deactivates the Workload;
- failed: ``Failed=True`` (QueuingInfeasibleNoCapacity) for ``fail_next`` requests and those of
  a pool or request pattern switched to ``fail``; a request with more than one PodSet fails at
  once with GKE's MultiplePodSetsUnsupported. When a request is deleted its nodes go.

Where this differs from GKE: provisioning takes a fixed delay instead of waiting for real capacity
(so the ETA is exact), and a failure is a switch, not a stockout.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from planb.capacity import dws
from planb.capacity import settings as settings_mod
from planb.capacity.nodes import REQUEST, NodeFactory
from planb.capacity.pools import NodePool
from planb.informer import Informer
from planb.kube import KubeError, Obj, conditions

#: Requests whose nodes are made at the same time.
DELIVERY_WORKERS = 8


class ProvisioningLifecycle(NodeFactory):
    """Each queued-provisioning request one step further per pass (a mixin of CapacitySimulator)."""

    state_dir: Path | None
    #: Per request ("namespace/name"): when it was first queued and when it was delivered (wall clock).
    first_seen: dict[str, float]
    provisioned_at: dict[str, float]
    #: Requests delivered by this process (guards against acting twice on a stale cached version).
    delivered: set[str]
    #: Per request: the nodeSelector and pod count of its templates.
    selectors: dict[str, tuple[dict[str, str], int]]
    missing_templates: set[str]
    #: Per request with nodes: the pool they are on (rebuilt from the nodes on every pass).
    request_pools: dict[str, str]
    #: Per request whose booking is over: since when none of its nodes runs a pod.
    idle_request_since: dict[str, float]
    #: The ProvisioningRequest watch while `run` runs (None: `step` lists them itself).
    informer: Informer | None
    #: The earliest timer (wall clock) a pass found: a delay, booking window or run duration ending.
    next_deadline: float
    #: Pools the catalog cannot describe, by name, with the error last logged for each.
    broken: dict[str, str]

    def _requests(self) -> list[Obj] | None:
        """Every ProvisioningRequest: the watch's cache under `run`, else one list; None before the first sync."""
        if self.informer is not None:
            if not self.informer.synced.is_set():
                return None
            return self.informer.snapshot()
        return self.kube.items(f"{dws.PR_PATH}/provisioningrequests")

    def _set_pr_conditions(
        self, pr: Obj, updates: list[tuple[str, str, str, str]], details: dict[str, str] | None = None
    ) -> Obj:
        """Set conditions (type, status, reason, message) and provisioningClassDetails of a request; returns the
        request as written."""
        patch = dws.status_patch(pr, updates, details)
        if patch is None:
            return pr
        meta = pr["metadata"]
        written = self.kube.merge_patch(
            f"{dws.PR_PATH}/namespaces/{meta['namespace']}/provisioningrequests/{meta['name']}/status",
            {"status": patch},
        )
        if self.informer is not None and written:
            self.informer.put(written)  # the next pass must not act on the version before this write
        return written or pr

    def _pr_pod_selector(self, pr: Obj) -> tuple[dict[str, str], int]:
        """The nodeSelector of the request's pod templates and the number of pods it asks for."""
        key = f"{pr['metadata']['namespace']}/{pr['metadata']['name']}"
        cached = self.selectors.get(key)
        if cached is not None:
            return cached
        selector: dict[str, str] = {}
        count = 0
        found = True
        for podset in pr["spec"].get("podSets", []):
            count += int(podset.get("count", 1))
            template = self.kube.get(
                f"/api/v1/namespaces/{pr['metadata']['namespace']}/podtemplates/{podset['podTemplateRef']['name']}"
            )
            if template is None:
                found = False
            else:
                selector.update(template["template"]["spec"].get("nodeSelector") or {})
        if found:
            self.selectors[key] = (selector, count)  # a request's templates do not change
        else:
            self.missing_templates.add(key)
        return selector, count

    def _pool_for(
        self, pr: Obj, pools: dict[str, NodePool], free: Callable[[NodePool], int] | None = None
    ) -> tuple[NodePool | None, dict[str, str], int]:
        """The queued-provisioning pool of a request: the one its nodes are on, else the first matching one that
        has room for it (``free``: nodes a pool can still take), else the first matching one.

        A plan's pools all carry its label (planb.dev/plan), so a request matches each of them. GKE's autoscaler
        skips a node group whose target size has reached its max for a ProvisioningRequest (GKE_AUTOSCALER_MAX_REACHED
        in planb.gke.rules), and a multi-host TPU pool's max is one slice: with K such DWS pools, K requests are
        provisioned at once, one per pool, and the next waits until one is free.
        """
        selector, count = self._pr_pod_selector(pr)
        matches = [p for p in pools.values() if p.queued_provisioning and p.matches(selector)]
        key = f"{pr['metadata']['namespace']}/{pr['metadata']['name']}"
        held = [p for p in matches if p.name == self.request_pools.get(key)]
        roomy = [p for p in matches if free is not None and free(p) >= count]
        return next(iter(held + roomy + matches), None), selector, count

    def _seen_at(self, key: str, conds: dict[str, Obj]) -> float:
        """When the request was first queued (wall clock): remembered, else its Accepted time (after a restart)."""
        if key not in self.first_seen:
            accepted = conds.get("Accepted")
            self.first_seen[key] = (
                dws.parse_time(accepted.get("lastTransitionTime"))
                if accepted and accepted.get("status") == "True"
                else None
            ) or time.time()
        return self.first_seen[key]

    def _provisioned_at(self, key: str, conds: dict[str, Obj]) -> float:
        if key not in self.provisioned_at:
            self.provisioned_at[key] = dws.parse_time(conds["Provisioned"].get("lastTransitionTime")) or time.time()
        return self.provisioned_at[key]

    def _deadline(self, when: float) -> None:
        """Wake the loop at `when` (wall clock) at the latest."""
        self.next_deadline = min(self.next_deadline, when)

    def _provisioning_requests(
        self,
        pools: dict[str, NodePool],
        by_pool: dict[str, list[Obj]],
        settings: settings_mod.Settings,
        busy: Callable[[], set[str]],
    ) -> None:
        requests = self._requests()
        if requests is None:
            return  # the watch has not listed yet: nothing is known to be gone
        by_request: dict[str, list[str]] = defaultdict(list)
        self.request_pools = {}
        for pool_name, pool_nodes in by_pool.items():
            for node in pool_nodes:
                request = (node["metadata"].get("annotations") or {}).get(REQUEST)
                if request:
                    by_request[request].append(node["metadata"]["name"])
                    self.request_pools[request] = pool_name
        live: set[str] = set()
        added: dict[str, int] = defaultdict(int)
        deliveries: list[tuple[Obj, NodePool, int, str]] = []
        for pr in requests:
            if pr["spec"].get("provisioningClassName") != dws.QUEUED_CLASS:
                continue
            key = f"{pr['metadata']['namespace']}/{pr['metadata']['name']}"
            live.add(key)
            try:
                self._request(pr, key, pools, by_pool, by_request, settings, busy, added, deliveries)
            except KubeError as exc:
                self.log(f"ProvisioningRequest {key}: {exc} (will retry)")
        self._deliver(deliveries)
        for table in (self.first_seen, self.provisioned_at, self.selectors, self.idle_request_since):
            for key in [k for k in table if k not in live]:
                del table[key]
        self.delivered &= live
        # Nodes whose request is gone are removed (the job finished or was evicted).
        for request, names in by_request.items():
            if request not in live:
                for name in names:
                    self._delete_node(name, f"ProvisioningRequest {request} deleted")

    def _request(
        self,
        pr: Obj,
        key: str,
        pools: dict[str, NodePool],
        by_pool: dict[str, list[Obj]],
        by_request: dict[str, list[str]],
        settings: settings_mod.Settings,
        busy: Callable[[], set[str]],
        added: dict[str, int],
        deliveries: list[tuple[Obj, NodePool, int, str]],
    ) -> None:
        """One request, one step further along DWS's lifecycle (the module docstring lists the states)."""
        conds = conditions(pr)
        true = {kind for kind, cond in conds.items() if cond.get("status") == "True"}
        nodes = by_request.get(key, [])
        if true & {"Failed", "CapacityRevoked"}:
            for name in nodes:  # terminal: no capacity is left behind
                self._delete_node(name, f"ProvisioningRequest {key} is {'Failed' if 'Failed' in true else 'revoked'}")
            return
        if "Provisioned" in true or key in self.delivered:
            if "Provisioned" in true:
                self._booked(pr, key, conds, true, nodes, pools, settings, busy)
            return
        if len(pr["spec"].get("podSets", [])) > 1:
            # GKE's queued provisioning takes one PodSet per request and fails any other at once.
            self._set_pr_conditions(pr, [("Failed", "True", dws.MULTIPLE_PODSETS_REASON, dws.MULTIPLE_PODSETS_MESSAGE)])
            self.log(f"ProvisioningRequest {key}: Failed, {len(pr['spec']['podSets'])} PodSets")
            return
        self.missing_templates.discard(key)

        def free(candidate: NodePool) -> int:
            """Nodes the pool can still take (this request's own nodes of an earlier attempt count as free)."""
            in_pool = len(by_pool.get(candidate.name, [])) + added[candidate.name]
            return candidate.max_nodes - in_pool + len(nodes)

        pool, selector, count = self._pool_for(pr, pools, free)
        if key in self.missing_templates:
            # Kueue writes the pod templates first; one not there yet is looked for again shortly.
            self._deadline(time.time() + 1.0)
            return
        life = settings.resolve(pool.name if pool else None, key)
        seen = self._seen_at(key, conds)
        if pool is None:
            why = f"no node pool with queued provisioning matches nodeSelector {selector}"
            if self.broken:
                why += "; pools without nodes: " + "; ".join(f"{n}: {m}" for n, m in sorted(self.broken.items()))
            self._set_pr_conditions(pr, [("Failed", "True", "NoMatchingNodePool", why)])
            self.log(f"ProvisioningRequest {key}: Failed, no queued-provisioning pool matches {selector}")
            return
        eta = seen + life.delay_seconds
        in_use = len(by_pool.get(pool.name, [])) + added[pool.name]
        room = in_use - len(nodes) + count <= pool.max_nodes
        if time.time() < eta or (not room and not life.fail and settings.fail_next <= 0):
            waiting = f"{dws.WAITING_MESSAGE} ETA: {dws.iso(eta)}."
            if time.time() >= eta:
                waiting = (
                    f"{dws.WAITING_MESSAGE} Node pool {pool.name} has {pool.max_nodes - in_use} of its "
                    f"{pool.max_nodes} node(s) free and the request needs {count}: it stays queued."
                )
            if "Accepted" not in true:
                self.log(f"ProvisioningRequest {key}: accepted, queued for {life.delay_seconds:.0f} s on {pool.name}")
            self._set_pr_conditions(
                pr,
                [
                    ("Accepted", "True", dws.ACCEPTED_REASON, dws.ACCEPTED_MESSAGE),
                    ("Provisioned", "False", dws.WAITING_REASON, waiting),
                ],
                dws.class_details(key, pool),
            )
            if time.time() < eta:
                self._deadline(eta)
            return
        if settings.fail_next > 0 or life.fail:
            if settings.fail_next > 0:
                settings_mod.update(self.state_dir, fail_next=settings.fail_next - 1)
                switch = "planb capacity set --fail-next"
            else:
                switch = "planb capacity set --fail"
            self._set_pr_conditions(
                pr,
                [
                    ("Accepted", "True", dws.ACCEPTED_REASON, dws.ACCEPTED_MESSAGE),
                    (
                        "Failed",
                        "True",
                        dws.NO_CAPACITY_REASON,
                        f"{dws.no_capacity_message(pool.name)} (simulated: {switch})",
                    ),
                ],
            )
            self.log(f"ProvisioningRequest {key}: Failed (simulated)")
            return
        missing = count - len(nodes)  # nodes of an earlier attempt that broke off are the request's own
        added[pool.name] += missing
        self.delivered.add(key)
        deliveries.append((pr, pool, missing, key))

    def _deliver(self, deliveries: list[tuple[Obj, NodePool, int, str]]) -> None:
        """All nodes of each request at once, then Provisioned=True; requests in parallel."""

        def one(item: tuple[Obj, NodePool, int, str]) -> None:
            pr, pool, count, key = item
            try:
                if count > 0:
                    self._add_slice(pool, count, f"ProvisioningRequest {key}", request=key)
                self.provisioned_at[key] = time.time()
                self._set_pr_conditions(
                    pr,
                    [
                        ("Accepted", "True", dws.ACCEPTED_REASON, dws.ACCEPTED_MESSAGE),
                        ("Provisioned", "True", dws.PROVISIONED_REASON, dws.PROVISIONED_MESSAGE),
                    ],
                    dws.class_details(key, pool),
                )
                self.log(f"ProvisioningRequest {key}: Provisioned on {pool.name}")
            except KubeError as exc:
                self.delivered.discard(key)  # the next pass makes the nodes still missing
                self.log(f"ProvisioningRequest {key}: delivery failed: {exc} (will retry)")

        if len(deliveries) <= 1:
            for item in deliveries:
                one(item)
            return
        with ThreadPoolExecutor(max_workers=min(DELIVERY_WORKERS, len(deliveries))) as pool:
            list(pool.map(one, deliveries))

    def _booked(
        self,
        pr: Obj,
        key: str,
        conds: dict[str, Obj],
        true: set[str],
        nodes: list[str],
        pools: dict[str, NodePool],
        settings: settings_mod.Settings,
        busy: Callable[[], set[str]],
    ) -> None:
        """A provisioned request: its booking expires, its capacity is revoked at its run duration."""
        pool, _, _ = self._pool_for(pr, pools)
        life = settings.resolve(pool.name if pool else None, key)
        delivered = self._provisioned_at(key, conds)
        max_run = life.max_run_seconds
        if max_run is None:
            max_run = dws.max_run_parameter(pr)
        now = time.time()
        if now >= delivered + max_run:
            updates = [("CapacityRevoked", "True", dws.CAPACITY_REVOKED_REASON, dws.CAPACITY_REVOKED_MESSAGE)]
            if "BookingExpired" not in true:  # GKE's requests pass through BookingExpired first
                updates.insert(0, ("BookingExpired", "True", dws.BOOKING_EXPIRED_REASON, dws.BOOKING_EXPIRED_MESSAGE))
            for name in nodes:
                self._delete_node(name, f"ProvisioningRequest {key}: run duration of {max_run:.0f} s is over")
            self._set_pr_conditions(pr, updates)
            self.log(f"ProvisioningRequest {key}: CapacityRevoked after {max_run:.0f} s")
            return
        self._deadline(delivered + max_run)
        window_end = delivered + life.booking_window_seconds
        if now < window_end:
            self._deadline(window_end)
            return
        used = bool(set(nodes) & busy())
        if "BookingExpired" not in true:
            self._set_pr_conditions(
                pr, [("BookingExpired", "True", dws.BOOKING_EXPIRED_REASON, dws.BOOKING_EXPIRED_MESSAGE)]
            )
            self.log(f"ProvisioningRequest {key}: BookingExpired ({'in use' if used else 'no pod landed'})")
            if not used:
                for name in nodes:
                    self._delete_node(
                        name,
                        f"ProvisioningRequest {key}: no pod of the request within the "
                        f"{life.booking_window_seconds:.0f} s booking window",
                    )
                return
        # After the booking, nodes are candidates for scale down once their request's pods are gone.
        if used or not nodes:
            self.idle_request_since.pop(key, None)
            return
        since = self.idle_request_since.setdefault(key, now)
        if now - since >= settings.scale_down_after_seconds:
            for name in nodes:
                self._delete_node(name, f"ProvisioningRequest {key}: booking over, idle for {now - since:.0f} s")
        else:
            self._deadline(since + settings.scale_down_after_seconds)
