"""Allocatable capacity of the GKE machine types the simulator makes nodes for.

vCPU and memory from Compute Engine's machine-type pages; accelerators per VM from GKE's
"About TPUs in GKE" and "GPUs on GKE" pages. The simulator reports these as node capacity;
GKE itself reserves some of it for the system, which the simulator does not model.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Machine:
    """What one VM of a machine type offers the scheduler."""

    cpu: int
    memory_gib: int
    accelerator_resource: str | None = None
    accelerators: int = 0


MACHINES: dict[str, Machine] = {
    # General purpose (the cluster's default pool). https://cloud.google.com/compute/docs/general-purpose-machines
    "n2-standard-8": Machine(8, 32),
    "n2-standard-16": Machine(16, 64),
    "e2-standard-4": Machine(4, 16),
    # TPU VMs. https://cloud.google.com/kubernetes-engine/docs/concepts/tpus
    "ct4p-hightpu-4t": Machine(240, 407, "google.com/tpu", 4),
    "ct5lp-hightpu-1t": Machine(24, 48, "google.com/tpu", 1),
    "ct5lp-hightpu-4t": Machine(112, 192, "google.com/tpu", 4),
    "ct5lp-hightpu-8t": Machine(224, 384, "google.com/tpu", 8),
    "ct5p-hightpu-4t": Machine(208, 448, "google.com/tpu", 4),
    "ct6e-standard-1t": Machine(44, 176, "google.com/tpu", 1),
    "ct6e-standard-4t": Machine(180, 720, "google.com/tpu", 4),
    "ct6e-standard-8t": Machine(180, 1440, "google.com/tpu", 8),
    "tpu7x-standard-4t": Machine(224, 960, "google.com/tpu", 4),
    # GPU VMs. https://cloud.google.com/compute/docs/accelerator-optimized-machines
    "a3-highgpu-8g": Machine(208, 1872, "nvidia.com/gpu", 8),
    "a3-megagpu-8g": Machine(208, 1872, "nvidia.com/gpu", 8),
    "a4-highgpu-8g": Machine(224, 3968, "nvidia.com/gpu", 8),
}

#: What an unknown machine type is given (the emulator accepts any name GKE would).
FALLBACK = Machine(8, 32)


def machine(machine_type: str) -> Machine:
    return MACHINES.get(machine_type, FALLBACK)
