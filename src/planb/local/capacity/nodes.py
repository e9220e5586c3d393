"""The nodes reconciler: the KWOK Node objects the capacity simulator makes for a pool's slices.

A node carries the labels and taints GKE puts on a node of its pool (planb.local.capacity.pools derives
them from the pool), KWOK's annotation that makes KWOK run it, the whole machine's capacity from the
catalog, and planb's own marks: ``planb.dev/capacity-simulator`` (the simulator manages it),
``planb.dev/slice`` (the nodes made together as one slice) and, for a queued-provisioning request's
nodes, ``planb.dev/provisioning-request`` with GKE's resize request label. A slice's nodes are named
``gke-<cluster>-<pool>-<slice id>-<i>``, cut to 63 characters.

`Nodes` makes and removes them for every reconciler, removes the nodes of pools that are gone, and keeps
fixed-size pools at their size and autoscaled pools at their minimum.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from planb.kube import Obj
from planb.local.capacity import dws
from planb.local.capacity import machines as machines_mod
from planb.local.capacity import webhook as webhook_mod
from planb.local.capacity.context import Context
from planb.local.capacity.pools import NodePool

MANAGED = "planb.dev/capacity-simulator"
SLICE = "planb.dev/slice"
REQUEST = "planb.dev/provisioning-request"


def node_body(pool: NodePool, name: str, slice_id: str, request: str | None) -> dict[str, Any]:
    """A Node of `pool` in slice `slice_id`; `request` ("namespace/name"): the queued request it is made for."""
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
        labels[webhook_mod.REQUEST_LABEL] = dws.resize_request_name(request)
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


class Nodes:
    """The nodes reconciler: makes and removes the simulator's nodes, and keeps fixed-size pools at their size and
    autoscaled pools at their minimum. Every other reconciler makes and removes nodes through it."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        #: Per node of an autoscaled pool: since when it runs no pod (planb.local.capacity.autoscaler's scale-down
        #: reads and writes it through `idle_from` and `not_idle`; a node removed here is forgotten).
        self.idle_since: dict[str, float] = {}

    def add_slice(self, pool: NodePool, count: int, reason: str, request: str | None = None) -> list[str]:
        seed = f"{pool.name}/{request or ''}/{time.time_ns()}"
        slice_id = hashlib.sha1(seed.encode()).hexdigest()[:8]
        names = []
        for i in range(count):
            name = f"gke-{pool.cluster or 'local'}-{pool.name}-{slice_id}-{i}"[:63].rstrip("-")
            self.ctx.nodes_written = True
            self.ctx.kube.create("/api/v1/nodes", node_body(pool, name, slice_id, request))
            names.append(name)
        self.ctx.log(f"pool {pool.name}: +{count} node(s) ({reason}): {', '.join(names)}")
        return names

    def delete(self, name: str, reason: str) -> None:
        self.ctx.nodes_written = True
        if self.ctx.kube.delete(f"/api/v1/nodes/{name}"):
            self.ctx.log(f"node {name} removed ({reason})")
        self.idle_since.pop(name, None)

    def idle_from(self, names: list[str], now: float) -> float:
        """Since when none of these nodes runs a pod (from `now` for a node not known idle yet)."""
        return min(self.idle_since.setdefault(n, now) for n in names)

    def not_idle(self, names: list[str]) -> None:
        """These nodes run a pod: their idle time starts again."""
        for n in names:
            self.idle_since.pop(n, None)

    def remove_gone(self, pools: dict[str, NodePool], by_pool: dict[str, list[Obj]], broken: dict[str, str]) -> None:
        """Nodes of pools that no longer exist go (not those of a pool the catalog cannot describe)."""
        for pool_name, pool_nodes in by_pool.items():
            if pool_name not in pools and pool_name not in broken:
                for node in pool_nodes:
                    self.delete(node["metadata"]["name"], f"pool {pool_name} is gone")

    def size(self, pools: dict[str, NodePool], by_pool: dict[str, list[Obj]]) -> None:
        """Fixed-size pools (autoscaling off) get their node count, autoscaled pools at least their minimum."""
        for pool in pools.values():
            if not pool.autoscaling and not pool.queued_provisioning:
                self._fixed_size(pool, by_pool.get(pool.name, []))
            elif pool.autoscaling and not pool.queued_provisioning:
                missing = pool.min_nodes - len(by_pool.get(pool.name, []))
                for _ in range(-(-max(0, missing) // pool.hosts_per_slice)):
                    self.add_slice(pool, pool.hosts_per_slice, f"the pool's minimum of {pool.min_nodes} node(s)")

    def _fixed_size(self, pool: NodePool, nodes: list[Obj]) -> None:
        missing = pool.initial_nodes - len(nodes)
        for _ in range(max(0, missing)):
            self.add_slice(pool, 1, "fixed-size pool")
        for node in nodes[pool.initial_nodes :]:
            self.delete(node["metadata"]["name"], "fixed-size pool shrank")
