"""The capacity simulator: what GKE's cluster autoscaler and Dynamic Workload Scheduler do, locally.

One pass (`CapacitySimulator.step`) reads the node pools over the GKE API (planb.local.capacity.gke_api:
the GKE emulator in local mode) and the simulator's nodes, and then has its reconcilers act, in this order:

* nodes (planb.local.capacity.nodes): removes the nodes of pools that no longer exist;
* Spot (planb.local.capacity.spot_reconciler, with planb.local.capacity.spot's rules): notices to the pools
  ``preempt`` names, then their nodes go after the pool's notice (GKE's 30 or 120 s, or ``spot_notice_seconds``);
* nodes again: fixed-size pools (autoscaling off, e.g. the cluster's default pool) get their node count, and
  autoscaled pools at least their minimum;
* queued provisioning (planb.local.capacity.provisioning, its bookings planb.local.capacity.booking):
  ProvisioningRequests of class ``queued-provisioning.gke.io`` go one step further along DWS's lifecycle;
* best-effort atomic (planb.local.capacity.besteffort): ProvisioningRequests of class
  ``best-effort-atomic-scale-up.autoscaling.x-k8s.io`` are answered by one all-or-nothing scale-up of an
  ordinary pool, and the nodes their bookings hold count as used by the scale-up and scale-down after it;
* scale-up (planb.local.capacity.autoscaler): autoscaled on-demand and Spot pools grow for pending pods and
  shrink when idle.

Each reconciler owns its state; what they share goes through one planb.local.capacity.context.Context (the API,
the log, the ProvisioningRequest watch, the next timer), the nodes reconciler (every node made or removed) and
small methods of the owner (best-effort atomic reads a request's creation time from queued provisioning; the
autoscaler's filter of pending pods is best-effort atomic's).

`CapacitySimulator.run` watches ProvisioningRequests (list, then watch from the list's
resourceVersion), so it answers each one as it appears instead of on the next poll, and runs a pass
on every change, at the earliest timer a pass found and every ``interval_seconds`` else. It reads the
pods from a watch too, as the autoscaler's scheduled and unschedulable pod listers do (reflectors over
a pod watch: cluster-autoscaler ``utils/kubernetes/listers.go``, ``NewScheduledPodLister``,
``NewUnschedulablePodLister``), instead of listing every pod each pass; a pod's change waits for the
next pass, as on GKE's loop. Its nodes come from a watch as well (`CapacitySimulator.managed_nodes`), listed
only on the pass after it wrote one. The node pools are read over the GKE API every pass, on one kept-alive
connection (planb.local.capacity.gke_api): GKE's API has no watch. An API
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
from planb.kube import Kube, KubeError, Obj
from planb.local.capacity import pools as pools_mod
from planb.local.capacity import registration
from planb.local.capacity import settings as settings_mod
from planb.local.capacity import webhook as webhook_mod
from planb.local.capacity.autoscaler import Autoscaler
from planb.local.capacity.besteffort import BestEffortAtomic
from planb.local.capacity.besteffort_facts import ignored_by_scale_up
from planb.local.capacity.context import Context
from planb.local.capacity.dws import PR_PATH
from planb.local.capacity.gke_api import NodePoolReader, default_endpoint, default_project
from planb.local.capacity.nodes import MANAGED, Nodes
from planb.local.capacity.pools import BrokenPool
from planb.local.capacity.provisioning import QueuedProvisioning
from planb.local.capacity.spot import Preemption
from planb.local.capacity.spot_reconciler import Spot
from planb.local.informer import Informer

#: The webhook's server while it runs, and the configuration registered for it.
ServedWebhook = tuple[webhook_mod.WebhookServer, registration.Registration]


class CapacitySimulator:
    """One reconcile pass per `step()`; `run()` loops until stopped.

    The reconcilers it holds, each with its own state, run in this order on every pass: `nodes` (pools gone, then
    after Spot: fixed sizes and minimums), `spot`, `queued` (queued provisioning and its bookings), `best_effort`
    (best-effort atomic), `autoscaler` (scale-up, then scale-down). They share `ctx` (the API, the log, the
    watch, the next timer)."""

    def __init__(
        self,
        kubeconfig: Path,
        state_dir: Path | None = None,
        log: Callable[[str], None] = print,
        gke: NodePoolReader | None = None,
    ) -> None:
        self.ctx = Context(Kube(kubeconfig), log, state_dir)
        #: Where the node pools come from (default: the local GKE emulator, the local inventory's project).
        self.gke = gke or NodePoolReader(default_endpoint(), default_project())
        #: Set by the watch on every change: the loop runs a pass at once.
        self.wake = threading.Event()
        #: Pools the catalog cannot describe, by name, with the error last logged for each.
        self.broken: dict[str, str] = {}
        #: Why the last pass paused, as logged ('' when it ran).
        self.paused = ""
        self.nodes = Nodes(self.ctx)
        #: Spot preemption (planb.local.capacity.spot): notices, then the nodes go.
        self.spot = Spot(self.ctx, Preemption(self.ctx.kube, self.ctx.log, self.nodes.delete))
        self.queued = QueuedProvisioning(self.ctx, self.nodes)
        self.best_effort = BestEffortAtomic(self.ctx, self.nodes, self.queued.created_at)
        self.autoscaler = Autoscaler(self.ctx, self.nodes, ignored_by_scale_up)

    # ------------------------------------------------------------------ shared with the reconcilers (ctx)
    @property
    def kube(self) -> Kube:
        return self.ctx.kube

    @kube.setter
    def kube(self, kube: Kube) -> None:
        self.ctx.kube = kube

    @property
    def log(self) -> Callable[[str], None]:
        return self.ctx.log

    @log.setter
    def log(self, log: Callable[[str], None]) -> None:
        self.ctx.log = log

    @property
    def state_dir(self) -> Path | None:
        return self.ctx.state_dir

    @state_dir.setter
    def state_dir(self, state_dir: Path | None) -> None:
        self.ctx.state_dir = state_dir

    @property
    def informer(self) -> Informer | None:
        """The ProvisioningRequest watch while `run` runs (None: `step` lists them itself)."""
        return self.ctx.informer

    @informer.setter
    def informer(self, informer: Informer | None) -> None:
        self.ctx.informer = informer

    @property
    def next_deadline(self) -> float:
        """The earliest timer (wall clock) a pass found: a delay, booking window or run duration ending."""
        return self.ctx.next_deadline

    @next_deadline.setter
    def next_deadline(self, when: float) -> None:
        self.ctx.next_deadline = when

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
        try:
            self.informer = Informer(self.kube, f"{PR_PATH}/provisioningrequests", self.wake.set, self.log).start()
            # Pods and nodes change the pass's answer only at its next look (no wake-up): the watches replace its lists.
            self.ctx.pod_informer = Informer(self.kube, "/api/v1/pods", log=self.log).start()
            self.ctx.node_informer = Informer(self.kube, "/api/v1/nodes", log=self.log).start()
            self._loop(should_stop, settings)
        finally:
            for informer in (self.informer, self.ctx.pod_informer, self.ctx.node_informer):
                if informer is not None:
                    informer.stop()
            self.informer = self.ctx.pod_informer = self.ctx.node_informer = None
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
        nodes = self.managed_nodes()
        by_pool: dict[str, list[Obj]] = defaultdict(list)
        for node in nodes:
            by_pool[node["metadata"]["labels"].get("cloud.google.com/gke-nodepool", "")].append(node)
        self.nodes.remove_gone(pools, by_pool, self.broken)
        self.spot.step(pools, by_pool, settings)
        self.nodes.size(pools, by_pool)
        busy_nodes: list[set[str]] = []

        def busy() -> set[str]:
            """Nodes that run a pod (listed once per pass, when first needed)."""
            if not busy_nodes:
                busy_nodes.append(
                    {
                        pod["spec"]["nodeName"]
                        for pod in self.ctx.pods()
                        if pod["spec"].get("nodeName")
                        and pod.get("status", {}).get("phase") not in ("Succeeded", "Failed")
                    }
                )
            return busy_nodes[0]

        self.queued.step(pools, by_pool, settings, busy)
        booked = self.best_effort.step(pools, by_pool, busy, settings)

        def used() -> set[str]:
            """Nodes that run a pod or that a best-effort-atomic request's booking holds."""
            return busy() | booked if booked else busy()

        self.autoscaler.scale_up(pools, by_pool, settings, used)
        self.autoscaler.scale_down(pools, by_pool, settings, used)

    def managed_nodes(self) -> list[Obj]:
        """The simulator's nodes (label `MANAGED`): the node watch's cache under `run` while it is in step, as GKE's
        autoscaler reads nodes from a lister over a watch (cluster-autoscaler ``utils/kubernetes/listers.go``,
        ``NewReadyNodeLister``), else one list; a list too after the simulator wrote a node (`Context.nodes_written`).
        A list of them every pass was, with the pass's GKE reads, most of what the idle simulator cost."""
        informer = self.ctx.node_informer
        if informer is not None and informer.usable and not self.ctx.nodes_written:
            return [n for n in informer.snapshot() if MANAGED in ((n.get("metadata") or {}).get("labels") or {})]
        self.ctx.nodes_written = False
        return self.kube.items("/api/v1/nodes", {"labelSelector": MANAGED})

    def _report_broken(self, broken: list[BrokenPool]) -> None:
        """Log each pool the catalog cannot describe, once (and again if its error changes)."""
        current = {b.name: str(b.error) for b in broken}
        for name, message in current.items():
            if self.broken.get(name) != message:
                self.log(f"pool {name}: no nodes: {message}")
        self.broken = current
