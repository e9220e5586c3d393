"""A provisioned ProvisioningRequest's booking and run duration, as GKE's autoscaler ends them.

``booking_window_seconds`` after delivery (GKE: 10 minutes, GoogleCloudPlatform/cluster-autoscaler's
provreqstate BookingDuration) the request gets ``BookingExpired=True``; nodes no pod of the request runs
on are taken back then, the others once their pods are gone (scale-down of underutilized nodes). At the
request's ``maxRunDurationSeconds`` parameter after delivery (GKE's default and cap: 7 days), or a
pool's/request's ``max_run_seconds`` switch, its nodes go and it gets ``CapacityRevoked=True``, after
``BookingExpired`` as on GKE. A mixin of planb.local.capacity.provisioning.ProvisioningLifecycle.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from planb.informer import Informer
from planb.kube import Obj
from planb.local.capacity import dws
from planb.local.capacity import settings as settings_mod
from planb.local.capacity.nodes import NodeFactory
from planb.local.capacity.pools import NodePool


class BookingLifecycle(NodeFactory):
    """The steps of a request after its nodes are there."""

    #: Per request ("namespace/name"): when it was delivered (wall clock).
    provisioned_at: dict[str, float]
    #: Per request with nodes: the pool they are on (rebuilt from the nodes on every pass).
    request_pools: dict[str, str]
    #: Per request whose booking is over: since when none of its nodes runs a pod.
    idle_request_since: dict[str, float]
    #: The earliest timer (wall clock) a pass found: a delay, booking window or run duration ending.
    next_deadline: float

    #: The ProvisioningRequest watch while `run` runs (None: `step` lists them itself).
    informer: Informer | None

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

    def _assigned_pool(self, pr: Obj, key: str, pools: dict[str, NodePool]) -> NodePool | None:
        """The pool of the request: the one its nodes are on, else the one GKE chose (its NodePoolName detail)."""
        name = self.request_pools.get(key) or dws.pool_name(pr)
        return pools.get(name) if name else None

    def _provisioned_at(self, key: str, conds: dict[str, Obj]) -> float:
        if key not in self.provisioned_at:
            self.provisioned_at[key] = dws.parse_time(conds["Provisioned"].get("lastTransitionTime")) or time.time()
        return self.provisioned_at[key]

    def _deadline(self, when: float) -> None:
        """Wake the loop at `when` (wall clock) at the latest."""
        self.next_deadline = min(self.next_deadline, when)

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
        pool = self._assigned_pool(pr, key, pools)
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
