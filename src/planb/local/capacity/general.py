"""General-purpose (CPU-only) machine types: the cluster's default pool and what GKE picks by default.

The tutorial's default pool is n2-standard-16; the GKE API defaults a node pool without a machine type
to e2-medium. vCPUs and memory per VM are Compute Engine's (memory in GB of 2^30 bytes, which
Kubernetes writes ``Gi``); the URL is kept on every entry.
"""

from __future__ import annotations

from dataclasses import dataclass

#: E2: e2-medium is a shared-core type (2 vCPUs, each sustained at half a core).
E2_URL = "https://cloud.google.com/compute/docs/general-purpose-machines#e2_machine_types"
N2_URL = "https://cloud.google.com/compute/docs/general-purpose-machines#n2_machine_types"


@dataclass(frozen=True)
class CpuMachine:
    """A general-purpose machine type: vCPUs and memory per VM, no accelerators."""

    machine_type: str
    vcpus: int
    memory_gib: int
    doc_url: str


MACHINES: tuple[CpuMachine, ...] = (
    CpuMachine("e2-medium", 2, 4, E2_URL),
    CpuMachine("e2-standard-4", 4, 16, E2_URL),
    CpuMachine("n2-standard-8", 8, 32, N2_URL),
    CpuMachine("n2-standard-16", 16, 64, N2_URL),
)
