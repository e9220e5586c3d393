"""Node pools as the capacity simulator sees them: GKE v1 NodePool bodies from the GKE API (capacity.gke_api).

GKE labels every node with its pool, machine type and accelerator, and taints accelerator and
queued-provisioning nodes; this module derives those from the pool the same way. A pool's machine
shape, accelerator label and hosts per slice come from the accelerator catalog; a pool the catalog
cannot describe (unknown machine type, topology its machine type does not form) is loaded as a
``BrokenPool`` carrying the catalog's error, so the simulator can say why it makes no nodes for it.
Sources: https://cloud.google.com/kubernetes-engine/docs/concepts/tpus (TPU node labels, the
``google.com/tpu`` taint), https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest
(queued provisioning, the ``cloud.google.com/gke-queued`` taint).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from planb.catalog import gpu, tpu
from planb.catalog.errors import CatalogError
from planb.local.capacity import spot as spot_mod
from planb.local.capacity.machines import MachineShape, machine

_TAINT_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule", "NO_EXECUTE": "NoExecute"}


@dataclass(frozen=True)
class NodePool:
    """What the simulator needs to know of one pool."""

    cluster: str
    name: str
    machine_type: str
    min_nodes: int
    max_nodes: int
    initial_nodes: int
    autoscaling: bool
    queued_provisioning: bool
    flex_start: bool
    tpu_topology: str | None
    #: The catalog's shape of ``machine_type``: the size of each node.
    machine: MachineShape
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[dict[str, str], ...] = ()
    hosts_per_slice: int = 1
    #: A Spot pool (config.spot): its nodes carry GKE's Spot label and can be preempted (planb.local.capacity.spot).
    spot: bool = False
    #: The pool's zone: its first ``locations`` entry, else its cluster's location ("" when neither is known).
    zone: str = ""
    #: Seconds GKE gives a Spot node between the preemption notice and its end: 30, or 120 when the pool's
    #: kubeletConfig extends it on a control plane that allows it (planb.catalog.versions.spot_shutdown_seconds).
    spot_notice_seconds: float = spot_mod.GKE_NOTICE_SECONDS

    def node_labels(self) -> dict[str, str]:
        """The labels GKE puts on a node of this pool."""
        out = dict(self.labels)
        out["cloud.google.com/gke-nodepool"] = self.name
        out["node.kubernetes.io/instance-type"] = self.machine_type
        out["cloud.google.com/machine-family"] = self.machine_type.split("-", 1)[0]
        out.update(accelerator_labels(self.machine_type, self.tpu_topology))
        if self.flex_start:
            # GKE's autoscaler labels a flex-start pool's nodes with both (GoogleCloudPlatform/cluster-autoscaler
            # at 7d250507, pkg/autoprovisioning/injection.go L1662-L1668, FlexStartGenerator).
            out["cloud.google.com/gke-flex-start"] = "true"
            out.setdefault("cloud.google.com/gke-provisioning", "flex-start")
        if self.queued_provisioning:
            out["cloud.google.com/gke-queued"] = "true"
        if self.spot:
            out[spot_mod.SPOT_LABEL] = "true"
        return out

    def node_taints(self) -> list[dict[str, str]]:
        """The taints GKE puts on a node of this pool (once each: the pool's config.taints may hold them already)."""
        out = [dict(t) for t in self.taints]
        resource = self.machine.accelerator_resource
        gke: list[dict[str, str]] = []
        if resource == tpu.RESOURCE:
            gke.append({"key": "google.com/tpu", "value": "present", "effect": "NoSchedule"})
        elif resource == gpu.RESOURCE:
            gke.append({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"})
        if self.queued_provisioning:
            gke.append({"key": "cloud.google.com/gke-queued", "value": "true", "effect": "NoSchedule"})
        for taint in gke:
            if not any(t["key"] == taint["key"] and t["effect"] == taint["effect"] for t in out):
                out.append(taint)
        return out

    def matches(self, selector: dict[str, str]) -> bool:
        """True if a pod with this nodeSelector could land on this pool's nodes."""
        labels = self.node_labels()
        return all(labels.get(k) == v for k, v in selector.items())


@dataclass(frozen=True)
class BrokenPool:
    """A pool the catalog cannot describe: the simulator makes no nodes for it and says why."""

    name: str
    machine_type: str
    error: CatalogError


def accelerator_labels(machine_type: str, topology: str | None) -> dict[str, str]:
    """The accelerator node labels GKE puts on a node of this machine type (none for a CPU machine)."""
    found = tpu.find_machine(machine_type)
    if found is not None:
        out = {tpu.ACCELERATOR_LABEL: found[0].gke_accelerator}
        if topology:
            out[tpu.TOPOLOGY_LABEL] = topology
        return out
    gpu_machine = gpu.find_machine(machine_type)
    if gpu_machine is not None:
        return {gpu.ACCELERATOR_LABEL: gpu_machine.gke_accelerator}
    return {}


def _hosts(machine_type: str, topology: str | None, workload_policy: bool = False, max_nodes: int = 1) -> int:
    """VMs (nodes) of one slice: the catalog's hosts per slice of the TPU machine type and topology.

    A TPU7x pool placed by a workload policy names no tpuTopology (the policy holds it, and GKE labels the pool
    with it); should neither say, a multi-host slice pool is exactly one slice, so its max is its hosts.
    """
    found = tpu.find_machine(machine_type)
    if found is not None and not topology and workload_policy:
        return max(1, max_nodes)
    if not topology or found is None:
        return 1
    return tpu.TpuSlice(found[0], machine_type, topology).hosts_per_slice


def from_gke(body: dict[str, Any]) -> NodePool:
    """Build from a GKE v1 NodePool body (``cluster``, where planb.local.capacity.gke_api adds it: the cluster's name).

    Raises the catalog's UnknownMachineTypeError for a machine type it does not hold and
    TopologyError for a topology the machine type does not form.
    """
    config = body.get("config", {})
    scaling = body.get("autoscaling", {})
    # GKE labels a TPU pool with its topology (config.labels) also when a workload policy placed it.
    topology = body.get("placementPolicy", {}).get("tpuTopology") or config.get("labels", {}).get(tpu.TOPOLOGY_LABEL)
    taints = tuple(
        {"key": t["key"], "value": t.get("value", ""), "effect": _TAINT_EFFECTS.get(t.get("effect", ""), "NoSchedule")}
        for t in config.get("taints", [])
    )
    max_nodes = int(scaling.get("totalMaxNodeCount") or scaling.get("maxNodeCount") or body.get("initialNodeCount", 0))
    min_nodes = int(scaling.get("totalMinNodeCount") or scaling.get("minNodeCount") or 0)
    machine_type = str(config.get("machineType", "e2-medium"))
    return NodePool(
        cluster=str(body.get("cluster", "")).rsplit("/", 1)[-1],
        name=body["name"],
        machine_type=machine_type,
        min_nodes=min_nodes,
        max_nodes=max_nodes,
        initial_nodes=int(body.get("initialNodeCount", 0)),
        autoscaling=bool(scaling.get("enabled", False)),
        queued_provisioning=bool(body.get("queuedProvisioning", {}).get("enabled", False)),
        flex_start=bool(config.get("flexStart", False)),
        tpu_topology=topology,
        machine=machine(machine_type),
        labels=dict(config.get("labels", {})),
        taints=taints,
        hosts_per_slice=_hosts(
            machine_type, topology, bool(body.get("placementPolicy", {}).get("policyName")), max_nodes
        ),
        spot=spot_mod.is_spot(body),
        zone=_zone(body),
        spot_notice_seconds=spot_mod.notice_seconds(body),
    )


def _zone(body: dict[str, Any]) -> str:
    """A pool's zone (NodePool.locations, else the cluster's location in its resource name)."""
    locations = body.get("locations") or []
    if locations:
        return str(locations[0])
    parts = str(body.get("cluster", "")).split("/")
    return parts[parts.index("locations") + 1] if "locations" in parts[:-1] else ""


def load(bodies: Iterable[dict[str, Any]]) -> tuple[list[NodePool], list[BrokenPool]]:
    """The pools of these GKE v1 bodies that are not being deleted, and those the catalog cannot describe."""
    good: list[NodePool] = []
    broken: list[BrokenPool] = []
    for body in bodies:
        if body.get("status", "RUNNING") == "STOPPING":
            continue
        try:
            good.append(from_gke(body))
        except CatalogError as exc:
            machine_type = str((body.get("config") or {}).get("machineType", "e2-medium"))
            broken.append(BrokenPool(str(body.get("name", "")), machine_type, exc))
    return good, broken
