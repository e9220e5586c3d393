"""The capacity simulator: what GKE's cluster autoscaler and Dynamic Workload Scheduler do, locally.

* Fixed-size pools (autoscaling off, e.g. the cluster's default pool) get their node count.
* ProvisioningRequests of class ``queued-provisioning.gke.io`` go through DWS's lifecycle, each
  step with the condition type, reason and message GKE sets ("Run a large-scale workload with
  flex-start with queued provisioning", section on the Provisioning Request's status:
  https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest; the reasons and
  messages are the ones GKE's autoscaler writes, and Kueue v0.19.2's
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

  The simulator watches ProvisioningRequests (list, then watch from the list's resourceVersion),
  so it answers each one as it appears instead of on the next poll.
* Autoscaled on-demand pools grow by whole slices for pending pods that fit them (unless the pool
  is in ``stockout``) and shrink by whole slices after ``scale_down_after_seconds`` idle. Spot pools
  (``config.spot``) scale the same way, their nodes carry GKE's Spot label, and ``preempt`` takes
  their nodes away after the termination notice (``spot_notice_seconds``; planb.capacity.spot).

Node sizes come from the accelerator catalog. A pool whose machine type (or topology) the catalog
cannot describe gets no nodes: the simulator logs the catalog's error once per pool, and a
ProvisioningRequest that finds no pool names those pools and their errors in its Failed condition.

Where this differs from GKE: no zones or reservations, node capacity is the machine's whole
capacity (no system reservations), provisioning takes a fixed delay instead of waiting for real
capacity (so the ETA is exact), and a failure is a switch, not a stockout.
"""

from __future__ import annotations

import datetime
import hashlib
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from planb.capacity import machines as machines_mod
from planb.capacity import pools as pools_mod
from planb.capacity import settings as settings_mod
from planb.capacity import spot as spot_mod
from planb.capacity import webhook as webhook_mod
from planb.capacity.pools import BrokenPool, NodePool
from planb.errors import PlanbError
from planb.informer import Informer
from planb.kube import Kube, KubeError, Obj, conditions

QUEUED_CLASS = "queued-provisioning.gke.io"
PR_PATH = "/apis/autoscaling.x-k8s.io/v1"
WEBHOOK_PATH = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
MANAGED = "planb.dev/capacity-simulator"
SLICE = "planb.dev/slice"
REQUEST = "planb.dev/provisioning-request"
#: Requests whose nodes are made at the same time.
DELIVERY_WORKERS = 8

