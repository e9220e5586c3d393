"""NVIDIA GPU machine types on GKE (A3 H100/H200, A4 B200).

A GPU "slice" is one VM: the machine type fixes the GPU count, there is no ICI topology, and GKE
scales the node pool one node at a time. Label values come from GKE's "About GPUs in GKE" /
"Run GPUs in GKE Standard node pools" pages, vCPUs and memory per VM from Compute Engine's
accelerator-optimized machine family page, peak compute per GPU from NVIDIA's data sheets; the URL
is kept on every entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field

RESOURCE = "nvidia.com/gpu"
ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"

GKE_GPUS_URL = "https://cloud.google.com/kubernetes-engine/docs/how-to/gpus"
GCE_ACCELERATOR_MACHINES_URL = "https://cloud.google.com/compute/docs/accelerator-optimized-machines"
#: NVIDIA's data sheets give bf16 Tensor Core TFLOP/s with 2:4 sparsity; dense is half of it.
H100_URL = "https://www.nvidia.com/en-us/data-center/h100/"
H200_URL = "https://www.nvidia.com/en-us/data-center/h200/"
B200_URL = "https://www.nvidia.com/en-us/data-center/hgx/"


@dataclass(frozen=True)
class GpuMachine:
    """One accelerator-optimized machine type and the GPUs attached to each VM."""

    #: Family as Google names it: 'a3', 'a3-mega', 'a3-ultra', 'a4'.
    family: str
    machine_type: str
    #: Value of the node label cloud.google.com/gke-accelerator.
    gke_accelerator: str
    #: Ray's accelerator_type for ScalingConfig (e.g. 'H100').
    ray_accelerator_type: str
    gpus_per_vm: int
    #: Whether GKE offers flex-start / queued provisioning (DWS) for this machine type.
    flex_start: bool
    doc_url: str
    #: vCPUs and memory (GB of 2^30 bytes, Kubernetes ``Gi``) of one VM, from ``shape_url``.
    vcpus: int
    memory_gib: int
    shape_url: str
    #: Peak dense bf16 TFLOP/s of one GPU (the denominator of MFU), from ``peak_tflops_url``.
    peak_tflops: float
    peak_tflops_url: str
    chips_per_vm: int = field(init=False)
    chips_per_slice: int = field(init=False)
    hosts_per_slice: int = field(init=False)
    nodes_per_slice: int = field(init=False)
    multi_host: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "chips_per_vm", self.gpus_per_vm)
        object.__setattr__(self, "chips_per_slice", self.gpus_per_vm)
        object.__setattr__(self, "hosts_per_slice", 1)
        object.__setattr__(self, "nodes_per_slice", 1)
        object.__setattr__(self, "multi_host", False)

    @property
    def node_selector(self) -> dict[str, str]:
        return {ACCELERATOR_LABEL: self.gke_accelerator}


def _machine(
    family: str,
    machine_type: str,
    label: str,
    model: str,
    gpus: int,
    shape: tuple[int, int],
    peak: tuple[float, str],
    doc_url: str = GKE_GPUS_URL,
) -> GpuMachine:
    """One entry: ``shape`` is (vCPUs, memory GiB) per VM, ``peak`` (dense bf16 TFLOP/s per GPU, its URL)."""
    return GpuMachine(
        family, machine_type, label, model, gpus, True, doc_url,
        vcpus=shape[0], memory_gib=shape[1], shape_url=GCE_ACCELERATOR_MACHINES_URL,
        peak_tflops=peak[0], peak_tflops_url=peak[1],
    )  # fmt: skip


_H100 = (989.0, H100_URL)
#: The H200 has the H100's compute with more and faster memory.
_H200 = (989.0, H200_URL)
_B200 = (2250.0, B200_URL)

MACHINES: tuple[GpuMachine, ...] = (
    _machine("a3", "a3-highgpu-1g", "nvidia-h100-80gb", "H100", 1, (26, 234), _H100),
    _machine("a3", "a3-highgpu-2g", "nvidia-h100-80gb", "H100", 2, (52, 468), _H100),
    _machine("a3", "a3-highgpu-4g", "nvidia-h100-80gb", "H100", 4, (104, 936), _H100),
    _machine("a3", "a3-highgpu-8g", "nvidia-h100-80gb", "H100", 8, (208, 1872), _H100),
    _machine("a3-mega", "a3-megagpu-8g", "nvidia-h100-mega-80gb", "H100", 8, (208, 1872), _H100),
    _machine("a3-ultra", "a3-ultragpu-8g", "nvidia-h200-141gb", "H200", 8, (224, 2952), _H200),
    _machine("a4", "a4-highgpu-8g", "nvidia-b200", "B200", 8, (224, 3968), _B200, GCE_ACCELERATOR_MACHINES_URL),
)


def find_machine(name: str) -> GpuMachine | None:
    """The GPU machine called ``name``, or None when it is not a catalog GPU machine type."""
    for machine in MACHINES:
        if machine.machine_type == name:
            return machine
    return None
