"""The capacity simulator: what GKE's cluster autoscaler and Dynamic Workload Scheduler do, locally.

* Fixed-size pools (autoscaling off, e.g. the cluster's default pool) get their node count.
* ProvisioningRequests of class ``queued-provisioning.gke.io`` wait ``provisioning_delay_seconds``
  (DWS's queue), then the matching queued-provisioning pool gets all the request's nodes at once
  (KWOK nodes with GKE's labels, the ``cloud.google.com/gke-queued`` taint and accelerator
  capacity) and the request gets ``Provisioned=True``. With ``fail_next`` set it gets
  ``Failed=True`` instead. When the request is deleted its nodes go.
* Autoscaled on-demand pools grow by whole slices for pending pods that fit them (unless the pool
  is in ``stockout``) and shrink by whole slices after ``scale_down_after_seconds`` idle.

Node sizes come from the accelerator catalog. A pool whose machine type (or topology) the catalog
cannot describe gets no nodes: the simulator logs the catalog's error once per pool, and a
ProvisioningRequest that finds no pool names those pools and their errors in its Failed condition.

Where this differs from GKE: no zones or reservations, node capacity is the machine's whole
capacity (no system reservations), and provisioning takes a fixed delay instead of waiting for
real capacity.
"""

from __future__ import annotations

import datetime
import hashlib
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from planb.capacity import machines as machines_mod
from planb.capacity import pools as pools_mod
from planb.capacity import settings as settings_mod
from planb.capacity.pools import BrokenPool, NodePool
from planb.errors import PlanbError
from planb.kube import Kube, KubeError, Obj, conditions

