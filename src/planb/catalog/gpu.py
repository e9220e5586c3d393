"""NVIDIA GPU machine types on GKE (A3 H100/H200, A4 B200).

A GPU "slice" is one VM: the machine type fixes the GPU count, there is no ICI topology, and GKE
scales the node pool one node at a time. Label values come from GKE's "About GPUs in GKE" /
"Run GPUs in GKE Standard node pools" pages; the URL is kept on every entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field

RESOURCE = "nvidia.com/gpu"
ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"

GKE_GPUS_URL = "https://cloud.google.com/kubernetes-engine/docs/how-to/gpus"
GCE_ACCELERATOR_MACHINES_URL = "https://cloud.google.com/compute/docs/accelerator-optimized-machines"


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


MACHINES: tuple[GpuMachine, ...] = (
    GpuMachine("a3", "a3-highgpu-1g", "nvidia-h100-80gb", "H100", 1, True, GKE_GPUS_URL),
    GpuMachine("a3", "a3-highgpu-2g", "nvidia-h100-80gb", "H100", 2, True, GKE_GPUS_URL),
    GpuMachine("a3", "a3-highgpu-4g", "nvidia-h100-80gb", "H100", 4, True, GKE_GPUS_URL),
    GpuMachine("a3", "a3-highgpu-8g", "nvidia-h100-80gb", "H100", 8, True, GKE_GPUS_URL),
    GpuMachine("a3-mega", "a3-megagpu-8g", "nvidia-h100-mega-80gb", "H100", 8, True, GKE_GPUS_URL),
    GpuMachine("a3-ultra", "a3-ultragpu-8g", "nvidia-h200-141gb", "H200", 8, True, GKE_GPUS_URL),
    GpuMachine("a4", "a4-highgpu-8g", "nvidia-b200", "B200", 8, True, GCE_ACCELERATOR_MACHINES_URL),
)
