"""The failover controller's Prometheus metrics and its HTTP endpoint (``/metrics``, ``/healthz``, ``/readyz``).

Each poll hands the Workloads it listed (and the RayJobs of the last metrics resync) to
``ControllerMetrics.update``; a scrape renders what that kept and calls nothing. Every series but
``planb_failover_moved_jobs`` (no label) carries ``region``, the cluster's region (``--region``, the chart's
``failover.region``), one value per controller, and ``cluster_queue``, the team's ClusterQueue (queues.teams gives
each team one), the label Kueue's own metrics use for it, so one dashboard variable filters both. It is the
Workload's ``status.admission.clusterQueue``; for a Workload or RayJob without an admission, the ClusterQueue a
Workload of the same LocalQueue was last admitted to (Kueue keeps a LocalQueue's ``spec.clusterQueue`` immutable,
kueue apis/kueue/v1beta2/localqueue_types.go), else "". A LocalQueue deleted and made again for another team keeps
the old team there until a Workload of it is admitted; the histograms and ``planb_admitted_workloads`` count
admitted Workloads only, so theirs is always the admission's.

* ``planb_time_to_admission_seconds`` (histogram, plan, cluster_queue, region): a Workload's creation to its Admitted
  condition, observed once per Workload and plan (a job moved to plan B is observed on each plan once);
* ``planb_time_to_running_seconds`` (histogram, plan, cluster_queue, region): a Workload's creation to its PodsReady
  condition (Kueue's waitForPodsReady, which failover turns on), once per Workload and plan;
* ``planb_failover_moves_total`` (counter, plan: the plan moved away from, cluster_queue, region): RayJobs
  carrying the move's annotation (planb.failover.names.MOVED_ANNOTATION), each counted once;
* ``planb_migrations_total`` (counter, plan: the plan migrated off, cluster_queue, region): concurrent-ladder
  variant Workloads that Kueue evicted to move the job to a more preferred plan, as their
  ``status.schedulingStats.evictions`` record it (reason FlavorMigration, or Deactivated when a preferred variant
  was admitted after its checks; kueue v0.19.2 pkg/workload/evict/evict.go workloadEvictionStateInc,
  pkg/scheduler/scheduler.go issueMigration), each variant counted once;
* ``planb_admitted_workloads`` (gauge, plan, cluster_queue, region): jobs running on each plan now;
* ``planb_admission_check_workloads`` (gauge, check, state, cluster_queue, region): unfinished Workloads by
  admission check and its state (dws-prov mirrors the ProvisioningRequest: Pending, Ready, Retry, Rejected);
* ``planb_failover_moved_jobs`` (gauge): RayJobs that exist now and carry the move's annotation.

Once per object, not recomputed: a histogram observation or a counter step stays when its object is deleted
(``helm uninstall`` of a job), so ``_sum``, ``_count`` and ``_total`` never fall while the process lives. The
uids already counted are remembered while their objects exist (a uid is never reused). A restarted controller
counts again what the objects still record (its series restart, which Prometheus' rate() reads as a reset).
"""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from planb.failover.decisions import admitted_cluster_queue, admitted_flavors, condition, is_true, parse_time
from planb.failover.exposition import Counter, Gauge, Histogram, render
from planb.failover.names import FROM_ANNOTATION, MOVED_ANNOTATION

Obj = dict[str, Any]

#: Seconds: minutes on a free plan up to 7 days in a DWS queue (a ProvisioningRequest's retries run up to 7 days,
#: DWS's horizon), so a week's wait lands in a finite bucket, not only in +Inf.
_HOURS = (5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0, 14400.0, 28800.0)
WAIT_BUCKETS = (*_HOURS, *(days * 86400.0 for days in (1, 2, 4, 7)))
#: The LocalQueue a job's objects name (Kueue's job label; a Workload's own is ``spec.queueName``).
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
#: Kueue's concurrent admission (planb.status.variants reads the same names).
PARENT_LABEL = "kueue.x-k8s.io/concurrent-admission-parent"
VARIANT_FLAVOR = "kueue.x-k8s.io/workload-allowed-resource-flavors"
#: apis/kueue/v1beta2/workload_types.go WorkloadEvictedByFlavorMigration and WorkloadDeactivated.
MIGRATION_REASONS = ("FlavorMigration", "Deactivated")


def _uid(obj: Obj) -> str:
    return str(obj.get("metadata", {}).get("uid") or "")


def _since_creation(wl: Obj, kind: str) -> float | None:
    """Seconds from the Workload's creation to its ``kind`` condition turning True; None if it is not True."""
    cond = condition(wl, kind)
    if not cond or cond.get("status") != "True":
        return None
    start = parse_time(wl["metadata"].get("creationTimestamp"))
    end = parse_time(cond.get("lastTransitionTime"))
    return max(0.0, (end - start).total_seconds()) if start and end else None