QUEUED_CLASS = "queued-provisioning.gke.io"
PR_PATH = "/apis/autoscaling.x-k8s.io/v1"
MANAGED = "planb.dev/capacity-simulator"
SLICE = "planb.dev/slice"
REQUEST = "planb.dev/provisioning-request"


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


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
        self.first_seen: dict[str, float] = {}
        self.idle_since: dict[str, float] = {}
        #: Pools the catalog cannot describe, by name, with the error last logged for each.
        self.broken: dict[str, str] = {}
        #: The unreadable-file error last logged ('' when the files read fine).
        self.file_error = ""

    # ------------------------------------------------------------------ loop
    def run(self, should_stop: Callable[[], bool] = lambda: False) -> None:
        self.log("capacity simulator running")
        settings = settings_mod.Settings()
        while not should_stop():
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
            time.sleep(settings.interval_seconds)

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
        for pool in pools.values():
            if not pool.autoscaling and not pool.queued_provisioning:
                self._fixed_size(pool, by_pool.get(pool.name, []))
            elif pool.autoscaling and not pool.queued_provisioning:
                missing = pool.min_nodes - len(by_pool.get(pool.name, []))
                for _ in range(-(-max(0, missing) // pool.hosts_per_slice)):
                    self._add_slice(pool, pool.hosts_per_slice, f"the pool's minimum of {pool.min_nodes} node(s)")
        self._provisioning_requests(pools, by_pool, settings)
        self._scale_up(pools, by_pool, settings)
        self._scale_down(pools, by_pool, settings)

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
    def _set_pr_conditions(self, pr: Obj, updates: list[tuple[str, str, str, str]]) -> None:
        conds = conditions(pr)
        for kind, status, reason, message in updates:
            old = conds.get(kind)
            if old and old.get("status") == status and old.get("reason") == reason:
                continue
            conds[kind] = {
                "type": kind,
                "status": status,
                "reason": reason,
                "message": message,
                "lastTransitionTime": _now(),
                "observedGeneration": pr["metadata"].get("generation", 1),
            }
        meta = pr["metadata"]
        self.kube.merge_patch(
            f"{PR_PATH}/namespaces/{meta['namespace']}/provisioningrequests/{meta['name']}/status",
            {"status": {"conditions": list(conds.values())}},
        )

    def _pr_pod_selector(self, pr: Obj) -> tuple[dict[str, str], int]:
        """The nodeSelector of the request's pod templates and the number of pods it asks for."""
        selector: dict[str, str] = {}
        count = 0
        for podset in pr["spec"].get("podSets", []):
            count += int(podset.get("count", 1))
            template = self.kube.get(
                f"/api/v1/namespaces/{pr['metadata']['namespace']}/podtemplates/{podset['podTemplateRef']['name']}"
            )
            if template is not None:
                selector.update(template["template"]["spec"].get("nodeSelector") or {})
        return selector, count

    def _provisioning_requests(
        self, pools: dict[str, NodePool], by_pool: dict[str, list[Obj]], settings: settings_mod.Settings
    ) -> None:
        listing = self.kube.get(f"{PR_PATH}/provisioningrequests") or {}
        live: set[str] = set()
        added: dict[str, int] = defaultdict(int)
        for pr in listing.get("items", []):
            if pr["spec"].get("provisioningClassName") != QUEUED_CLASS:
                continue
            key = f"{pr['metadata']['namespace']}/{pr['metadata']['name']}"
            live.add(key)
            conds = conditions(pr)
            done = any(conds.get(k, {}).get("status") == "True" for k in ("Provisioned", "Failed"))
            if done:
                continue
            first = self.first_seen.setdefault(key, time.monotonic())
            if "Accepted" not in conds:
                self._set_pr_conditions(pr, [("Accepted", "True", "Accepted", "queued by DWS (simulated)")])
                self.log(f"ProvisioningRequest {key}: accepted, queued")
            if time.monotonic() - first < settings.provisioning_delay_seconds:
                continue
            if settings.fail_next > 0:
                settings = settings_mod.update(self.state_dir, fail_next=settings.fail_next - 1)
                self._set_pr_conditions(
                    pr,
                    [("Failed", "True", "CapacityNotFound", "simulated failure (planb capacity set --fail-next)")],
                )
                self.log(f"ProvisioningRequest {key}: Failed (simulated)")
                continue
            selector, count = self._pr_pod_selector(pr)
            matches = [p for p in pools.values() if p.queued_provisioning and p.matches(selector)]
            if not matches:
                why = f"no node pool with queued provisioning matches nodeSelector {selector}"
                if self.broken:
                    why += "; pools without nodes: " + "; ".join(f"{n}: {m}" for n, m in sorted(self.broken.items()))
                self._set_pr_conditions(pr, [("Failed", "True", "NoMatchingNodePool", why)])
                self.log(f"ProvisioningRequest {key}: Failed, no queued-provisioning pool matches {selector}")
                continue
            pool = matches[0]
            in_use = len(by_pool.get(pool.name, [])) + added[pool.name]
            if in_use + count > pool.max_nodes:
                continue  # stays queued until the pool has room, as DWS does
            self._add_slice(pool, count, f"ProvisioningRequest {key}", request=key)
            added[pool.name] += count
            self._set_pr_conditions(
                pr, [("Provisioned", "True", "Provisioned", f"{count} node(s) of pool {pool.name} delivered")]
            )
            self.log(f"ProvisioningRequest {key}: Provisioned on {pool.name}")
        for key in list(self.first_seen):
            if key not in live:
                del self.first_seen[key]
        # Nodes whose request is gone are removed (the job finished or was evicted).
        for pool_nodes in by_pool.values():
            for node in pool_nodes:
                request = (node["metadata"].get("annotations") or {}).get(REQUEST)
                if request and request not in live:
                    self._delete_node(node["metadata"]["name"], f"ProvisioningRequest {request} deleted")

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
        self, pools: dict[str, NodePool], by_pool: dict[str, list[Obj]], settings: settings_mod.Settings
    ) -> None:
        wanted: dict[str, int] = defaultdict(int)
        for pod in self._pending_pods():
            for pool in pools.values():
                if pool.autoscaling and not pool.queued_provisioning and self._fits(pod, pool):
                    wanted[pool.name] += 1
                    break
        for name, pods in wanted.items():
            pool = pools[name]
            if name in settings.stockout:
                self.log(f"pool {name}: {pods} pod(s) pending, no capacity (simulated stockout)")
                continue
            have = len(by_pool.get(name, []))
            slices = -(-pods // pool.hosts_per_slice)
            room = (pool.max_nodes - have) // pool.hosts_per_slice
            for _ in range(min(slices, room)):
                self._add_slice(pool, pool.hosts_per_slice, f"{pods} pending pod(s)")

    def _scale_down(
        self, pools: dict[str, NodePool], by_pool: dict[str, list[Obj]], settings: settings_mod.Settings
    ) -> None:
        busy = {
            pod["spec"]["nodeName"]
            for pod in self.kube.items("/api/v1/pods")
            if pod["spec"].get("nodeName") and pod.get("status", {}).get("phase") not in ("Succeeded", "Failed")
        }
        now = time.monotonic()
        for name, pool in pools.items():
            if not pool.autoscaling or pool.queued_provisioning:
                continue
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
