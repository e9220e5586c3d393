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

A job admitted on plan B is never touched: only evictions from plan A's flavor are acted on, and
the affinity only ever excludes plan A. Metrics (Prometheus text) are computed from the cluster on
each scrape, so they survive restarts.

This file is self-contained (the standard library and the `kubernetes` client only): the queues
chart runs it in-cluster from a ConfigMap in a stock Python image.
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import http.server
import logging
import os
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kubernetes import client, config, watch
from kubernetes.client.exceptions import ApiException

Obj = dict[str, Any]

KUEUE_GROUP, KUEUE_VERSION = "kueue.x-k8s.io", "v1beta2"
RAY_GROUP, RAY_VERSION = "ray.io", "v1"
#: Set on the RayJob in the same patch as the affinity: the move happened (value: when, RFC 3339).
MOVED_ANNOTATION = "planb.dev/failover-moved-at"
#: The plan A flavor the job was moved away from, and the wait that triggered it.
FROM_ANNOTATION = "planb.dev/failover-from"
AFTER_ANNOTATION = "planb.dev/failover-after"
EVENT_REASON = "MovedToPlanB"
EVICTED_REASON = "PodsReadyTimeout"
#: The underlying causes of a PodsReadyTimeout eviction (kueue v0.19.2 pkg/controller/core/workload_controller.go,
#: admittedNotReadyWorkload; apis/kueue/v1beta2/workload_types.go WorkloadWaitForStart/WorkloadWaitForRecovery).
#: Kueue counts each eviction by (reason, underlyingCause) in status.schedulingStats.evictions
#: (pkg/workload/evict/evict.go, workloadEvictionStateInc); the Evicted condition reads the same for both.
#: KubeRay v1.6.2 resets status.rayClusterStatus when it retries a job (ray-operator/controllers/ray/
#: rayjob_controller.go, JobDeploymentStatusRetrying), and Kueue's RayJob PodsReady is that status's state
#: (pkg/controller/jobs/rayjob/rayjob_controller.go, PodsReady): a retry is a WaitForRecovery, not a stockout.
STOCKOUT_CAUSE = "WaitForStart"
RECOVERY_CAUSE = "WaitForRecovery"
DEFAULT_ACCELERATORS = ("google.com/tpu", "nvidia.com/gpu")
#: The plan label planb's pools carry; preferred when plan A's flavor has several node labels.
PLAN_LABEL = "planb.dev/plan"

log = logging.getLogger("planb.failover")


@dataclass(frozen=True)
class Config:
    """What the controller needs to know; Kueue's own timeout does the waiting."""

    #: Kueue's waitForPodsReady timeout (for the messages only).
    after_seconds: float
    plan_a_flavor: str = "on-demand"
    accelerators: tuple[str, ...] = DEFAULT_ACCELERATORS
    #: 0: no metrics endpoint.
    metrics_port: int = 0
    metrics_host: str = "127.0.0.1"
    #: Seconds between full re-lists (catch-up besides the watch).
    resync_seconds: float = 30.0
    #: Tests only: sleep this long between patching the RayJob and patching the Workload.
    pause_mid_move_seconds: float = 0.0
    #: Local mode only (KWOK pods run no Ray): copy a ready RayCluster's state into its RayJob, as
    #: KubeRay does once the Ray head's dashboard answers; Kueue reads PodsReady from it.
    emulate_ray_ready: bool = False


def human(seconds: float) -> str:
    """10m, 90s, 1h30m: how long plan A was given."""
    total = round(seconds)
    if total % 60:
        return f"{total}s"
    minutes = total // 60
    if minutes >= 60 and minutes % 60 == 0:
        return f"{minutes // 60}h"
    if minutes >= 60:
        return f"{minutes // 60}h{minutes % 60}m"
    return f"{minutes}m"


def move_message(after_seconds: float) -> str:
    return f"moved to plan B after {human(after_seconds)}: plan A had no capacity"


