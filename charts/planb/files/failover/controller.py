"""Stockout-aware failover: a RayJob that plan A could not place moves to plan B.

Kueue's `waitForPodsReady` evicts a workload whose pods are not ready within its timeout (reason
PodsReadyTimeout), suspends the job and requeues the workload after a backoff. Kueue v0.19.2 gives that
reason for two underlying causes: `WaitForStart` (the pods were never all ready since admission: plan A
had no capacity, a stockout) and `WaitForRecovery` (they were ready, then fell short: a pod failed, or
KubeRay retrying the job cleared its `status.rayClusterStatus`, which Kueue reads as the RayJob's
readiness). Only a stockout moves the job; a slow retry on plan A is left to Kueue, which requeues it.
On a stockout eviction from plan A's flavor this controller steers the job away from plan A, once:

1. it patches the RayJob: the annotation `planb.dev/failover` (so a restart never moves it twice)
   and, on each accelerator worker group, a required node affinity `<plan A label> NotIn [<value>]`
   (so the pods Kueue starts later can never land on plan A);
2. once Kueue has released the quota (the Workload's pod sets are mutable again), it adds the same
   affinity to the Workload's accelerator pod sets. Kueue's flavor assigner matches a pod set's
   required node affinity against each flavor's nodeLabels, so the requeued Workload can only get
   plan B. Kueue compares a job with its Workload by containers and tolerations only, so this edit
   is not undone, and the Workload stays the same object (one lineage, same job name);
3. it records a Kubernetes Event on the RayJob ("moved to plan B after N: plan A had no capacity").

It acts only on Workloads admitted by planb's ClusterQueue(s) (`--cluster-queues`: the Workload's
status.admission.clusterQueue), and reads and writes only in the namespaces it is given
(`--namespaces`, the LocalQueues' namespaces; none: the whole cluster). A job admitted on plan B is
never touched: only evictions from plan A's flavor are acted on, and the affinity only ever excludes
plan A. It lists the Workloads of its namespaces every `--poll-seconds`; each poll updates the metrics.

The package needs the standard library only (planb.failover.kubeapi talks to the API server): the queues chart
runs its modules from a ConfigMap in a stock Python image with the pod's ServiceAccount token; local mode runs
them on the host with a token of the same ServiceAccount."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from planb.failover import metrics
from planb.failover.decisions import (
    RAY_GROUP,
    RAY_VERSION,
    admitted_cluster_queue,
    admitted_flavors,
    condition,
    is_stockout,
    is_true,
    pods_ready_timeouts,
    rayjob_owner,
)
from planb.failover.kubeapi import Api, ApiError
from planb.failover.moves import move_event, rayjob_patch, workload_patch
from planb.failover.names import (
    AFTER_ANNOTATION,
    EVENT_REASON,
    EVICTED_REASON,
    FROM_ANNOTATION,
    MOVED_ANNOTATION,
    PLAN_LABEL,
    human,
    move_message,
    plan_label,
)

#: What callers import from here (the names also from planb.failover.names and .decisions).
__all__ = [
    "AFTER_ANNOTATION",
    "EVENT_REASON",
    "FROM_ANNOTATION",
    "MOVED_ANNOTATION",
    "PLAN_LABEL",
    "Config",
    "Controller",
    "condition",
    "human",
    "move_message",
    "pods_ready_timeouts",
]

Obj = dict[str, Any]

KUEUE_GROUP, KUEUE_VERSION = "kueue.x-k8s.io", "v1beta2"
DEFAULT_ACCELERATORS = ("google.com/tpu", "nvidia.com/gpu")
#: How often the metrics' RayJobs are listed again; a scrape reads the cache and never lists.
METRICS_RESYNC_S = 30.0

log = logging.getLogger("planb.failover")


@dataclass(frozen=True)
class Config:
    """What the controller needs to know; Kueue's own timeout does the waiting."""

    #: Kueue's waitForPodsReady timeout (for the messages only).
    after_seconds: float
    #: planb's ClusterQueue(s): a Workload admitted by any other is never acted on.
    cluster_queues: tuple[str, ...]
    plan_a_flavor: str = "on-demand"
    #: The node label plan A's flavor selects (key, value); None: read from that ResourceFlavor.
    plan_a_label: tuple[str, str] | None = None
    #: The namespaces it lists and patches in; empty: the whole cluster.
    namespaces: tuple[str, ...] = ()
    accelerators: tuple[str, ...] = DEFAULT_ACCELERATORS
    #: 0: no metrics endpoint.
    metrics_port: int = 0
    metrics_host: str = "127.0.0.1"
    #: Seconds between two lists of the Workloads.
    poll_seconds: float = 2.0
    region: str = ""  #: the cluster's region: the `region` label of every metric


