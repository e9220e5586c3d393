"""planb training job, ahead-of-time compilation for a TPU slice this machine does not have.

JAX's TPU compiler (``libtpu``) runs on any x86 machine: ``jax.experimental.topologies.get_topology_desc`` describes
a slice (its devices, their coordinates and hosts) without opening a chip, and the transformer's step, lowered for a
mesh of those devices, compiles for it (MaxText's train_compile.py does the same). The compiled program says what
one device of the slice would hold (``memory_analysis``) and compute (``cost_analysis``), so a model that would not
fit, or a kernel XLA cannot partition, fails here and not after the slice is paid for.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import jax

from planb_train.config import TrainConfig
from planb_train.models.transformer import transformer_task

#: JAX's name of each TPU generation (the device kinds of get_topology_desc) by the catalog's generation.
TOPOLOGY_GENERATIONS = {"v4": "v4", "v5e": "v5e", "v5p": "v5p", "v6e": "v6e", "tpu7x": "tpu7x"}


@dataclasses.dataclass(frozen=True)
class Slice:
    """A TPU slice as the compiler needs it: generation, topology, chips per host (the host's bounds), slices."""

    generation: str
    topology: str
    chips_per_host: int
    slices: int = 1

    def topology_name(self) -> str:
        return f"{TOPOLOGY_GENERATIONS[self.generation]}:{self.topology}"

    def host_bounds(self) -> tuple[int, int, int]:
        """The chips of one host as a box: 1x1x1, 2x2x1 (four chips) or 2x4x1 (eight), as GKE's machine types."""
        return {1: (1, 1, 1), 4: (2, 2, 1), 8: (2, 4, 1)}[self.chips_per_host]


@dataclasses.dataclass(frozen=True)
class Compiled:
    """What the compiler says of one device of the slice for the training step."""

    devices: int
    mesh: dict[str, int]
    params: int
    state_bytes_per_device: float  # parameters and optimizer state, as sharded
    argument_bytes: int
    output_bytes: int
    alias_bytes: int
    temp_bytes: int
    generated_code_bytes: int
    flops_per_device: float  # cost_analysis's flops of one step on one device
    #: MaxText's count for the whole slice (planb_train.models.transformer.model_flops_per_step)
    model_flops_per_step: float
    lower_s: float
    compile_s: float

    @property
    def peak_bytes(self) -> int:
        """HBM one device needs for the step: arguments, outputs not aliased to them, temporaries, the program."""
        return self.argument_bytes + self.output_bytes - self.alias_bytes + self.temp_bytes + self.generated_code_bytes


def topology_devices(tpu: Slice) -> list[Any]:
    """The devices of ``tpu``'s slice(s), as the TPU compiler describes them (no chip is opened)."""
    from jax.experimental import topologies

    desc = topologies.get_topology_desc(
        topology_name=tpu.topology_name(),
        platform="tpu",
        chips_per_host_bounds=tpu.host_bounds(),
        num_slices=tpu.slices,
    )
    return list(desc.devices)


def compile_step(cfg: TrainConfig, tpu: Slice) -> Compiled:
    """The transformer's training step (forward, backward and the optimizer's update) compiled for ``tpu``."""
    devices = topology_devices(tpu)
    task = transformer_task(cfg, devices=devices)
    started = time.perf_counter()
    lowered = task.lower()
    lowered_at = time.perf_counter()
    compiled = lowered.compile()
    done = time.perf_counter()
    memory = compiled.memory_analysis()
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    per_device = sum(
        float(_prod(leaf.sharding.shard_shape(leaf.shape))) * leaf.dtype.itemsize
        for leaf in jax.tree.leaves(task.abstract)
    )
    mesh = dict(task.abstract["params"]["params"]["head"]["kernel"].sharding.mesh.shape)
    return Compiled(
        devices=len(devices),
        mesh=mesh,
        params=sum(_prod(x.shape) for x in jax.tree.leaves(task.abstract["params"])),
        state_bytes_per_device=per_device,
        argument_bytes=int(memory.argument_size_in_bytes),
        output_bytes=int(memory.output_size_in_bytes),
        alias_bytes=int(memory.alias_size_in_bytes),
        temp_bytes=int(memory.temp_size_in_bytes),
        generated_code_bytes=int(memory.generated_code_size_in_bytes),
        flops_per_device=float(cost.get("flops", 0.0)),
        model_flops_per_step=task.flops_per_step,
        lower_s=lowered_at - started,
        compile_s=done - lowered_at,
    )


def _prod(shape: Any) -> int:
    out = 1
    for size in shape:
        out *= int(size)
    return out