def condition(obj: Obj, kind: str) -> Obj | None:
    for cond in obj.get("status", {}).get("conditions", []) or []:
        if cond.get("type") == kind:
            return dict(cond)
    return None


def is_true(obj: Obj, kind: str) -> bool:
    cond = condition(obj, kind)
    return cond is not None and cond.get("status") == "True"


def pods_ready_timeouts(wl: Obj) -> dict[str, int]:
    """Kueue's count of PodsReadyTimeout evictions of this Workload, by underlying cause."""
    stats = (wl.get("status") or {}).get("schedulingStats") or {}
    counts: dict[str, int] = {}
    for entry in stats.get("evictions") or []:
        if entry.get("reason") == EVICTED_REASON:
            counts[str(entry.get("underlyingCause") or "")] = int(entry.get("count") or 0)
    return counts


def is_stockout(wl: Obj, before: dict[str, int] | None) -> bool:
    """Whether the Workload's PodsReadyTimeout eviction is a WaitForStart one (plan A had no capacity).

    ``before``: the counts when the controller last saw the Workload not evicted. The eviction whose count
    rose since is this one. Never seen before it: only a Workload that never timed out recovering is sure."""
    counts = pods_ready_timeouts(wl)
    if before is None:
        return counts.get(STOCKOUT_CAUSE, 0) > 0 and counts.get(RECOVERY_CAUSE, 0) == 0
    return counts.get(STOCKOUT_CAUSE, 0) > before.get(STOCKOUT_CAUSE, 0)


def rayjob_owner(wl: Obj) -> str | None:
    for owner in wl.get("metadata", {}).get("ownerReferences", []) or []:
        if owner.get("kind") == "RayJob" and owner.get("apiVersion", "").startswith(RAY_GROUP + "/"):
            return str(owner["name"])
    return None


def requests_accelerator(pod_spec: Obj, accelerators: Iterable[str]) -> bool:
    wanted = set(accelerators)
    for container in pod_spec.get("containers", []) or []:
        resources = container.get("resources", {}) or {}
        for section in ("requests", "limits"):
            if wanted & set((resources.get(section) or {}).keys()):
                return True
    return False


def admitted_flavors(wl: Obj, accelerators: Iterable[str]) -> set[str]:
    """The flavors of the accelerator pod sets in the Workload's current admission."""
    admission = wl.get("status", {}).get("admission") or {}
    wanted = set(accelerators)
    out: set[str] = set()
    for assignment in admission.get("podSetAssignments", []) or []:
        for resource, flavor in (assignment.get("flavors") or {}).items():
            if resource in wanted:
                out.add(str(flavor))
    return out


def exclusion(key: str, value: str) -> Obj:
    return {"key": key, "operator": "NotIn", "values": [value]}


def excludes(pod_spec: Obj, key: str, value: str) -> bool:
    """True if every required node selector term already excludes key=value."""
    terms = (
        ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        or {}
    ).get("nodeSelectorTerms") or []
    if not terms:
        return False
    return all(exclusion(key, value) in (term.get("matchExpressions") or []) for term in terms)


def with_exclusion(pod_spec: Obj, key: str, value: str) -> Obj:
    """The pod spec's affinity with key NotIn [value] added to every required term (ANDed)."""
    affinity = copy.deepcopy(pod_spec.get("affinity") or {})
    node = affinity.setdefault("nodeAffinity", {})
    required = node.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
    terms = required.get("nodeSelectorTerms") or [{}]
    for term in terms:
        expressions = term.setdefault("matchExpressions", [])
        if exclusion(key, value) not in expressions:
            expressions.append(exclusion(key, value))
    required["nodeSelectorTerms"] = terms
    return affinity


def escape(key: str) -> str:
    """A JSON pointer token (RFC 6901)."""
    return key.replace("~", "~0").replace("/", "~1")


def now_rfc3339() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    try:
        return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
    except ValueError:
        return None


