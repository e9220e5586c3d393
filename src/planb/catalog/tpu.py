"""TPU generations on GKE and the slices they form.

Facts come from GKE's "Plan TPUs in GKE" page (topology / machine type / VM count tables), each
generation's Cloud TPU page (peak compute per chip) and Compute Engine's TPU machine types page
(vCPUs and memory per VM); the URL is kept on every entry. A *slice* here is one TPU slice node
pool's worth of VMs: GKE scales a multi-host slice atomically (0 or all of its VMs).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from planb.catalog.errors import FlexStartError, MachineTypeError, TopologyError
from planb.catalog.pool_layout import flex_start_refusal

RESOURCE = "google.com/tpu"
ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"

PLAN_TPUS_URL = "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus"
#: Compute Engine's TPU machine types (TPU7x, v6e, v5p): vCPUs and memory per VM.
GCE_TPU_MACHINES_URL = "https://cloud.google.com/compute/docs/tpus/tpu-machines"
#: GKE's cluster autoscaler's machine-type table (GoogleCloudPlatform/cluster-autoscaler, the one GKE runs, at 7d25050):
#: ``NewMachineTypeInfo(name, vCPUs, memory in GiB)`` per machine type, the shape it gives a node of a pool scaled up
#: from zero. Every TPU machine type of this catalog has the vCPUs and memory it gives there
#: (tests/unit/catalog/test_tpu_shapes.py holds them to it); the two below cite it as their source.
_GKE_CA_MACHINES = (
    "https://github.com/GoogleCloudPlatform/cluster-autoscaler/blob/7d250507339b3a7583b380349f217ea191ff15ff/"
    "pkg/cloudprovider/gke/machinetypes/deprecated_machine_types_config.go"
)
#: ct6e-standard-8t: 180 vCPUs (one thread per core, ``withThreadsPerCoreOverride(1)``), 1440 GiB.
GKE_CA_CT6E_8T_URL = _GKE_CA_MACHINES + "#L1575-L1577"
#: tpu7x-standard-4t: 224 vCPUs, 992 GiB. Cloud TPU's TPU7x page (https://cloud.google.com/tpu/docs/tpu7x) gives the
#: 4-chip VM "960" GB of RAM, which the table gives another family's tpu7-standard-4t; a node's size on GKE is the
#: autoscaler's, so the catalog follows the table.
GKE_CA_TPU7X_4T_URL = _GKE_CA_MACHINES + "#L2768"
#: GKE's TPU flex-start page: which TPU generations and GKE versions offer flex-start.
TPU_FLEX_START_URL = "https://cloud.google.com/kubernetes-engine/docs/how-to/tpu-flex-start"
#: GKE's Ironwood (TPU7x) page: versions, the workload policy instead of --tpu-topology.
IRONWOOD_URL = "https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood"

_TOPOLOGY_RE = re.compile(r"^[1-9][0-9]*(x[1-9][0-9]*){1,2}$")


def topology_chips(topology: str) -> int:
    """Number of chips in a topology string such as '4x4' or '2x2x2'."""
    if not _TOPOLOGY_RE.fullmatch(topology):
        raise TopologyError(
            f"topology {topology!r} is malformed: write 2 or 3 positive numbers joined by 'x', e.g. '4x4' or '2x2x2'"
        )
    return math.prod(int(part) for part in topology.split("x"))


@dataclass(frozen=True)
class TpuMachineType:
    """A GKE machine type of a TPU generation, the slice shapes it can form and its VM's shape."""

    name: str
    chips_per_vm: int
    topologies: tuple[str, ...]
    #: vCPUs and memory (GB of 2^30 bytes, Kubernetes ``Gi``) of one VM, from ``shape_url``.
    vcpus: int
    memory_gib: int
    shape_url: str