def _migrated(wl: Obj) -> bool:
    stats = (wl.get("status") or {}).get("schedulingStats") or {}
    return any(
        e.get("reason") in MIGRATION_REASONS and int(e.get("count") or 0) > 0 for e in stats.get("evictions") or []
    )


class ControllerMetrics:
    """What ``/metrics`` shows, updated from each poll's objects."""

    def __init__(self, accelerators: Iterable[str], cluster_queues: Iterable[str], region: str = "") -> None:
        self.accelerators = tuple(accelerators)
        self.cluster_queues = tuple(cluster_queues)
        self.region = region
        per_plan = ("plan", "cluster_queue", "region")
        self.time_to_admission = Histogram(
            "planb_time_to_admission_seconds",
            "Seconds from a Workload's creation to its admission, per plan; once per Workload and plan.",
            per_plan,
            WAIT_BUCKETS,
        )
        self.time_to_running = Histogram(
            "planb_time_to_running_seconds",
            "Seconds from a Workload's creation to all its pods ready, per plan; once per Workload and plan.",
            per_plan,
            WAIT_BUCKETS,
        )
        self.moves = Counter(
            "planb_failover_moves",
            "Jobs the failover controller moved off a plan (the plan label) after a stockout.",
            per_plan,
        )
        self.migrations = Counter(
            "planb_migrations",
            "Concurrent-ladder migrations off a plan (the plan label) to a more preferred one.",
            per_plan,
        )
        self.admitted = Gauge(
            "planb_admitted_workloads", "Workloads admitted on each plan now (jobs per plan).", per_plan
        )
        self.checks = Gauge(
            "planb_admission_check_workloads",
            "Unfinished Workloads per admission check and state (dws-prov: the ProvisioningRequest's state).",
            ("check", "state", "cluster_queue", "region"),
        )
        self.moved_jobs = Gauge(
            "planb_failover_moved_jobs", "RayJobs that exist now and were moved from plan A to plan B."
        )
        #: (uid, plan) already observed; uids already counted. Pruned to the objects that still exist.
        self.admission_seen: set[tuple[str, str]] = set()
        self.running_seen: set[tuple[str, str]] = set()
        self.moves_seen: set[str] = set()
        self.migrations_seen: set[str] = set()
        #: (namespace, LocalQueue) -> the ClusterQueue a Workload of it was last admitted to.
        self.queue_of: dict[tuple[str, str], str] = {}
        self.lock = threading.Lock()

    def labels(self, plan: str, cluster_queue: str) -> dict[str, str]:
        return {"plan": plan, "cluster_queue": cluster_queue, "region": self.region}

    @staticmethod
    def local_queue(obj: Obj) -> tuple[str, str]:
        """(namespace, LocalQueue) of a Workload (``spec.queueName``) or a job (its queue-name label)."""
        meta = obj.get("metadata") or {}
        local = (obj.get("spec") or {}).get("queueName") or (meta.get("labels") or {}).get(QUEUE_LABEL) or ""
        return str(meta.get("namespace") or ""), str(local)

    def learn(self, workloads: list[Obj]) -> None:
        """Each admitted Workload's LocalQueue and ClusterQueue, for the objects of that LocalQueue without one."""
        for wl in workloads:
            admitted, where = admitted_cluster_queue(wl), self.local_queue(wl)
            if admitted and where[1]:
                self.queue_of[where] = admitted

    def cluster_queue(self, obj: Obj) -> str:
        """The Workload's admitted ClusterQueue, else the one its LocalQueue's Workloads were last admitted to."""
        return admitted_cluster_queue(obj) or self.queue_of.get(self.local_queue(obj), "")

    def plans(self, wl: Obj) -> set[str]:
        """The accelerator flavors planb's ClusterQueue admitted the Workload on (none for another queue's)."""
        queue = admitted_cluster_queue(wl)
        if queue is None or queue not in self.cluster_queues:
            return set()
        return admitted_flavors(wl, self.accelerators)

    def update(self, workloads: list[Obj], rayjobs: list[Obj]) -> None:
        """One poll's objects: new observations and counts, and the gauges as they are now."""
        with self.lock:
            self._workloads([w for w in workloads if (w["metadata"].get("labels") or {}).get(PARENT_LABEL) != "true"])
            self._rayjobs(rayjobs)

    def _workloads(self, workloads: list[Obj]) -> None:
        admitted: dict[tuple[str, ...], float] = {}
        checks: dict[tuple[str, ...], float] = {}
        self.learn(workloads)  # every LocalQueue's ClusterQueue before any label is read
        for wl in workloads:
            uid, plans, queue = _uid(wl), self.plans(wl), self.cluster_queue(wl)
            for kind, seen, histogram in (
                ("Admitted", self.admission_seen, self.time_to_admission),
                ("PodsReady", self.running_seen, self.time_to_running),
            ):
                seconds = _since_creation(wl, kind)
                for plan in plans if seconds is not None else ():
                    if (uid, plan) not in seen and seconds is not None:
                        seen.add((uid, plan))
                        histogram.observe(self.labels(plan, queue), seconds)
            if is_true(wl, "Finished"):
                continue
            if is_true(wl, "Admitted"):
                for plan in plans:
                    admitted[(plan, queue, self.region)] = admitted.get((plan, queue, self.region), 0.0) + 1
            for check in (wl.get("status") or {}).get("admissionChecks") or []:
                key = (str(check.get("name")), str(check.get("state")), queue, self.region)
                checks[key] = checks.get(key, 0.0) + 1
            variant_of = (wl["metadata"].get("annotations") or {}).get(VARIANT_FLAVOR)
            if variant_of and uid not in self.migrations_seen and _migrated(wl):
                self.migrations_seen.add(uid)
                self.migrations.inc(self.labels(variant_of, queue))
        self.admitted.replace(admitted)
        self.checks.replace(checks)
        alive = {_uid(wl) for wl in workloads}
        self.admission_seen = {k for k in self.admission_seen if k[0] in alive}
        self.running_seen = {k for k in self.running_seen if k[0] in alive}
        self.migrations_seen &= alive

    def _rayjobs(self, rayjobs: list[Obj]) -> None:
        moved = [r for r in rayjobs if MOVED_ANNOTATION in (r.get("metadata", {}).get("annotations") or {})]
        for job in moved:
            if _uid(job) not in self.moves_seen:
                self.moves_seen.add(_uid(job))
                plan_a = str(job["metadata"]["annotations"].get(FROM_ANNOTATION) or "")
                self.moves.inc(self.labels(plan_a, self.cluster_queue(job)))
        self.moves_seen &= {_uid(r) for r in rayjobs}
        self.moved_jobs.replace({(): float(len(moved))})

    def render(self) -> str:
        """The metrics in Prometheus' text format (no API call)."""
        families = (self.time_to_admission, self.time_to_running, self.moves, self.migrations, self.admitted)
        return render([*families, self.checks, self.moved_jobs])