class Controller:
    def __init__(self, api: client.ApiClient, cfg: Config) -> None:
        self.cfg = cfg
        self.custom = client.CustomObjectsApi(api)
        self.core = client.CoreV1Api(api)
        self.moves_done = 0  # by this process (the cluster-wide count comes from the annotations)
        self.recorded: set[str] = set()  # uids of RayJobs whose Event exists
        #: Workloads (uid) last seen admitted on plan A: Kueue clears the admission right after the
        #: eviction, possibly before this controller has patched the RayJob.
        self.on_plan_a: set[str] = set()
        #: Workloads (uid) -> their PodsReadyTimeout counts when last seen not evicted (is_stockout).
        self.timeouts_before: dict[str, dict[str, int]] = {}
        self.lock = threading.Lock()

    # ------------------------------------------------------------------- API
    def get(self, group: str, version: str, plural: str, name: str, namespace: str | None = None) -> Obj:
        if namespace is None:
            found: Any = self.custom.get_cluster_custom_object(group, version, plural, name)
        else:
            found = self.custom.get_namespaced_custom_object(group, version, namespace, plural, name)
        return dict(found)

    def list_all(self, group: str, version: str, plural: str) -> Obj:
        found: Any = self.custom.list_cluster_custom_object(group, version, plural)
        return dict(found)

    def json_patch(self, group: str, version: str, plural: str, namespace: str, name: str, patch: list[Obj]) -> None:
        self.custom.patch_namespaced_custom_object(
            group, version, namespace, plural, name, patch, _content_type="application/json-patch+json"
        )

    # ------------------------------------------------------------ plan A's label
    def plan_a_label(self) -> tuple[str, str]:
        flavor = self.get(KUEUE_GROUP, KUEUE_VERSION, "resourceflavors", self.cfg.plan_a_flavor)
        labels: dict[str, str] = dict((flavor.get("spec") or {}).get("nodeLabels") or {})
        if not labels:
            raise RuntimeError(f"ResourceFlavor {self.cfg.plan_a_flavor} has no nodeLabels to exclude")
        key = PLAN_LABEL if PLAN_LABEL in labels else sorted(labels)[0]
        return key, labels[key]

    # ------------------------------------------------------------------ reconcile
    def reconcile(self, wl: Obj) -> None:
        name = rayjob_owner(wl)
        if name is None:
            return
        namespace = wl["metadata"]["namespace"]
        try:
            rayjob = self.get(RAY_GROUP, RAY_VERSION, "rayjobs", name, namespace)
        except ApiException as exc:
            if exc.status == 404:
                return
            raise
        annotations = rayjob.get("metadata", {}).get("annotations") or {}
        uid = str(wl["metadata"].get("uid"))
        flavors = admitted_flavors(wl, self.cfg.accelerators)
        if flavors:
            if self.cfg.plan_a_flavor in flavors:
                self.on_plan_a.add(uid)
            else:
                self.on_plan_a.discard(uid)
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
                except ApiException as exc:
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
            if self.cfg.pause_mid_move_seconds:
                log.info("pausing %.0f s mid-move (test hook)", self.cfg.pause_mid_move_seconds)
                time.sleep(self.cfg.pause_mid_move_seconds)
            wl = self.get(KUEUE_GROUP, KUEUE_VERSION, "workloads", wl["metadata"]["name"], namespace)
            annotations = {MOVED_ANNOTATION: "", AFTER_ANNOTATION: str(self.cfg.after_seconds)}
        self.finish(namespace, name, wl, annotations)

    def patch_rayjob(self, rayjob: Obj, key: str, value: str) -> None:
        """The annotation and the workers' affinity in one patch: either both or neither."""
        meta = rayjob["metadata"]
        groups = copy.deepcopy(rayjob["spec"]["rayClusterSpec"].get("workerGroupSpecs") or [])
        for group in groups:
            spec = group["template"].setdefault("spec", {})
            if requests_accelerator(spec, self.cfg.accelerators):
                spec["affinity"] = with_exclusion(spec, key, value)
        patch = [
            {"op": "test", "path": "/metadata/resourceVersion", "value": meta["resourceVersion"]},
            {"op": "replace", "path": "/spec/rayClusterSpec/workerGroupSpecs", "value": groups},
        ]
        if not meta.get("annotations"):
            patch.append({"op": "add", "path": "/metadata/annotations", "value": {}})
        patch.append({"op": "add", "path": "/metadata/annotations/" + escape(MOVED_ANNOTATION), "value": now_rfc3339()})
        for ann, val in ((FROM_ANNOTATION, self.cfg.plan_a_flavor), (AFTER_ANNOTATION, str(self.cfg.after_seconds))):
            patch.append({"op": "add", "path": "/metadata/annotations/" + escape(ann), "value": val})
        self.json_patch(RAY_GROUP, RAY_VERSION, "rayjobs", meta["namespace"], meta["name"], patch)
        with self.lock:
            self.moves_done += 1

    def finish(self, namespace: str, name: str, wl: Obj, annotations: dict[str, str]) -> None:
        """The Workload's affinity (once Kueue released its quota) and the Event; both idempotent."""
        if is_true(wl, "QuotaReserved"):
            return  # still admitted (or re-admitted on plan B already): pod sets are immutable now
        key, value = self.plan_a_label()
        podsets = wl["spec"]["podSets"]
        patch: list[Obj] = []
        for index, podset in enumerate(podsets):
            spec = podset["template"].get("spec", {})
            if requests_accelerator(spec, self.cfg.accelerators) and not excludes(spec, key, value):
                patch.append(
                    {
                        "op": "add",
                        "path": f"/spec/podSets/{index}/template/spec/affinity",
                        "value": with_exclusion(spec, key, value),
                    }
                )
        if patch:
            patch.insert(
                0, {"op": "test", "path": "/metadata/resourceVersion", "value": wl["metadata"]["resourceVersion"]}
            )
            self.json_patch(KUEUE_GROUP, KUEUE_VERSION, "workloads", namespace, wl["metadata"]["name"], patch)
            log.info("%s/%s: Workload %s now excludes %s=%s", namespace, name, wl["metadata"]["name"], key, value)
        self.record_event(namespace, name, float(annotations.get(AFTER_ANNOTATION) or self.cfg.after_seconds))

    def record_event(self, namespace: str, name: str, after_seconds: float) -> None:
        rayjob = self.get(RAY_GROUP, RAY_VERSION, "rayjobs", name, namespace)
        uid = str(rayjob["metadata"]["uid"])
        if uid in self.recorded:
            return
        stamp = now_rfc3339()
        body: Obj = {
            "apiVersion": "v1",
            "kind": "Event",
            # One name per RayJob object: a re-created job of the same name gets its own Event.
            "metadata": {"name": f"{name}.planb-moved-to-plan-b.{uid}", "namespace": namespace},
            "involvedObject": {
                "apiVersion": f"{RAY_GROUP}/{RAY_VERSION}",
                "kind": "RayJob",
                "name": name,
                "namespace": namespace,
                "uid": rayjob["metadata"]["uid"],
            },
            "reason": EVENT_REASON,
            "message": move_message(after_seconds),
            "type": "Normal",
            "source": {"component": "planb-failover"},
            "reportingComponent": "planb-failover",
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
        }
        try:
            self.core.create_namespaced_event(namespace, body)  # type: ignore[arg-type]  # a dict body is sent as is
            log.info("%s/%s: %s", namespace, name, body["message"])
        except ApiException as exc:
            if exc.status != 409:  # already recorded (a restart after the move): one Event per move
                raise
        self.recorded.add(uid)

    # -------------------------------------------------------------------- loops
    def list_workloads(self) -> tuple[list[Obj], str]:
        data = self.list_all(KUEUE_GROUP, KUEUE_VERSION, "workloads")
        return list(data.get("items", [])), str(data["metadata"]["resourceVersion"])

    def safe_reconcile(self, wl: Obj) -> None:
        try:
            self.reconcile(wl)
        except ApiException as exc:
            # 409/422: the object changed under us (a failed "test"); the next event or resync retries.
            log.warning(
                "%s/%s: %s %s %s",
                wl["metadata"].get("namespace"),
                wl["metadata"].get("name"),
                exc.status,
                exc.reason,
                str(exc.body or "")[:500],
            )
        except Exception:
            log.exception("reconciling %s", wl.get("metadata", {}).get("name"))

    def emulate_ray_ready_once(self) -> None:
        """Local mode: RayJob.status.rayClusterStatus <- its ready RayCluster's status.

        On GKE KubeRay copies it when it polls the Ray head's dashboard for the job; KWOK's pods run
        no Ray head, so KubeRay never gets there and Kueue would never see PodsReady=True."""
        clusters = self.list_all(RAY_GROUP, RAY_VERSION, "rayclusters").get("items", [])
        jobs = {
            (j["metadata"]["namespace"], j["metadata"]["name"]): j
            for j in self.list_all(RAY_GROUP, RAY_VERSION, "rayjobs").get("items", [])
        }
        for cluster in clusters:
            status = cluster.get("status") or {}
            if status.get("state") != "ready":
                continue
            for owner in cluster["metadata"].get("ownerReferences", []) or []:
                job = jobs.get((cluster["metadata"]["namespace"], owner.get("name")))
                if owner.get("kind") != "RayJob" or job is None or job["spec"].get("suspend"):
                    continue
                job_status = job.get("status") or {}
                if job_status.get("rayClusterName") != cluster["metadata"]["name"]:
                    continue
                if (job_status.get("rayClusterStatus") or {}).get("state") == "ready":
                    continue
                self.custom.patch_namespaced_custom_object_status(
                    RAY_GROUP,
                    RAY_VERSION,
                    job["metadata"]["namespace"],
                    "rayjobs",
                    job["metadata"]["name"],
                    {"status": {"rayClusterStatus": status}},
                    _content_type="application/merge-patch+json",
                )

    def emulate_ray_ready_loop(self, stop: threading.Event) -> None:
        while not stop.wait(0.5):
            try:
                self.emulate_ray_ready_once()
            except Exception as exc:  # best effort, next round retries
                log.warning("emulating Ray readiness: %s", exc)

    def run(self, stop: threading.Event) -> None:
        if self.cfg.emulate_ray_ready:
            threading.Thread(target=self.emulate_ray_ready_loop, args=(stop,), daemon=True, name="ray-ready").start()
        while not stop.is_set():
            try:
                items, version = self.list_workloads()
                for wl in items:
                    self.safe_reconcile(wl)
                deadline = time.monotonic() + self.cfg.resync_seconds
                stream = watch.Watch()  # type: ignore[no-untyped-call]
                for event in stream.stream(  # type: ignore[no-untyped-call]
                    self.custom.list_cluster_custom_object,
                    KUEUE_GROUP,
                    KUEUE_VERSION,
                    "workloads",
                    resource_version=version,
                    timeout_seconds=max(1, int(self.cfg.resync_seconds)),
                ):
                    if event["type"] in ("ADDED", "MODIFIED"):
                        self.safe_reconcile(event["object"])
                    if stop.is_set() or time.monotonic() > deadline:
                        stream.stop()  # type: ignore[no-untyped-call]
            except ApiException as exc:
                log.warning("watch ended: %s %s; listing again", exc.status, exc.reason)
                time.sleep(1)
            except Exception:
                log.exception("watch failed; listing again")
                time.sleep(2)

    # ------------------------------------------------------------------ metrics
    def metrics(self) -> str:
        workloads, _ = self.list_workloads()
        rayjobs = self.list_all(RAY_GROUP, RAY_VERSION, "rayjobs").get("items", [])
        waits: dict[str, list[float]] = {}
        lines = [
            "# HELP planb_time_to_admission_seconds Seconds from a Workload's creation to its admission, per plan"
            " (the accelerator flavor).",
            "# TYPE planb_time_to_admission_seconds summary",
        ]
        for wl in workloads:
            admitted = condition(wl, "Admitted")
            flavors = admitted_flavors(wl, self.cfg.accelerators)
            if not admitted or admitted.get("status") != "True" or not flavors:
                continue
            start = parse_time(wl["metadata"].get("creationTimestamp"))
            end = parse_time(admitted.get("lastTransitionTime"))
            if start and end:
                for plan in flavors:
                    waits.setdefault(plan, []).append((end - start).total_seconds())
        for plan, values in sorted(waits.items()):
            lines.append(f'planb_time_to_admission_seconds_sum{{plan="{plan}"}} {sum(values):g}')
            lines.append(f'planb_time_to_admission_seconds_count{{plan="{plan}"}} {len(values)}')
        moved = [r for r in rayjobs if MOVED_ANNOTATION in (r.get("metadata", {}).get("annotations") or {})]
        lines += [
            "# HELP planb_failover_moved_jobs RayJobs that exist now and were moved from plan A to plan B.",
            "# TYPE planb_failover_moved_jobs gauge",
            f"planb_failover_moved_jobs {len(moved)}",
            "# HELP planb_failover_moves_total Moves this controller process made.",
            "# TYPE planb_failover_moves_total counter",
            f"planb_failover_moves_total {self.moves_done}",
        ]
        return "\n".join(lines) + "\n"

    def serve_metrics(self) -> http.server.ThreadingHTTPServer:
        controller = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.split("?")[0] != "/metrics":
                    self.send_error(404)
                    return
                try:
                    body = controller.metrics().encode()
                except Exception as exc:  # the scrape says why
                    self.send_error(503, str(exc))
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                return

        server = http.server.ThreadingHTTPServer((self.cfg.metrics_host, self.cfg.metrics_port), Handler)
        threading.Thread(target=server.serve_forever, daemon=True, name="metrics").start()
        return server


