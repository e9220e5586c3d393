"""Spot node pools in the capacity simulator: GKE's Spot node label, and Spot preemption.

* A pool whose node config has ``spot: true`` (GKE v1 NodeConfig) is a Spot pool. GKE labels its nodes
  ``cloud.google.com/gke-spot=true``, which workloads select to run on Spot VMs
  (https://cloud.google.com/kubernetes-engine/docs/how-to/spot-vms). Otherwise it scales like an
  on-demand pool: whole slices for pending pods that fit it, down after the idle time.
* Preemption (``planb local capacity set --preempt POOL``): Compute Engine reclaims the pool's VMs. GKE gets
  the preemption notice and the VM terminates 30 seconds after it; graceful node shutdown has the
  kubelet give non-system pods about 15 seconds of that, best effort, and the rest to system pods
  (https://cloud.google.com/kubernetes-engine/docs/concepts/spot-vms, "Termination and graceful
  shutdown of Spot VMs"); the kubelet gives the pods it terminated the phase Failed
  (https://kubernetes.io/docs/concepts/cluster-administration/node-shutdown/). So: at the notice the
  simulator cordons each node of the pool and stamps it with the notice's time; ``spot_notice_seconds``
  later (GKE: 30, the VM's end; a setting, so tests need not wait) each pod on it gets phase Failed with the
  kubelet's shutdown reason and message, the node is deleted, and so are its pods: Kubernetes' pod
  garbage collector deletes pods bound to a node that no longer exists
  (https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-garbage-collection), which
  the simulator does at once instead of after the collector's delay. KubeRay then makes new worker
  pods, for which the pool scales up again. (Kueue keeps a RayJob admitted meanwhile: docs/capacity-ladder.md,
  "Spot preemption".)

The notice is GKE's own per pool (``notice_seconds``): 30 seconds, or 120 for a Spot pool whose node system config
extends the shutdown (``kubeletConfig.shutdownGracePeriodSeconds: 120``) on a cluster whose control plane runs
1.35.0-gke.1171000 or later (planb.catalog.versions.spot_shutdown_seconds, which cites Google's pages). The setting
``spot_notice_seconds``, when given, replaces it for every pool, so tests need not wait.

Where this differs from GKE: preemption is a switch, not Compute Engine's need for the capacity,
the pods end with the VM instead of within the kubelet's 15 seconds, and the pool gets its VMs back
as soon as pods are pending (unless the pool is in ``stockout``).
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable
from typing import Any

from planb.catalog.versions import SPOT_SHUTDOWN_SECONDS, spot_shutdown_seconds
from planb.kube import Kube, KubeError, Obj

#: The node label GKE puts on every node of a Spot pool.
SPOT_LABEL = "cloud.google.com/gke-spot"
#: GKE: by default a Spot VM terminates this long after its preemption notice (its non-system pods get about 15 s of
#: it); a pool may extend it (``notice_seconds``).
GKE_NOTICE_SECONDS = float(SPOT_SHUTDOWN_SECONDS)
#: When the preemption notice reached a node (ISO time; set by the simulator).
NOTICE_ANNOTATION = "planb.dev/spot-preemption-notice"
#: What the kubelet's graceful node shutdown writes on the pods it terminated.
SHUTDOWN_REASON = "Terminated"
SHUTDOWN_MESSAGE = "Pod was terminated in response to imminent node shutdown."


def is_spot(body: dict[str, Any]) -> bool:
    """Whether a GKE v1 NodePool body is a Spot pool."""
    return bool((body.get("config") or {}).get("spot", False))


def notice_seconds(body: dict[str, Any]) -> float:
    """Seconds GKE gives a node of this GKE v1 NodePool body between a preemption notice and its end: the pool's
    kubeletConfig on its cluster's control plane (``clusterMasterVersion``, which planb.local.capacity.gke_api adds)."""
    config = body.get("config") or {}
    return float(spot_shutdown_seconds(config.get("kubeletConfig"), body.get("clusterMasterVersion", ""))[0])


def _iso(when: float) -> str:
    """RFC 3339 with microseconds: a stamp cut to the second made the notice period up to a second short (a node
    noticed at 10.9 s went at 40 s, not 40.9 s)."""
    return datetime.datetime.fromtimestamp(when, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse(value: object) -> float | None:
    for layout in ("%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%M:%SZ"):  # a stamp of an older simulator has no fraction
        try:
            return datetime.datetime.strptime(str(value), layout).replace(tzinfo=datetime.UTC).timestamp()
        except ValueError:
            continue
    return None


def noticed_at(node: Obj) -> float | None:
    """When the node got its preemption notice, or None."""
    return _parse(((node.get("metadata") or {}).get("annotations") or {}).get(NOTICE_ANNOTATION))


class Preemption:
    """Spot preemption: notices to the pools asked for, then the nodes go after the notice period."""

    def __init__(self, kube: Kube, log: Callable[[str], None], delete_node: Callable[[str, str], None]) -> None:
        self.kube = kube
        self.log = log
        self.delete_node = delete_node

    def notify(self, pool: str, nodes: list[Obj], now: float | None = None) -> list[str]:
        """The preemption notice to every node of the pool (cordoned, stamped); returns their names."""
        now = time.time() if now is None else now
        names = []
        for node in nodes:
            if noticed_at(node) is not None:
                continue
            name = node["metadata"]["name"]
            self.kube.merge_patch(
                f"/api/v1/nodes/{name}",
                {"metadata": {"annotations": {NOTICE_ANNOTATION: _iso(now)}}, "spec": {"unschedulable": True}},
            )
            names.append(name)
        if names:
            self.log(f"pool {pool}: Spot preemption notice to {len(names)} node(s): {', '.join(names)}")
        return names

    def reclaim(self, nodes: list[Obj], notice_seconds: float, now: float | None = None) -> tuple[list[str], float]:
        """Nodes whose notice period is over go, with their pods; returns them and the next deadline (inf if none)."""
        now = time.time() if now is None else now
        due = []
        deadline = float("inf")
        for node in nodes:
            at = noticed_at(node)
            if at is None:
                continue
            if now >= at + notice_seconds:
                due.append(node["metadata"]["name"])
            else:
                deadline = min(deadline, at + notice_seconds)
        if not due:
            return due, deadline
        pods = [p for p in self.kube.items("/api/v1/pods") if p["spec"].get("nodeName") in set(due)]
        for pod in pods:
            self._terminate(pod)
        for name in due:
            self.delete_node(name, f"Spot VM preempted ({notice_seconds:.0f} s after the notice)")
        for pod in pods:
            meta = pod["metadata"]
            try:
                # A pod in phase Failed is deleted at once (no grace period: no kubelet to wait for).
                self.kube.request(
                    "DELETE",
                    f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}",
                    {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0},
                )
            except KubeError as exc:
                if exc.status == 404:
                    continue
                self.log(f"pod {meta['namespace']}/{meta['name']}: not deleted after preemption: {exc}")
        if pods:
            self.log(f"Spot preemption: {len(pods)} pod(s) Failed ({SHUTDOWN_REASON}) and removed with their node(s)")
        return due, deadline

    def _terminate(self, pod: Obj) -> None:
        """The pod's phase as the kubelet's graceful node shutdown leaves it."""
        meta = pod["metadata"]
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return
        try:
            self.kube.merge_patch(
                f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/status",
                {"status": {"phase": "Failed", "reason": SHUTDOWN_REASON, "message": SHUTDOWN_MESSAGE}},
            )
        except KubeError as exc:
            self.log(f"pod {meta['namespace']}/{meta['name']}: phase not set after preemption: {exc}")