class Health:
    """The poll loop's heartbeat: liveness (it still polls) and readiness (a recent list succeeded)."""

    def __init__(self, stale_after_seconds: float) -> None:
        self.stale_after = stale_after_seconds
        self.attempted_at: float | None = None
        self.listed_at: float | None = None
        self.started_at = time.monotonic()

    def attempted(self) -> None:
        self.attempted_at = time.monotonic()

    def listed(self) -> None:
        self.listed_at = self.attempted_at = time.monotonic()

    def live(self) -> str | None:
        """None when alive; else why not (the poll loop has not run within the window)."""
        last = self.attempted_at if self.attempted_at is not None else self.started_at
        age = time.monotonic() - last
        return None if age <= self.stale_after else f"no poll for {age:.0f} s (limit {self.stale_after:.0f} s)"

    def ready(self) -> str | None:
        """None when ready; else why not (no list of the Workloads has succeeded within the window)."""
        if self.listed_at is None:
            return "the Workloads were not listed yet"
        age = time.monotonic() - self.listed_at
        return None if age <= self.stale_after else f"last successful list {age:.0f} s ago"


def serve(
    host: str, port: int, scrape: Callable[[], str], health: Health | None = None
) -> http.server.ThreadingHTTPServer:
    """GET /metrics answers `scrape()`; /healthz and /readyz answer 200 "ok" or 503 with the reason. A daemon thread."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            probes: dict[str, Callable[[], str | None]] = {}
            if health is not None:
                probes = {"/healthz": health.live, "/readyz": health.ready}
            try:
                if path == "/metrics":
                    self.answer(200, scrape(), "text/plain; version=0.0.4; charset=utf-8")
                elif path in probes:
                    reason = probes[path]()
                    self.answer(200 if reason is None else 503, (reason or "ok") + "\n", "text/plain; charset=utf-8")
                else:
                    self.send_error(404)
            except Exception as exc:  # the scrape says why
                self.send_error(503, str(exc))

        def answer(self, status: int, text: str, content_type: str) -> None:
            body = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = http.server.ThreadingHTTPServer((host, port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True, name="metrics").start()
    return server