# GKE's condition reasons and messages for queued provisioning. The page
# https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest shows the first four in
# its `kubectl describe provisioningrequest` output; the others are the ones GKE's autoscaler sets
# for the other states (its provreqstate and feature-guard reconcilers).
ACCEPTED_REASON = "SuccessfullyQueued"
ACCEPTED_MESSAGE = "Provisioning Request was successfully queued."
WAITING_REASON = "ResourcePoolExhausted"
WAITING_MESSAGE = "Waiting for resources. Currently there are not enough resources available to fulfill the request."
PROVISIONED_REASON = "Provisioned"
PROVISIONED_MESSAGE = "Provisioning Request was successfully provisioned."
BOOKING_EXPIRED_REASON = "BookingExpired"
BOOKING_EXPIRED_MESSAGE = (
    "Capacity booking for the Provisioning Request has expired and the nodes are now candidates for scale down "
    "when underutilized."
)
CAPACITY_REVOKED_REASON = "CapacityRevoked"
CAPACITY_REVOKED_MESSAGE = (
    "Capacity provisioned for the Provisioning Request was reclaimed and is no longer available in the cluster."
)
MULTIPLE_PODSETS_REASON = "MultiplePodSetsUnsupported"
MULTIPLE_PODSETS_MESSAGE = "Provisioning Request doesn't support multiple PodSets, please define only 1."
NO_CAPACITY_REASON = "QueuingInfeasibleNoCapacity"
#: The request parameter GKE reads the run duration from (Kueue fills it from the job's annotation).
MAX_RUN_PARAMETER = "maxRunDurationSeconds"


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _iso(when: float) -> str:
    return datetime.datetime.fromtimestamp(when, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_time(value: object) -> float | None:
    try:
        return datetime.datetime.strptime(str(value), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC).timestamp()
    except ValueError:
        return None


def _no_capacity_message(pool: str) -> str:
    return (
        f"Could not enqueue the Provisioning Request due to insufficient capacity in the zone of node pool {pool}. "
        "Try different locations or hardware."
    )


def _resize_request_name(key: str) -> str:
    """GKE's resize request name of the request "namespace/name" (webhook_mod.GKE_CA_RR_NAME)."""
    namespace, _, name = key.partition("/")
    return webhook_mod.resize_request_name(namespace, name)


def _details(key: str, pool: NodePool) -> dict[str, str]:
    """The provisioningClassDetails GKE writes when it takes a request (webhook_mod.GKE_CA_DETAILS), in part."""
    return {webhook_mod.RESIZE_REQUEST_DETAIL: _resize_request_name(key), "NodePoolName": pool.name}


def _max_run_parameter(pr: Obj) -> float:
    """The request's run duration in seconds: its parameter, else GKE's default; never over GKE's 7 days."""
    raw = ((pr.get("spec") or {}).get("parameters") or {}).get(MAX_RUN_PARAMETER)
    try:
        value = float(str(raw)) if raw is not None else settings_mod.GKE_MAX_RUN_SECONDS
    except ValueError:
        value = settings_mod.GKE_MAX_RUN_SECONDS
    return min(max(value, 0.0), settings_mod.GKE_MAX_RUN_SECONDS)


def _quantity_milli(value: str) -> int:
    """cpu quantities ('500m', '2') in millicores."""
    value = str(value)
    if value.endswith("m"):
        return int(float(value[:-1]))
    return int(float(value) * 1000)


def tolerates(tolerations: list[dict[str, Any]], taints: list[dict[str, str]]) -> bool:
    """Whether pod tolerations cover every NoSchedule/NoExecute taint."""
    for taint in taints:
        if taint.get("effect") == "PreferNoSchedule":
            continue
        ok = False
        for tol in tolerations or []:
            if tol.get("effect") and tol["effect"] != taint.get("effect"):
                continue
            if (tol.get("operator") == "Exists" and (not tol.get("key") or tol.get("key") == taint["key"])) or (
                tol.get("key") == taint["key"] and tol.get("value", "") == taint.get("value", "")
            ):
                ok = True
        if not ok:
            return False
    return True


class CapacitySimulator:
    """One reconcile pass per `step()`; `run()` loops until stopped."""

    def __init__(self, kubeconfig: Path, state_dir: Path | None = None, log: Callable[[str], None] = print) -> None:
        self.kube = Kube(kubeconfig)
        self.state_dir = state_dir
        self.log = log
        #: Per request ("namespace/name"): when it was first queued and when it was delivered (wall clock).
        self.first_seen: dict[str, float] = {}
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
        #: The ProvisioningRequest watch while `run` runs (None: `step` lists them itself).
        self.informer: Informer | None = None
        #: Set by the watch on every change: the loop runs a pass at once.
        self.wake = threading.Event()
        #: The earliest timer (wall clock) a pass found: a delay, booking window or run duration ending.
        self.next_deadline = float("inf")
        #: Pools the catalog cannot describe, by name, with the error last logged for each.
        self.broken: dict[str, str] = {}
        #: The unreadable-file error last logged ('' when the files read fine).
        self.file_error = ""
        #: Spot preemption (planb.capacity.spot): notices, then the nodes go.
        self.preemption = spot_mod.Preemption(self.kube, self.log, self._delete_node)

    # ------------------------------------------------------------------ loop
    def run(self, should_stop: Callable[[], bool] = lambda: False, webhook: bool = False) -> None:
        """Reconcile on every ProvisioningRequest change, at each timer, and every `interval_seconds` else.

        With `webhook`, GKE's binding of a request's pods to its nodes is served and registered first
        (`planb.capacity.webhook`), so no request is provisioned before its pods would get their node
        selector, and removed again when the loop ends.
        """
        self.log("capacity simulator running")
        settings = settings_mod.Settings()
        server = self._serve_webhook(should_stop) if webhook else None
        if webhook and server is None:
            return  # stopped before the webhook could be registered
        self.informer = Informer(self.kube, f"{PR_PATH}/provisioningrequests", self.wake.set, self.log).start()
        try:
            self._loop(should_stop, settings)
        finally:
            self.informer.stop()
            if server is not None:
                self._remove_webhook(server)

    def _serve_webhook(self, should_stop: Callable[[], bool]) -> webhook_mod.WebhookServer | None:
        """Start the webhook server and register it (retried while the API server refuses); None if stopped first."""
        server = webhook_mod.WebhookServer().start()
        body = server.configuration()
        path = f"{WEBHOOK_PATH}/{webhook_mod.CONFIG_NAME}"
        said = ""
        while not should_stop():
            try:
                current = self.kube.get(path)
                if current is None:
                    self.kube.create(WEBHOOK_PATH, body)
                else:
                    body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
                    self.kube.request("PUT", path, body)
                self.log(f"pod webhook {webhook_mod.CONFIG_NAME} registered at {server.url}")
                return server
            except (KubeError, OSError) as exc:
                if str(exc) != said:
                    self.log(f"pod webhook not registered yet (will retry): {exc}")
                    said = str(exc)
                time.sleep(1.0)
        server.stop()
        return None

    def _remove_webhook(self, server: webhook_mod.WebhookServer) -> None:
        """Unregister, then stop serving: no pod creation is sent to a webhook that is gone."""
        try:
            self.kube.delete(f"{WEBHOOK_PATH}/{webhook_mod.CONFIG_NAME}")
            self.log(f"pod webhook {webhook_mod.CONFIG_NAME} removed")
        except (KubeError, OSError) as exc:
            self.log(f"pod webhook {webhook_mod.CONFIG_NAME} could not be removed: {exc}")
        server.stop()

    def _loop(self, should_stop: Callable[[], bool], settings: settings_mod.Settings) -> None:
        while not should_stop():
            self.wake.clear()
            self.next_deadline = float("inf")
            try:
                settings = settings_mod.load(self.state_dir)
                self.step(settings)
                self.file_error = ""
            except KubeError as exc:
                self.log(f"api error (will retry): {exc}")
            except OSError as exc:
                self.log(f"connection error (will retry): {exc}")
            except PlanbError as exc:
                # An unreadable settings or emulator state file: say so once, keep running, and
                # pick the file up again once it is fixed.
                if str(exc) != self.file_error:
                    self.log(f"paused (will retry): {exc}")
                    self.file_error = str(exc)
            self.wake.wait(max(0.0, min(settings.interval_seconds, self.next_deadline - time.time())))

    def step(self, settings: settings_mod.Settings | None = None) -> None:
        settings = settings or settings_mod.load(self.state_dir)
        loaded, broken = pools_mod.load(self.state_dir)
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
        self._scale_up(pools, by_pool, settings, busy)
        self._scale_down(pools, by_pool, settings, busy)

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

    # ------------------------------------------------------------ nodes
    def _node_body(self, pool: NodePool, name: str, slice_id: str, request: str | None) -> dict[str, Any]:
        capacity = machines_mod.capacity(pool.machine)
        labels = pool.node_labels()
        labels.update(
            {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "type": "kwok",
                MANAGED: "true",
                SLICE: slice_id,
            }
        )
        annotations = {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}
        if request:
            annotations[REQUEST] = request
            # GKE labels a queued request's nodes with its resize request name (webhook_mod.GKE_CA_LABEL).
            labels[webhook_mod.REQUEST_LABEL] = _resize_request_name(request)
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels, "annotations": annotations},
            "spec": {"taints": pool.node_taints()},
            "status": {
                "capacity": capacity,
                "allocatable": capacity,
                "nodeInfo": {
                    "architecture": "amd64",
                    "operatingSystem": "linux",
                    "kubeletVersion": "fake",
                    "kubeProxyVersion": "fake",
                    "containerRuntimeVersion": "kwok",
                    "osImage": "kwok",
                    "kernelVersion": "kwok",
                    "machineID": "",
                    "systemUUID": "",
                    "bootID": "",
                },
                "phase": "Running",
            },
        }

    def _add_slice(self, pool: NodePool, count: int, reason: str, request: str | None = None) -> list[str]:
        seed = f"{pool.name}/{request or ''}/{time.time_ns()}"
        slice_id = hashlib.sha1(seed.encode()).hexdigest()[:8]
        names = []
        for i in range(count):
            name = f"gke-{pool.cluster or 'local'}-{pool.name}-{slice_id}-{i}"[:63].rstrip("-")
            self.kube.create("/api/v1/nodes", self._node_body(pool, name, slice_id, request))
            names.append(name)
        self.log(f"pool {pool.name}: +{count} node(s) ({reason}): {', '.join(names)}")
        return names

    def _delete_node(self, name: str, reason: str) -> None:
        if self.kube.delete(f"/api/v1/nodes/{name}"):
            self.log(f"node {name} removed ({reason})")
        self.idle_since.pop(name, None)

    def _fixed_size(self, pool: NodePool, nodes: list[Obj]) -> None:
        missing = pool.initial_nodes - len(nodes)
        for _ in range(max(0, missing)):
            self._add_slice(pool, 1, "fixed-size pool")
        for node in nodes[pool.initial_nodes :]:
            self._delete_node(node["metadata"]["name"], "fixed-size pool shrank")

    # ------------------------------------------------- provisioning requests
    def _requests(self) -> list[Obj] | None:
        """Every ProvisioningRequest: the watch's cache under `run`, else one list; None before the first sync."""
        if self.informer is not None:
            if not self.informer.synced.is_set():
                return None
            return self.informer.snapshot()
        return self.kube.items(f"{PR_PATH}/provisioningrequests")

    def _set_pr_conditions(
        self, pr: Obj, updates: list[tuple[str, str, str, str]], details: dict[str, str] | None = None
    ) -> Obj:
        """Set conditions (type, status, reason, message) and provisioningClassDetails of a request; returns the
        request as written."""
        conds = conditions(pr)
        old_details = (pr.get("status") or {}).get("provisioningClassDetails") or {}
        patch: dict[str, Any] = {}
        changed = False
        if details is not None and any(old_details.get(k) != v for k, v in details.items()):
            patch["provisioningClassDetails"] = {**old_details, **details}
            changed = True
        for kind, status, reason, message in updates:
            old = conds.get(kind)
            if old and (old.get("status"), old.get("reason"), old.get("message")) == (status, reason, message):
                continue
            changed = True
            conds[kind] = {
                "type": kind,
                "status": status,
                "reason": reason,
                "message": message,
                "lastTransitionTime": _now()
                if not old or old.get("status") != status
                else old.get("lastTransitionTime", _now()),
                "observedGeneration": pr["metadata"].get("generation", 1),
            }
        if not changed:
            return pr
        meta = pr["metadata"]
        patch["conditions"] = list(conds.values())
        written = self.kube.merge_patch(
            f"{PR_PATH}/namespaces/{meta['namespace']}/provisioningrequests/{meta['name']}/status",
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
                _parse_time(accepted.get("lastTransitionTime"))
                if accepted and accepted.get("status") == "True"
                else None
            ) or time.time()
        return self.first_seen[key]

    def _provisioned_at(self, key: str, conds: dict[str, Obj]) -> float:
        if key not in self.provisioned_at:
            self.provisioned_at[key] = _parse_time(conds["Provisioned"].get("lastTransitionTime")) or time.time()
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
            if pr["spec"].get("provisioningClassName") != QUEUED_CLASS:
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
            self._set_pr_conditions(pr, [("Failed", "True", MULTIPLE_PODSETS_REASON, MULTIPLE_PODSETS_MESSAGE)])
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
            waiting = f"{WAITING_MESSAGE} ETA: {_iso(eta)}."
            if time.time() >= eta:
                waiting = (
                    f"{WAITING_MESSAGE} Node pool {pool.name} has {pool.max_nodes - in_use} of its "
                    f"{pool.max_nodes} node(s) free and the request needs {count}: it stays queued."
                )
            if "Accepted" not in true:
                self.log(f"ProvisioningRequest {key}: accepted, queued for {life.delay_seconds:.0f} s on {pool.name}")
            self._set_pr_conditions(
                pr,
                [
                    ("Accepted", "True", ACCEPTED_REASON, ACCEPTED_MESSAGE),
                    ("Provisioned", "False", WAITING_REASON, waiting),
                ],
                _details(key, pool),
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
                    ("Accepted", "True", ACCEPTED_REASON, ACCEPTED_MESSAGE),
                    ("Failed", "True", NO_CAPACITY_REASON, f"{_no_capacity_message(pool.name)} (simulated: {switch})"),
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
                        ("Accepted", "True", ACCEPTED_REASON, ACCEPTED_MESSAGE),
                        ("Provisioned", "True", PROVISIONED_REASON, PROVISIONED_MESSAGE),
                    ],
                    _details(key, pool),
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
            max_run = _max_run_parameter(pr)
        now = time.time()
        if now >= delivered + max_run:
            updates = [("CapacityRevoked", "True", CAPACITY_REVOKED_REASON, CAPACITY_REVOKED_MESSAGE)]
            if "BookingExpired" not in true:  # GKE's requests pass through BookingExpired first
                updates.insert(0, ("BookingExpired", "True", BOOKING_EXPIRED_REASON, BOOKING_EXPIRED_MESSAGE))
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
            self._set_pr_conditions(pr, [("BookingExpired", "True", BOOKING_EXPIRED_REASON, BOOKING_EXPIRED_MESSAGE)])
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

    # ------------------------------------------------------------- autoscale
    def _pending_pods(self) -> list[Obj]:
        out = []
        for pod in self.kube.items("/api/v1/pods", {"fieldSelector": "status.phase=Pending"}):
            if pod["spec"].get("nodeName"):
                continue
            scheduled = conditions(pod).get("PodScheduled", {})
            if scheduled.get("status") == "False" and scheduled.get("reason") == "Unschedulable":
                out.append(pod)
        return out

    def _fits(self, pod: Obj, pool: NodePool) -> bool:
        spec = pod["spec"]
        if not pool.matches(spec.get("nodeSelector") or {}):
            return False
        if not tolerates(spec.get("tolerations") or [], pool.node_taints()):
            return False
        machine = pool.machine
        cpu = 0
        accel = 0
        for container in spec["containers"]:
            requests = (container.get("resources") or {}).get("requests") or {}
            cpu += _quantity_milli(requests.get("cpu", "0"))
            if machine.accelerator_resource:
                accel += int(requests.get(machine.accelerator_resource, 0))
            elif any(k in requests for k in ("google.com/tpu", "nvidia.com/gpu")):
                return False
        return cpu <= machine.vcpus * 1000 and accel <= machine.accelerators

    def _scale_up(
        self,
        pools: dict[str, NodePool],
        by_pool: dict[str, list[Obj]],
        settings: settings_mod.Settings,
        busy: Callable[[], set[str]],
    ) -> None:
        # Pending pods by the pools they fit: a plan's pools all fit its pods (they carry its label).
        wanted: dict[tuple[str, ...], int] = defaultdict(int)
        for pod in self._pending_pods():
            fits = tuple(
                p.name for p in pools.values() if p.autoscaling and not p.queued_provisioning and self._fits(pod, p)
            )
            if fits:
                wanted[fits] += 1
        added: dict[str, int] = defaultdict(int)
        for names, pods in wanted.items():
            out = [name for name in names if name in settings.stockout]
            if out:
                self.log(f"pool(s) {', '.join(out)}: {pods} pod(s) pending, no capacity (simulated stockout)")
            # Nodes of these pools that run nothing yet (e.g. a slice made last pass) take pending pods first.
            idle = sum(1 for name in names for node in by_pool.get(name, []) if node["metadata"]["name"] not in busy())
            # Whole slices, pool after pool: a pool at its max (one slice per multi-host TPU pool) or in stockout is
            # skipped, as GKE's autoscaler skips a node group it cannot grow.
            needed = pods - idle
            for name in names:
                pool = pools[name]
                if name in settings.stockout or needed <= 0:
                    continue
                room = (pool.max_nodes - len(by_pool.get(name, [])) - added[name]) // pool.hosts_per_slice
                for _ in range(min(-(-needed // pool.hosts_per_slice), room)):
                    self._add_slice(pool, pool.hosts_per_slice, f"{pods} pending pod(s)")
                    added[name] += pool.hosts_per_slice
                    needed -= pool.hosts_per_slice

    def _scale_down(
        self,
        pools: dict[str, NodePool],
        by_pool: dict[str, list[Obj]],
        settings: settings_mod.Settings,
        busy_nodes: Callable[[], set[str]],
    ) -> None:
        now = time.monotonic()
        for name, pool in pools.items():
            if not pool.autoscaling or pool.queued_provisioning:
                continue
            busy = busy_nodes()
            remaining = len(by_pool.get(name, []))
            slices: dict[str, list[str]] = defaultdict(list)
            for node in by_pool.get(name, []):
                meta = node["metadata"]
                slices[meta["labels"].get(SLICE, meta["name"])].append(meta["name"])
            for slice_nodes in slices.values():
                if any(n in busy for n in slice_nodes):
                    for n in slice_nodes:
                        self.idle_since.pop(n, None)
                    continue
                since = min(self.idle_since.setdefault(n, now) for n in slice_nodes)
                # GKE never scales an autoscaled pool below its minimum.
                if now - since >= settings.scale_down_after_seconds and remaining - len(slice_nodes) >= pool.min_nodes:
                    for n in slice_nodes:
                        self._delete_node(n, f"idle for {settings.scale_down_after_seconds:.0f} s")
                    remaining -= len(slice_nodes)