@dataclass(frozen=True)
class TpuGeneration:
    """One TPU generation as GKE offers it."""

    #: Short name used in profile names: 'v6e', 'tpu7x'.
    name: str
    #: Prefix of profile names: 'tpu-v6e' (profiles are '<prefix>-<topology>').
    profile_prefix: str
    #: Value of the node label cloud.google.com/gke-tpu-accelerator.
    gke_accelerator: str
    #: Ray's accelerator_type for ScalingConfig (e.g. 'TPU-V6E').
    ray_accelerator_type: str
    #: 2 (2D torus) or 3 (3D torus): the number of 'x'-separated parts of a topology.
    dimensions: int
    machine_types: tuple[TpuMachineType, ...]
    #: Whether GKE offers flex-start / queued provisioning (DWS) for this generation.
    flex_start: bool
    #: Multi-host node pools take --tpu-topology, except TPU7x which takes a workload policy
    #: (--placement-policy) carrying the topology.
    uses_placement_policy: bool
    #: Peak dense bf16 TFLOP/s of one chip (the denominator of MFU), from ``peak_tflops_url``.
    peak_tflops: float
    peak_tflops_url: str
    doc_url: str
    #: Why GKE offers no flex-start here (empty when it does), and the page that says so.
    flex_start_note: str = ""
    flex_start_url: str = ""

    @property
    def topologies(self) -> tuple[str, ...]:
        """Every topology any machine type of this generation forms, smallest first."""
        seen: dict[str, None] = {}
        for machine in self.machine_types:
            for topology in machine.topologies:
                seen.setdefault(topology, None)
        return tuple(sorted(seen, key=lambda t: (topology_chips(t), t)))

    def machine(self, name: str) -> TpuMachineType:
        for machine in self.machine_types:
            if machine.name == name:
                return machine
        valid = ", ".join(m.name for m in self.machine_types)
        raise MachineTypeError(
            f"machine type {name!r} is not a TPU {self.name} machine type; valid machine types: {valid}"
        )

    def nearest_topology(self, topology: str, chips: int | None) -> str:
        """The valid topology closest in chip count (ties: the smaller one)."""
        if chips is None:
            return self.topologies[0]
        return min(self.topologies, key=lambda t: (abs(topology_chips(t) - chips), topology_chips(t)))

    def check_topology(self, topology: str) -> None:
        """Raise TopologyError unless the topology is offered for this generation."""
        valid = ", ".join(self.topologies)
        parts = topology.split("x")
        chips: int | None = None
        if _TOPOLOGY_RE.fullmatch(topology):
            chips = topology_chips(topology)
        shape = f"{self.dimensions}D" + (" (AxBxC)" if self.dimensions == 3 else " (AxB)")
        if chips is None:
            raise TopologyError(
                f"topology {topology!r} is malformed: TPU {self.name} takes {shape} topologies "
                f"such as {self.topologies[-1]!r}; valid topologies: {valid}"
            )
        if len(parts) != self.dimensions:
            raise TopologyError(
                f"topology {topology!r} is not valid for TPU {self.name}, which takes {shape} topologies: "
                f"nearest valid topology {self.nearest_topology(topology, chips)!r}; valid topologies: {valid}"
            )
        if topology not in self.topologies:
            raise TopologyError(
                f"topology {topology!r} ({chips} chips) is not offered for TPU {self.name}: "
                f"nearest valid topology {self.nearest_topology(topology, chips)!r}; valid topologies: {valid}"
            )

    def default_machine(self, topology: str) -> TpuMachineType:
        """GKE's usual machine type for a topology: one VM holding the whole slice if there is one,
        else the machine type with the most chips per VM that forms it."""
        self.check_topology(topology)
        chips = topology_chips(topology)
        candidates = [m for m in self.machine_types if topology in m.topologies]
        exact = [m for m in candidates if m.chips_per_vm == chips]
        if exact:
            return exact[0]
        return max(candidates, key=lambda m: m.chips_per_vm)

    def check_flex_start(self) -> None:
        if not self.flex_start:
            offered = [g.name for g in GENERATIONS if g.flex_start]
            raise FlexStartError(flex_start_refusal(self.name, self.flex_start_note, self.flex_start_url, offered))


