"""The autoscaler: how GKE's cluster autoscaler grows and shrinks on-demand and Spot pools.

An autoscaled pool without queued provisioning grows by whole slices for pending pods that fit it
(its nodeSelector matches, its taints are tolerated, one node holds the pod's requests), unless the
pool is in ``stockout``: pods that fit several pools (a plan's pools all carry its label) fill them
pool after pool, skipping a pool at its max or in stockout. Nodes made earlier that run nothing yet
take pending pods first. A slice none of whose nodes runs a pod for ``scale_down_after_seconds`` is
removed, never below the pool's minimum. Spot pools (``config.spot``) scale the same way; their
preemption is planb.local.capacity.spot's.

A pending pod that fits some pool but that no pool can take (each is stocked out or at its max, with no idle node)
gets the Event GKE's autoscaler records for a pod it could not help: reason ``NotTriggerScaleUp``,
``Pod didn't trigger scale-up: <reasons>`` (GoogleCloudPlatform/cluster-autoscaler
pkg/processors/scaleup/internal_eventing_scale_up_processor.go, recordNotTriggeredScaleUpEvent), the reasons
counted per pool as ``_reasons`` says; a stocked-out pool is "in backoff after failed scale-up", as a node group is
after a scale-up that ZONE_RESOURCE_POOL_EXHAUSTED failed. GKE records it on every loop that helps no pod (the
recorder then counts repeats); the simulator records it once per pod.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from planb.kube import KubeError, Obj
from planb.kube_objects import conditions
from planb.local.capacity import settings as settings_mod
from planb.local.capacity.context import Context
from planb.local.capacity.nodes import SLICE, Nodes
from planb.local.capacity.pools import NodePool


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


def fits(pod: Obj, pool: NodePool) -> bool:
    """Whether the pod can run on a node of the pool: nodeSelector, taints, one node holds its requests."""
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


def _at_max(pool: NodePool, by_pool: dict[str, list[Obj]]) -> bool:
    return pool.max_nodes - len(by_pool.get(pool.name, [])) < pool.hosts_per_slice


class Autoscaler:
    """The scale-up reconciler: ordinary pools grown for pending pods (NotTriggerScaleUp on a pod none can take) and
    idle slices removed."""

    def __init__(self, ctx: Context, nodes: Nodes, ignored: Callable[[Obj], bool]) -> None:
        self.ctx = ctx
        self.nodes = nodes
        #: Pending pods no ordinary scale-up is made for (planb.local.capacity.besteffort: those that consume a
        #: ProvisioningRequest).
        self.ignored = ignored
        #: Pods told they did not trigger a scale-up (one Event per pod).
        self.told_not_triggered: set[str] = set()

    def _pending_pods(self) -> list[Obj]:
        out = []
        for pod in self.ctx.pods():
            if pod["spec"].get("nodeName") or (pod.get("status") or {}).get("phase") != "Pending":
                continue
            scheduled = conditions(pod).get("PodScheduled", {})
            if scheduled.get("status") == "False" and scheduled.get("reason") == "Unschedulable":
                out.append(pod)
        return [pod for pod in out if not self.ignored(pod)]

    def scale_up(
        self,
        pools: dict[str, NodePool],
        by_pool: dict[str, list[Obj]],
        settings: settings_mod.Settings,
        busy: Callable[[], set[str]],
    ) -> None:
        # Pending pods by the pools they fit: a plan's pools all fit its pods (they carry its label).
        wanted: dict[tuple[str, ...], int] = defaultdict(int)
        for pod in self._pending_pods():
            fitting = tuple(
                p.name for p in pools.values() if p.autoscaling and not p.queued_provisioning and fits(pod, p)
            )
            if fitting:
                wanted[fitting] += 1
            if fitting and not any(self._can_take(pools[name], by_pool, settings, busy) for name in fitting):
                self._not_triggered(pod, self._reasons(pod, pools, by_pool, settings))
        added: dict[str, int] = defaultdict(int)
        for names, pods in wanted.items():
            out = [name for name in names if name in settings.stockout]
            if out:
                self.ctx.log(
                    f"pool(s) {', '.join(out)}: {pods} pod(s) pending; {len(out)} in backoff after failed scale-up "
                    "(simulated stockout, ZONE_RESOURCE_POOL_EXHAUSTED)"
                )
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
                    self.nodes.add_slice(pool, pool.hosts_per_slice, f"{pods} pending pod(s)")
                    added[name] += pool.hosts_per_slice
                    needed -= pool.hosts_per_slice

    def _can_take(
        self,
        pool: NodePool,
        by_pool: dict[str, list[Obj]],
        settings: settings_mod.Settings,
        busy: Callable[[], set[str]],
    ) -> bool:
        """Whether a pool the pod fits can still run it: a node that runs nothing yet, or room to grow."""
        if any(node["metadata"]["name"] not in busy() for node in by_pool.get(pool.name, [])):
            return True
        return pool.name not in settings.stockout and not _at_max(pool, by_pool)

    def _reasons(
        self, pod: Obj, pools: dict[str, NodePool], by_pool: dict[str, list[Obj]], settings: settings_mod.Settings
    ) -> str:
        """Why no node group can take the pod, one reason per autoscaled pool, counted and joined as the cluster
        autoscaler's ReasonsMessage does (kubernetes/autoscaler cluster-autoscaler/processors/status: "%d %s",
        sorted, ", "). The texts: the scheduler's predicate failures for a pool rejected by the pod
        (NodeAffinity "node(s) didn't match Pod's node affinity/selector", TaintToleration "node(s) had untolerated
        taint {key: value}", NodeResourcesFit "Insufficient <resource>"), and the skipped reasons of
        core/scaleup/orchestrator/skippedreasons.go for one it cannot grow ("in backoff after failed scale-up",
        "max node group size reached")."""
        spec = pod["spec"]
        counted: dict[str, int] = defaultdict(int)
        for pool in pools.values():
            if not pool.autoscaling or pool.queued_provisioning:
                continue
            untolerated = [
                t for t in pool.node_taints() if t.get("effect") != "PreferNoSchedule"
                and not tolerates(spec.get("tolerations") or [], [t])
            ]  # fmt: skip
            if not pool.matches(spec.get("nodeSelector") or {}):
                reason = "node(s) didn't match Pod's node affinity/selector"
            elif untolerated:
                reason = f"node(s) had untolerated taint {{{untolerated[0]['key']}: {untolerated[0].get('value', '')}}}"
            elif not fits(pod, pool):
                reason = f"Insufficient {pool.machine.accelerator_resource or 'cpu'}"
            elif pool.name in settings.stockout:
                reason = "in backoff after failed scale-up"
            elif _at_max(pool, by_pool):
                reason = "max node group size reached"
            else:
                continue
            counted[reason] += 1
        return ", ".join(sorted(f"{count} {reason}" for reason, count in counted.items()))

    def _not_triggered(self, pod: Obj, reasons: str) -> None:
        """The NotTriggerScaleUp Event on a pod no pool could take (once per pod; the module docstring's sources)."""
        meta = pod["metadata"]
        key = str(meta.get("uid") or f"{meta['namespace']}/{meta['name']}")
        if key in self.told_not_triggered:
            return
        self.told_not_triggered.add(key)
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        try:
            self.ctx.kube.create(
                f"/api/v1/namespaces/{meta['namespace']}/events",
                {
                    "metadata": {"generateName": f"{meta['name']}.", "namespace": meta["namespace"]},
                    "involvedObject": {"kind": "Pod", "apiVersion": "v1", "namespace": meta["namespace"],
                                       "name": meta["name"], "uid": meta.get("uid", "")},
                    "type": "Normal",
                    "reason": "NotTriggerScaleUp",
                    "message": f"Pod didn't trigger scale-up: {reasons}",
                    "source": {"component": "cluster-autoscaler"},
                    "firstTimestamp": stamp,
                    "lastTimestamp": stamp,
                    "count": 1,
                },
            )  # fmt: skip
        except KubeError as exc:  # an Event is best effort, as a recorder's is
            self.ctx.log(f"could not record NotTriggerScaleUp on pod {meta['name']}: {exc}")

    def scale_down(
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
                    self.nodes.not_idle(slice_nodes)
                    continue
                since = self.nodes.idle_from(slice_nodes, now)
                # GKE never scales an autoscaled pool below its minimum.
                if now - since >= settings.scale_down_after_seconds and remaining - len(slice_nodes) >= pool.min_nodes:
                    for n in slice_nodes:
                        self.nodes.delete(n, f"idle for {settings.scale_down_after_seconds:.0f} s")
                    remaining -= len(slice_nodes)
