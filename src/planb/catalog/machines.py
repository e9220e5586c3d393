"""Every machine type the catalog holds, as one shape: vCPUs, memory and accelerators per VM.

Derived from the TPU, GPU and general-purpose entries (each carries the page its numbers come
from); consumers that need a VM's size, such as the capacity simulator's nodes, look it up here.
"""

from __future__ import annotations

from dataclasses import dataclass

from planb.catalog import general, gpu, tpu
from planb.catalog.errors import UnknownMachineTypeError


@dataclass(frozen=True)
class MachineShape:
    """What one VM of a machine type offers: vCPUs, memory (GiB) and accelerators."""

    machine_type: str
    vcpus: int
    memory_gib: int
    #: google.com/tpu, nvidia.com/gpu, or None for a CPU-only machine.
    accelerator_resource: str | None
    #: TPU chips or GPUs per VM (0 for a CPU-only machine).
    accelerators: int
    #: The page the vCPUs and memory come from.
    doc_url: str


def _build() -> dict[str, MachineShape]:
    shapes: list[MachineShape] = [
        MachineShape(m.machine_type, m.vcpus, m.memory_gib, None, 0, m.doc_url) for m in general.MACHINES
    ]
    for generation in tpu.GENERATIONS:
        shapes += [
            MachineShape(m.name, m.vcpus, m.memory_gib, tpu.RESOURCE, m.chips_per_vm, m.shape_url)
            for m in generation.machine_types
        ]
    shapes += [
        MachineShape(m.machine_type, m.vcpus, m.memory_gib, gpu.RESOURCE, m.gpus_per_vm, m.shape_url)
        for m in gpu.MACHINES
    ]
    out: dict[str, MachineShape] = {}
    for entry in shapes:
        if entry.machine_type in out:
            raise AssertionError(f"machine type {entry.machine_type} is in the catalog twice")
        out[entry.machine_type] = entry
    return out


SHAPES: dict[str, MachineShape] = _build()


def known() -> tuple[str, ...]:
    """Every machine type the catalog holds, sorted."""
    return tuple(sorted(SHAPES))


def shape(machine_type: str) -> MachineShape:
    """The shape of ``machine_type``; UnknownMachineTypeError (naming the known ones) if there is none."""
    found = SHAPES.get(machine_type)
    if found is None:
        raise UnknownMachineTypeError(machine_type, known())
    return found
