"""Node capacity of the machine types the simulator makes nodes for, from the accelerator catalog.

Every machine type the simulator knows, as one shape: vCPUs, memory and accelerators per VM, derived
from the catalog's TPU and GPU entries (``planb.catalog.tpu``, ``gpu``) and the general-purpose machine
types (``planb.local.capacity.general``), each with the Google page its numbers come from. The simulator
reports a VM's whole size as node capacity; GKE itself reserves some of it for the system, which the
simulator does not model. A machine type none of them holds has no known size: ``machine`` raises
UnknownMachineTypeError naming it and the known ones, rather than guessing a node.
"""

from __future__ import annotations

from dataclasses import dataclass

from planb.catalog import gpu, tpu
from planb.catalog.errors import UnknownMachineTypeError
from planb.local.capacity import general

__all__ = ["SHAPES", "MachineShape", "UnknownMachineTypeError", "capacity", "known", "machine"]


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


def machine(machine_type: str) -> MachineShape:
    """The shape of ``machine_type``; UnknownMachineTypeError (naming the known ones) if the catalog has none."""
    found = SHAPES.get(machine_type)
    if found is None:
        raise UnknownMachineTypeError(machine_type, known())
    return found


def capacity(shape: MachineShape) -> dict[str, str]:
    """A node's ``status.capacity`` for one VM of ``shape`` (cpu, memory, pods, accelerators)."""
    out = {"cpu": str(shape.vcpus), "memory": f"{shape.memory_gib}Gi", "pods": "110"}
    if shape.accelerator_resource:
        out[shape.accelerator_resource] = str(shape.accelerators)
    return out
