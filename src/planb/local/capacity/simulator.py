"""The capacity simulator: what GKE's cluster autoscaler and Dynamic Workload Scheduler do, locally.

One pass (`CapacitySimulator.step`) reads the node pools over the GKE API (planb.local.capacity.gke_api:
the GKE emulator in local mode) and the simulator's nodes, and then, in this order:

* removes the nodes of pools that no longer exist;
* Spot preemption: notices to the pools ``preempt`` names, then their nodes go after
  ``spot_notice_seconds`` (planb.local.capacity.spot);
* fixed-size pools (autoscaling off, e.g. the cluster's default pool) get their node count, and
  autoscaled pools at least their minimum (planb.local.capacity.nodes makes the nodes);
* ProvisioningRequests of class ``queued-provisioning.gke.io`` go one step further along DWS's
  lifecycle (planb.local.capacity.provisioning);
* ProvisioningRequests of class ``best-effort-atomic-scale-up.autoscaling.x-k8s.io`` are answered by one
  all-or-nothing scale-up of an ordinary pool, and the nodes their bookings hold count as used by the
  scale-up and scale-down after it (planb.local.capacity.besteffort);
* autoscaled on-demand and Spot pools grow for pending pods and shrink when idle
  (planb.local.capacity.autoscaler).

`CapacitySimulator.run` watches ProvisioningRequests (list, then watch from the list's
resourceVersion), so it answers each one as it appears instead of on the next poll, and runs a pass
on every change, at the earliest timer a pass found and every ``interval_seconds`` else. An API
error is logged and the next pass retries; an unreadable settings file or a GKE API that does not
give the pools pauses it (said once, no node changes) until the next pass that reads both.

Node sizes come from the accelerator catalog. A pool whose machine type (or topology) the catalog
cannot describe gets no nodes: the simulator logs the catalog's error once per pool, and takes no
ProvisioningRequest on it.

Where this differs from GKE: no zones or reservations, node capacity is the machine's whole
capacity (no system reservations), provisioning takes a fixed delay instead of waiting for real
capacity, and a failure is a switch, not a stockout.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from planb.errors import PlanbError
from planb.informer import Informer
from planb.kube import Kube, KubeError, Obj
from planb.local.capacity import pools as pools_mod
from planb.local.capacity import registration
from planb.local.capacity import settings as settings_mod
from planb.local.capacity import spot as spot_mod
from planb.local.capacity import webhook as webhook_mod
from planb.local.capacity.autoscaler import Autoscaler
from planb.local.capacity.besteffort import BestEffortAtomic, PodSet
from planb.local.capacity.dws import PR_PATH
from planb.local.capacity.gke_api import NodePoolReader, default_endpoint, default_project
from planb.local.capacity.nodes import MANAGED
from planb.local.capacity.pools import BrokenPool, NodePool
from planb.local.capacity.provisioning import ProvisioningLifecycle

#: The webhook's server while it runs, and the configuration registered for it.
ServedWebhook = tuple[webhook_mod.WebhookServer, registration.Registration]


class CapacitySimulator(BestEffortAtomic, ProvisioningLifecycle, Autoscaler):
    """One reconcile pass per `step()`; `run()` loops until stopped."""

    def __init__(
        self,
        kubeconfig: Path,
        state_dir: Path | None = None,
        log: Callable[[str], None] = print,
        gke: NodePoolReader | None = None,
    ) -> None:
        self.kube = Kube(kubeconfig)
        self.state_dir = state_dir
        self.log = log
        #: Where the node pools come from (default: the local GKE emulator, the local inventory's project).
        self.gke = gke or NodePoolReader(default_endpoint(), default_project())
        #: Per request ("namespace/name"): when this process first saw it, when a pool was chosen for it and
        #: when it was delivered (wall clock).
        self.first_seen: dict[str, float] = {}
        self.accepted_at: dict[str, float] = {}
        self.provisioned_at: dict[str, float] = {}
        #: Requests delivered by this process (guards against acting twice on a stale cached version).
        self.delivered: set[str] = set()
        #: Per request: the nodeSelector and pod count of its templates.
        self.selectors: dict[str, tuple[dict[str, str], int]] = {}
        self.missing_templates: set[str] = set()
        #: Per request with nodes: the pool they are on (rebuilt from the nodes on every pass).
        self.request_pools: dict[str, str] = {}
        #: Per request whose booking is over: since when none of its nodes runs a pod.
        self.idle_request_since: dict[str, float] = {}
        self.idle_since: dict[str, float] = {}
        #: Best-effort-atomic requests (planb.local.capacity.besteffort): retry backoff, booking start, PodSets.
        self.best_effort_retry: dict[str, tuple[float, float]] = {}
        self.best_effort_provisioned: dict[str, float] = {}
        self.best_effort_podsets: dict[str, list[PodSet]] = {}
        #: Pods told they did not trigger a scale-up (planb.local.capacity.autoscaler: one Event per pod).
        self.told_not_triggered: set[str] = set()
        #: The ProvisioningRequest watch while `run` runs (None: `step` lists them itself).
        self.informer: Informer | None = None
        #: Set by the watch on every change: the loop runs a pass at once.
        self.wake = threading.Event()
        #: The earliest timer (wall clock) a pass found: a delay, booking window or run duration ending.
        self.next_deadline = float("inf")
        #: Pools the catalog cannot describe, by name, with the error last logged for each.
        self.broken: dict[str, str] = {}
        #: Why the last pass paused, as logged ('' when it ran).
        self.paused = ""
        #: Spot preemption (planb.local.capacity.spot): notices, then the nodes go.
        self.preemption = spot_mod.Preemption(self.kube, self.log, self._delete_node)

    # ------------------------------------------------------------------ loop
    def run(self, should_stop: Callable[[], bool] = lambda: False, webhook: bool = False) -> None:
        """Reconcile on every ProvisioningRequest change, at each timer, and every `interval_seconds` else.

        With `webhook`, GKE's binding of a request's pods to its nodes is served and registered first
        (`planb.local.capacity.webhook`), so no request is provisioned before its pods would get their node
        selector, and removed again when the loop ends.
        """
        self.log("capacity simulator running")
        settings = settings_mod.Settings()
        served = self._serve_webhook(should_stop) if webhook else None
        if webhook and served is None:
            return  # stopped before the webhook could be registered
        self.informer = Informer(self.kube, f"{PR_PATH}/provisioningrequests", self.wake.set, self.log).start()
        try:
            self._loop(should_stop, settings)
        finally:
            self.informer.stop()
            if served is not None:
                self._remove_webhook(served)

    def _serve_webhook(self, should_stop: Callable[[], bool]) -> ServedWebhook | None:
        """Start the webhook server and register it (planb.local.capacity.registration); None if stopped first."""
        server = webhook_mod.WebhookServer().start()
        registered = registration.register(self.kube, server.configuration(), should_stop, self.log)
        if registered is None:
            server.stop()
            return None
        return server, registered

    def _remove_webhook(self, served: ServedWebhook) -> None:
        """Unregister (only if still this process's), then stop serving: no pod creation goes to a gone webhook."""
        server, registered = served
        registration.unregister(self.kube, registered, self.log)
        server.stop()

    def _loop(self, should_stop: Callable[[], bool], settings: settings_mod.Settings) -> None:
        while not should_stop():
            self.wake.clear()
            self.next_deadline = float("inf")
            try:
                settings = settings_mod.load(self.state_dir)
                self.step(settings)
                self.paused = ""
            except KubeError as exc:
                self.log(f"api error (will retry): {exc}")
            except OSError as exc:
                self.log(f"connection error (will retry): {exc}")
            except PlanbError as exc:
                # An unreadable settings file or no node pools from the GKE API: say so once, keep
                # running, and carry on once the file is fixed or the API answers.
                if str(exc) != self.paused:
                    self.log(f"paused (will retry): {exc}")
                    self.paused = str(exc)
            self.wake.wait(max(0.0, min(settings.interval_seconds, self.next_deadline - time.time())))

    def step(self, settings: settings_mod.Settings | None = None) -> None:
        settings = settings or settings_mod.load(self.state_dir)
        loaded, broken = pools_mod.load(self.gke.node_pools())
        pools = {p.name: p for p in loaded}
        self._report_broken(broken)
        nodes = self.kube.items("/api/v1/nodes", {"labelSelector": MANAGED})
        by_pool: dict[str, list[Obj]] = defaultdict(list)
        for node in nodes:
            by_pool[node["metadata"]["labels"].get("cloud.google.com/gke-nodepool", "")].append(node)
        # Nodes of pools that no longer exist go.
        for pool_name, pool_nodes in by_pool.items():
            if pool_name not in pools and pool_name not in self.broken:
                for node in pool_nodes:
                    self._delete_node(node["metadata"]["name"], f"pool {pool_name} is gone")
        self._spot(pools, by_pool, settings)
        for pool in pools.values():
            if not pool.autoscaling and not pool.queued_provisioning:
                self._fixed_size(pool, by_pool.get(pool.name, []))
            elif pool.autoscaling and not pool.queued_provisioning:
                missing = pool.min_nodes - len(by_pool.get(pool.name, []))
                for _ in range(-(-max(0, missing) // pool.hosts_per_slice)):
                    self._add_slice(pool, pool.hosts_per_slice, f"the pool's minimum of {pool.min_nodes} node(s)")
        busy_nodes: list[set[str]] = []

        def busy() -> set[str]:
            """Nodes that run a pod (listed once per pass, when first needed)."""
            if not busy_nodes:
                busy_nodes.append(
                    {
                        pod["spec"]["nodeName"]
                        for pod in self.kube.items("/api/v1/pods")
                        if pod["spec"].get("nodeName")
                        and pod.get("status", {}).get("phase") not in ("Succeeded", "Failed")
                    }
                )
            return busy_nodes[0]

        self._provisioning_requests(pools, by_pool, settings, busy)
        booked = self._best_effort_requests(pools, by_pool, busy, settings)

        def used() -> set[str]:
            """Nodes that run a pod or that a best-effort-atomic request's booking holds."""
            return busy() | booked if booked else busy()

        self._scale_up(pools, by_pool, settings, used)
        self._scale_down(pools, by_pool, settings, used)

    def _spot(self, pools: dict[str, NodePool], by_pool: dict[str, list[Obj]], settings: settings_mod.Settings) -> None:
        """Spot preemption: notices to the pools `planb capacity set --preempt` named, then reclaim (spot.py)."""
        if settings.preempt:
            for name in settings.preempt:
                pool = pools.get(name)
                if pool is None or not pool.spot:
                    why = "no such pool" if pool is None else "not a Spot pool (config.spot is false)"
                    self.log(f"pool {name}: not preempted: {why}; GKE preempts Spot VMs only")
                    continue
                if self.preemption.notify(name, by_pool.get(name, [])):
                    self._deadline(time.time() + settings.spot_notice_seconds)
            settings_mod.update(self.state_dir, preempt=())
        for name, nodes in list(by_pool.items()):
            gone, deadline = self.preemption.reclaim(nodes, settings.spot_notice_seconds)
            self._deadline(deadline)
            if gone:
                by_pool[name] = [n for n in nodes if n["metadata"]["name"] not in gone]

    def _report_broken(self, broken: list[BrokenPool]) -> None:
        """Log each pool the catalog cannot describe, once (and again if its error changes)."""
        current = {b.name: str(b.error) for b in broken}
        for name, message in current.items():
            if self.broken.get(name) != message:
                self.log(f"pool {name}: no nodes: {message}")
        self.broken = current