def api_client(kubeconfig: str | None) -> client.ApiClient:
    if kubeconfig:
        made: client.ApiClient = config.new_client_from_config(config_file=kubeconfig)  # type: ignore[no-untyped-call]
        return made
    config.load_incluster_config()  # type: ignore[no-untyped-call]
    return client.ApiClient()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--kubeconfig", default=os.environ.get("KUBECONFIG"), help="default: in-cluster")
    parser.add_argument("--after-seconds", type=float, required=True, help="Kueue's waitForPodsReady timeout")
    parser.add_argument("--plan-a-flavor", default="on-demand")
    parser.add_argument("--accelerators", default=",".join(DEFAULT_ACCELERATORS))
    parser.add_argument("--metrics-host", default="127.0.0.1")
    parser.add_argument("--metrics-port", type=int, default=0)
    parser.add_argument("--resync-seconds", type=float, default=30.0)
    parser.add_argument(
        "--emulate-ray-ready",
        action="store_true",
        help="local mode only: mark a RayJob's cluster ready as KubeRay does once the Ray head answers",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    cfg = Config(
        after_seconds=args.after_seconds,
        plan_a_flavor=args.plan_a_flavor,
        accelerators=tuple(a for a in args.accelerators.split(",") if a),
        metrics_port=args.metrics_port,
        metrics_host=args.metrics_host,
        resync_seconds=args.resync_seconds,
        pause_mid_move_seconds=float(os.environ.get("PLANB_FAILOVER_PAUSE_MID_MOVE", "0") or 0),
        emulate_ray_ready=args.emulate_ray_ready,
    )
    controller = Controller(api_client(args.kubeconfig), cfg)
    if cfg.metrics_port:
        controller.serve_metrics()
        log.info("metrics on http://%s:%d/metrics", cfg.metrics_host, cfg.metrics_port)
    log.info("failover on: a job evicted from %s after %s moves to plan B", cfg.plan_a_flavor, human(cfg.after_seconds))
    controller.run(threading.Event())
    return 0


if __name__ == "__main__":
    sys.exit(main())