class Controller:
    def __init__(self, api: Api, cfg: Config) -> None:
        self.cfg = cfg
        self.api = api
        self.moves_done = 0  # by this process (the cluster-wide count comes from the annotations)
        self.recorded: set[str] = set()  # uids of RayJobs whose Event exists
        #: Workloads (uid) last seen admitted on plan A: Kueue clears the admission right after the
        #: eviction, possibly before this controller has patched the RayJob.
        self.on_plan_a: set[str] = set()
        #: Workloads (uid) -> their PodsReadyTimeout counts when last seen not evicted (is_stockout).
        self.timeouts_before: dict[str, dict[str, int]] = {}
        self.lock = threading.Lock()
        #: What a scrape renders (from each poll's Workloads and the last metrics resync's RayJobs); the probes.
        self.prometheus = metrics.ControllerMetrics(cfg.accelerators, cfg.cluster_queues, cfg.region)
        self.health = metrics.Health(max(60.0, 10 * cfg.poll_seconds))
        self.cached_rayjobs: list[Obj] = []
        self.rayjobs_listed_at = float("-inf")
        self.rayjobs_listed_after_moves = -1

    # ------------------------------------------------------------------- API
    def get(self, group: str, version: str, plural: str, name: str, namespace: str = "") -> Obj:
        return self.api.get(group, version, plural, namespace, name)

    def list_items(self, group: str, version: str, plural: str) -> list[Obj]:
        """Every object of the resource in the controller's namespaces (the cluster's with none)."""
        items: list[Obj] = []
        for namespace in self.cfg.namespaces or ("",):
            items += list(self.api.list_objects(group, version, plural, namespace).get("items") or [])
        return items

    def json_patch(self, group: str, version: str, plural: str, namespace: str, name: str, patch: list[Obj]) -> None:
        self.api.json_patch(group, version, plural, namespace, name, patch)

    # ------------------------------------------------------------ plan A's label
    def plan_a_label(self) -> tuple[str, str]:
        if self.cfg.plan_a_label is not None:
            return self.cfg.plan_a_label
        flavor = self.get(KUEUE_GROUP, KUEUE_VERSION, "resourceflavors", self.cfg.plan_a_flavor)
        labels: dict[str, str] = dict((flavor.get("spec") or {}).get("nodeLabels") or {})
        found = plan_label(labels)
        if found is None:
            raise RuntimeError(f"ResourceFlavor {self.cfg.plan_a_flavor} has no plan's node label to exclude")
        return found

    # ------------------------------------------------------------------ reconcile
    def reconcile(self, wl: Obj) -> None:
        name = rayjob_owner(wl)
        if name is None:
            return
        queue = admitted_cluster_queue(wl)
        if queue is not None and queue not in self.cfg.cluster_queues:
            # Another ClusterQueue's Workload (a flavor of the same name there is another team's plan A).
            self.on_plan_a.discard(str(wl["metadata"].get("uid")))
            return
        namespace = wl["metadata"]["namespace"]
        uid = str(wl["metadata"].get("uid"))
        flavors = admitted_flavors(wl, self.cfg.accelerators)
        if flavors:
            if self.cfg.plan_a_flavor in flavors:
                self.on_plan_a.add(uid)
            else:
                self.on_plan_a.discard(uid)
        if is_true(wl, "QuotaReserved") and not is_true(wl, "Evicted"):
            # Holding its quota, not evicted: nothing is done, moved or not (`finish` waits for the quota's release),
            # so the RayJob is not read. A GET of each admitted job's RayJob at every poll was most of the
            # controller's requests while jobs ran.
            self.timeouts_before[uid] = pods_ready_timeouts(wl)
            return
        try:
            rayjob = self.get(RAY_GROUP, RAY_VERSION, "rayjobs", name, namespace)
        except ApiError as exc:
            if exc.status == 404:
                return
            raise
        annotations = rayjob.get("metadata", {}).get("annotations") or {}
        if MOVED_ANNOTATION not in annotations:
            evicted = condition(wl, "Evicted")
            if not (evicted and evicted.get("status") == "True"):
                self.timeouts_before[uid] = pods_ready_timeouts(wl)
                return
            if evicted.get("reason") != EVICTED_REASON:
                return
            if uid not in self.on_plan_a:
                # Evicted from plan B (or evicted from plan A while this controller was down, and the
                # admission is cleared): never move a job not seen on plan A; Kueue requeues it.
                return
            if not is_stockout(wl, self.timeouts_before.get(uid)):
                # Its pods were ready on plan A and fell short (a failed pod, KubeRay retrying the job):
                # plan A has the capacity, so Kueue requeues it as it is.
                log.info("%s/%s: evicted from %s while recovering, not a stockout; left to Kueue", namespace,
                         name, self.cfg.plan_a_flavor)  # fmt: skip
                return
            key, value = self.plan_a_label()
            for attempt in range(5):
                try:
                    self.patch_rayjob(rayjob, key, value)
                    break
                except ApiError as exc:
                    # 409/422: Kueue or KubeRay changed the RayJob since we read it (the "test" op).
                    if exc.status not in (409, 422) or attempt == 4:
                        raise
                    time.sleep(0.2)
                    rayjob = self.get(RAY_GROUP, RAY_VERSION, "rayjobs", name, namespace)
                    if MOVED_ANNOTATION in (rayjob["metadata"].get("annotations") or {}):
                        break
            log.info(
                "%s/%s: evicted from %s after its pods were not ready; steering it to plan B",
                namespace,
                name,
                self.cfg.plan_a_flavor,
            )
            wl = self.get(KUEUE_GROUP, KUEUE_VERSION, "workloads", wl["metadata"]["name"], namespace)
            annotations = {MOVED_ANNOTATION: "", AFTER_ANNOTATION: str(self.cfg.after_seconds)}
        self.finish(namespace, name, wl, annotations)

    def patch_rayjob(self, rayjob: Obj, key: str, value: str) -> None:
        """The annotation and the workers' affinity in one patch: either both or neither (moves.rayjob_patch)."""
        meta, cfg = rayjob["metadata"], self.cfg
        patch = rayjob_patch(rayjob, (key, value), cfg.accelerators, cfg.plan_a_flavor, cfg.after_seconds)
        self.json_patch(RAY_GROUP, RAY_VERSION, "rayjobs", meta["namespace"], meta["name"], patch)
        with self.lock:
            self.moves_done += 1

    def finish(self, namespace: str, name: str, wl: Obj, annotations: dict[str, str]) -> None:
        """The Workload's affinity (once Kueue released its quota) and the Event; both idempotent."""
        if is_true(wl, "QuotaReserved"):
            return  # still admitted (or re-admitted on plan B already): pod sets are immutable now
        key, value = self.plan_a_label()
        patch = workload_patch(wl, (key, value), self.cfg.accelerators)
        if patch:
            self.json_patch(KUEUE_GROUP, KUEUE_VERSION, "workloads", namespace, wl["metadata"]["name"], patch)
            log.info("%s/%s: Workload %s now excludes %s=%s", namespace, name, wl["metadata"]["name"], key, value)
        self.record_event(namespace, name, float(annotations.get(AFTER_ANNOTATION) or self.cfg.after_seconds))

    def record_event(self, namespace: str, name: str, after_seconds: float) -> None:
        rayjob = self.get(RAY_GROUP, RAY_VERSION, "rayjobs", name, namespace)
        uid = str(rayjob["metadata"]["uid"])
        if uid in self.recorded:
            return
        body = move_event(rayjob, after_seconds)
        try:
            self.api.create_event(namespace, body)
            log.info("%s/%s: %s", namespace, name, body["message"])
        except ApiError as exc:
            if exc.status != 409:  # already recorded (a restart after the move): one Event per move
                raise
        self.recorded.add(uid)

    # -------------------------------------------------------------------- loops
    def list_workloads(self) -> list[Obj]:
        return self.list_items(KUEUE_GROUP, KUEUE_VERSION, "workloads")

    def safe_reconcile(self, wl: Obj) -> None:
        try:
            self.reconcile(wl)
        except ApiError as exc:
            # 409/422: the object changed under us (a failed "test"); the next list retries.
            log.warning(
                "%s/%s: %s %s %s",
                wl["metadata"].get("namespace"),
                wl["metadata"].get("name"),
                exc.status,
                exc.reason,
                exc.body[:500],
            )
        except Exception:
            log.exception("reconciling %s", wl.get("metadata", {}).get("name"))

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            self.health.attempted()
            try:
                self.poll_once()
            except ApiError as exc:
                log.warning("listing Workloads: %s %s %s; listing again", exc.status, exc.reason, exc.body[:300])
            except Exception:
                log.exception("listing Workloads failed; listing again")
            stop.wait(self.cfg.poll_seconds)

    def poll_once(self) -> None:
        """One resync: every Workload listed and reconciled, and the metrics' cache refreshed (the Workloads each
        poll, the RayJobs after a move and otherwise at most every METRICS_RESYNC_S), so a scrape costs the API
        server nothing."""
        workloads = self.list_workloads()
        self.health.listed()
        for wl in workloads:
            self.safe_reconcile(wl)
        stale = time.monotonic() - self.rayjobs_listed_at >= METRICS_RESYNC_S
        if stale or self.rayjobs_listed_after_moves != self.moves_done:
            self.cached_rayjobs = self.list_items(RAY_GROUP, RAY_VERSION, "rayjobs")
            self.rayjobs_listed_at = time.monotonic()
            self.rayjobs_listed_after_moves = self.moves_done
        self.prometheus.update(workloads, self.cached_rayjobs)

    def metrics(self) -> str:
        """The metrics as of the last poll (no API call)."""
        return self.prometheus.render()
