"""Node capacity of the machine types the simulator makes nodes for, from the accelerator catalog.

vCPUs, memory and accelerators per VM are the catalog's (``planb.catalog.machines``, each entry
with the Google page it comes from). The simulator reports a VM's whole size as node capacity; GKE
itself reserves some of it for the system, which the simulator does not model. A machine type the
catalog does not hold has no known size: ``machine`` raises UnknownMachineTypeError naming it and
the known ones, rather than guessing a node.
"""

from __future__ import annotations

from planb.catalog import machines as catalog_machines
from planb.catalog.errors import UnknownMachineTypeError
from planb.catalog.machines import MachineShape

__all__ = ["MachineShape", "UnknownMachineTypeError", "capacity", "machine"]


def machine(machine_type: str) -> MachineShape:
    """The catalog's shape of ``machine_type``; UnknownMachineTypeError if the catalog has none."""
    return catalog_machines.shape(machine_type)


def capacity(shape: MachineShape) -> dict[str, str]:
    """A node's ``status.capacity`` for one VM of ``shape`` (cpu, memory, pods, accelerators)."""
    out = {"cpu": str(shape.vcpus), "memory": f"{shape.memory_gib}Gi", "pods": "110"}
    if shape.accelerator_resource:
        out[shape.accelerator_resource] = str(shape.accelerators)
    return out
