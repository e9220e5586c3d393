"""A queued ProvisioningRequest from its delivery on: all its nodes made at once, then ``Provisioned=True``; its
booking and run duration, as GKE's autoscaler ends them.

``booking_window_seconds`` after delivery (GKE: 10 minutes, GoogleCloudPlatform/cluster-autoscaler's
provreqstate BookingDuration) the request gets ``BookingExpired=True``; nodes no pod of the request runs
on are taken back then, the others once their pods are gone (scale-down of underutilized nodes). At the
request's ``maxRunDurationSeconds`` parameter after delivery (GKE's default and cap: 7 days), or a
pool's/request's ``max_run_seconds`` switch, its nodes go and it gets ``CapacityRevoked=True``, after
``BookingExpired`` as on GKE. Part of queued provisioning: planb.local.capacity.provisioning's
`QueuedProvisioning` holds a `Booking`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from planb.kube import KubeError, Obj
from planb.local.capacity import dws
from planb.local.capacity import settings as settings_mod
from planb.local.capacity.context import Context
from planb.local.capacity.nodes import Nodes
from planb.local.capacity.pools import NodePool

#: Requests whose nodes are made at the same time.
DELIVERY_WORKERS = 8


class Booking:
    """The steps of a queued request from its delivery on (planb.local.capacity.provisioning's QueuedProvisioning
    holds one and hands it the requests to deliver and each provisioned request)."""

    def __init__(self, ctx: Context, nodes: Nodes) -> None:
        self.ctx = ctx
        self.nodes = nodes
        #: Per request ("namespace/name"): when it was delivered (wall clock).
        self.provisioned_at: dict[str, float] = {}
        #: Per request whose booking is over: since when none of its nodes runs a pod.
        self.idle_request_since: dict[str, float] = {}

    def delivered(self, key: str, at: float) -> None:
        """The request's nodes are all there since `at` (wall clock)."""
        self.provisioned_at[key] = at

    def deliver(self, deliveries: list[tuple[Obj, NodePool, int, str]], delivered: set[str]) -> None:
        """All nodes of each request at once, then Provisioned=True; requests in parallel. A request whose nodes
        could not all be made leaves ``delivered`` (the reconciler's), for its next pass to make those still missing."""

        def one(item: tuple[Obj, NodePool, int, str]) -> None:
            pr, pool, count, key = item
            try:
                if count > 0:
                    self.nodes.add_slice(pool, count, f"ProvisioningRequest {key}", request=key)
                self.delivered(key, time.time())
                self.ctx.set_pr_conditions(
                    pr, [("Provisioned", "True", dws.PROVISIONED_REASON, dws.PROVISIONED_MESSAGE)]
                )
                self.ctx.log(f"ProvisioningRequest {key}: Provisioned on {pool.name}")
            except KubeError as exc:
                delivered.discard(key)  # the next pass makes the nodes still missing
                self.ctx.log(f"ProvisioningRequest {key}: delivery failed: {exc} (will retry)")

        if len(deliveries) <= 1:
            for item in deliveries:
                one(item)
            return
        with ThreadPoolExecutor(max_workers=min(DELIVERY_WORKERS, len(deliveries))) as pool:
            list(pool.map(one, deliveries))

    def forget(self, live: set[str]) -> None:
        """Drop what is kept of requests no longer there."""
        for table in (self.provisioned_at, self.idle_request_since):
            for key in [k for k in table if k not in live]:
                del table[key]

    def _provisioned_at(self, key: str, conds: dict[str, Obj]) -> float:
        if key not in self.provisioned_at:
            self.provisioned_at[key] = dws.parse_time(conds["Provisioned"].get("lastTransitionTime")) or time.time()
        return self.provisioned_at[key]

    def step(
        self,
        pr: Obj,
        key: str,
        conds: dict[str, Obj],
        true: set[str],
        nodes: list[str],
        pool: NodePool | None,
        settings: settings_mod.Settings,
        busy: Callable[[], set[str]],
    ) -> None:
        """A provisioned request on `pool`: its booking expires, its capacity is revoked at its run duration."""
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
                self.nodes.delete(name, f"ProvisioningRequest {key}: run duration of {max_run:.0f} s is over")
            self.ctx.set_pr_conditions(pr, updates)
            self.ctx.log(f"ProvisioningRequest {key}: CapacityRevoked after {max_run:.0f} s")
            return
        self.ctx.deadline(delivered + max_run)
        window_end = delivered + life.booking_window_seconds
        if now < window_end:
            self.ctx.deadline(window_end)
            return
        used = bool(set(nodes) & busy())
        if "BookingExpired" not in true:
            self.ctx.set_pr_conditions(
                pr, [("BookingExpired", "True", dws.BOOKING_EXPIRED_REASON, dws.BOOKING_EXPIRED_MESSAGE)]
            )
            self.ctx.log(f"ProvisioningRequest {key}: BookingExpired ({'in use' if used else 'no pod landed'})")
            if not used:
                for name in nodes:
                    self.nodes.delete(
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
                self.nodes.delete(name, f"ProvisioningRequest {key}: booking over, idle for {now - since:.0f} s")
        else:
            self.ctx.deadline(since + settings.scale_down_after_seconds)