@dataclass(frozen=True)
class TpuSlice:
    """One TPU slice: a generation, a machine type and a topology; derived sizes computed once."""

    generation: TpuGeneration
    machine_type: str
    topology: str
    chips_per_vm: int = field(init=False)
    chips_per_slice: int = field(init=False)
    hosts_per_slice: int = field(init=False)
    nodes_per_slice: int = field(init=False)
    multi_host: bool = field(init=False)

    def __post_init__(self) -> None:
        self.generation.check_topology(self.topology)
        machine = self.generation.machine(self.machine_type)
        if self.topology not in machine.topologies:
            formed = ", ".join(machine.topologies)
            raise TopologyError(
                f"topology {self.topology!r} cannot be formed from {self.machine_type} "
                f"(TPU {self.generation.name}); {self.machine_type} forms: {formed}"
            )
        chips = topology_chips(self.topology)
        hosts = max(1, chips // machine.chips_per_vm)
        object.__setattr__(self, "chips_per_vm", min(machine.chips_per_vm, chips))
        object.__setattr__(self, "chips_per_slice", chips)
        object.__setattr__(self, "hosts_per_slice", hosts)
        # On GKE each TPU VM is one Kubernetes node.
        object.__setattr__(self, "nodes_per_slice", hosts)
        object.__setattr__(self, "multi_host", hosts > 1)

    @property
    def node_selector(self) -> dict[str, str]:
        return {ACCELERATOR_LABEL: self.generation.gke_accelerator, TOPOLOGY_LABEL: self.topology}


_2D_4T = ("2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16")
_3D_4T = ("2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "8x8x8", "8x8x16", "8x16x16")

V4 = TpuGeneration(
    name="v4",
    profile_prefix="tpu-v4",
    gke_accelerator="tpu-v4-podslice",
    ray_accelerator_type="TPU-V4",
    dimensions=3,
    machine_types=(TpuMachineType("ct4p-hightpu-4t", 4, _3D_4T, 240, 407, PLAN_TPUS_URL),),
    flex_start=False,
    uses_placement_policy=False,
    peak_tflops=275.0,
    peak_tflops_url="https://cloud.google.com/tpu/docs/v4",
    doc_url=PLAN_TPUS_URL,
    flex_start_note="GKE's TPU flex-start excludes TPU v3 and v4",
    flex_start_url=TPU_FLEX_START_URL,
)
V5E = TpuGeneration(
    name="v5e",
    profile_prefix="tpu-v5e",
    gke_accelerator="tpu-v5-lite-podslice",
    ray_accelerator_type="TPU-V5LITEPOD",
    dimensions=2,
    machine_types=(
        TpuMachineType("ct5lp-hightpu-1t", 1, ("1x1",), 24, 48, PLAN_TPUS_URL),
        TpuMachineType("ct5lp-hightpu-4t", 4, _2D_4T, 112, 192, PLAN_TPUS_URL),
        TpuMachineType("ct5lp-hightpu-8t", 8, ("2x4",), 224, 384, PLAN_TPUS_URL),
    ),
    flex_start=True,
    uses_placement_policy=False,
    peak_tflops=197.0,
    peak_tflops_url="https://cloud.google.com/tpu/docs/v5e",
    doc_url=PLAN_TPUS_URL,
)
V5P = TpuGeneration(
    name="v5p",
    profile_prefix="tpu-v5p",
    gke_accelerator="tpu-v5p-slice",
    ray_accelerator_type="TPU-V5P",
    dimensions=3,
    machine_types=(TpuMachineType("ct5p-hightpu-4t", 4, (*_3D_4T, "16x16x16"), 208, 448, GCE_TPU_MACHINES_URL),),
    flex_start=True,
    uses_placement_policy=False,
    peak_tflops=459.0,
    peak_tflops_url="https://cloud.google.com/tpu/docs/v5p",
    doc_url=PLAN_TPUS_URL,
)
V6E = TpuGeneration(
    name="v6e",
    profile_prefix="tpu-v6e",
    gke_accelerator="tpu-v6e-slice",
    ray_accelerator_type="TPU-V6E",
    dimensions=2,
    machine_types=(
        TpuMachineType("ct6e-standard-1t", 1, ("1x1",), 44, 176, GCE_TPU_MACHINES_URL),
        TpuMachineType("ct6e-standard-4t", 4, _2D_4T, 180, 720, GCE_TPU_MACHINES_URL),
        # The 8-chip VM is a whole v6e host: twice the 4-chip VM's memory, but the same 180 vCPUs (one thread per
        # core instead of two), as GKE's autoscaler gives its nodes.
        TpuMachineType("ct6e-standard-8t", 8, ("2x4",), 180, 1440, GKE_CA_CT6E_8T_URL),
    ),
    flex_start=True,
    uses_placement_policy=False,
    peak_tflops=918.0,
    peak_tflops_url="https://cloud.google.com/tpu/docs/v6e",
    doc_url="https://cloud.google.com/tpu/docs/v6e",
)
# TPU7x (Ironwood) has one machine type: "Each Ironwood (TPU7x) virtual machine (VM) contains four
# chips" (https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood), and the TPU7x
# page lists only the 4-chip VM (https://cloud.google.com/tpu/docs/tpu7x). An earlier catalog also
# listed tpu7x-standard-1t (1x1x1); Google's GKE documentation does not, so it is not offered here.
TPU7X = TpuGeneration(
    name="tpu7x",
    profile_prefix="tpu7x",
    gke_accelerator="tpu7x",
    ray_accelerator_type="TPU-V7X",
    dimensions=3,
    machine_types=(TpuMachineType("tpu7x-standard-4t", 4, _3D_4T, 224, 992, GKE_CA_TPU7X_4T_URL),),
    # GKE's documentation does not document flex-start or queued provisioning for TPU7x: neither the Ironwood
    # page nor GKE's flex-start and queued provisioning pages name it. Google's
    # cluster-toolkit ships a TPU7x DWS example, but that is a tool's example, not GKE's documentation, so
    # planb does not offer it until GKE documents it.
    flex_start=False,
    uses_placement_policy=True,
    peak_tflops=2307.0,
    peak_tflops_url="https://cloud.google.com/tpu/docs/tpu7x",
    doc_url=IRONWOOD_URL,
    flex_start_note="GKE does not document flex-start or queued provisioning for TPU7x",
    flex_start_url=IRONWOOD_URL,
)

GENERATIONS: tuple[TpuGeneration, ...] = (V4, V5E, V5P, V6E, TPU7X)


def find_machine(name: str) -> tuple[TpuGeneration, TpuMachineType] | None:
    """The generation and machine type called ``name``, or None when it is not a catalog TPU type."""
    for generation in GENERATIONS:
        for machine in generation.machine_types:
            if machine.name == name:
                return generation, machine
    return None
