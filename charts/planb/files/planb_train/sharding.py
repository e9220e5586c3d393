"""planb training job, sharding: the mesh a slice gets, and the rules that place the parameters, the optimizer state
and the batch on it.

The mesh. Three axes, as MaxText names its ICI/DCN parallelism: ``data`` (whole replicas; by default one per slice,
so that only the gradients' reduction crosses the data-centre network between slices), ``fsdp`` (every chip of a
slice: parameters, optimizer state and batch are split across them, ZeRO-3 style; XLA all-gathers a layer's weights
where it is used and reduce-scatters its gradients) and ``tensor`` (split heads and the MLP's hidden units; 1 by
default). ``PLANB_MESH`` overrides the default, for example ``data=2,fsdp=-1,tensor=2`` (``-1``: the devices left).

The rules. ``PARAM_AXES`` names the logical axes of every parameter of the transformer by the last names of its
path in the Flax tree (the same tails name Adam's moments, which therefore shard as their parameters do), and
``MESH_AXES`` maps each logical axis to mesh axes. A dimension that the mesh axes do not divide stays whole on every
device (so any width runs on any mesh); a leaf that no rule names (layer norms, biases of width d_model, Adam's step
count) is replicated. A scanned model's extra leading axis (the layers) is never split.

The splash kernel is a Mosaic (Pallas) kernel: XLA cannot partition it, so ``attention_over_mesh`` calls it under
``jax.shard_map`` on each device's share of the batch and heads (jax.shard_map; MaxText's attention_op does the
same).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from planb_train.config import MESH_AXIS_NAMES, TrainConfig
from planb_train.variables import ConfigError

#: Mesh axes the batch is split over: every axis but ``tensor`` (tensor-parallel devices share their sequences).
BATCH_AXES = ("data", "fsdp")

#: Logical axes of each parameter, by the tail of its path (module name, parameter name).
PARAM_AXES: dict[tuple[str, ...], tuple[str | None, ...]] = {
    ("embed", "embedding"): ("vocab", "embed"),
    ("pos_embed",): (None, "embed"),
    ("qkv", "kernel"): ("embed", "heads"),
    ("proj", "kernel"): ("heads", "embed"),
    ("mlp_in", "kernel"): ("embed", "mlp"),
    ("mlp_in", "bias"): ("mlp",),
    ("mlp_out", "kernel"): ("mlp", "embed"),
    ("head", "kernel"): ("embed", "vocab"),
}
#: Logical axis -> the mesh axes it is split over.
MESH_AXES: dict[str, tuple[str, ...]] = {
    "embed": ("fsdp",),
    "heads": ("tensor",),
    "mlp": ("tensor",),
    "vocab": ("tensor",),
    "batch": BATCH_AXES,
}


def mesh_shape(cfg: TrainConfig, devices: Sequence[Any]) -> dict[str, int]:
    """Sizes of the mesh axes for ``devices``: PLANB_MESH's, an axis it leaves out 1, and ``-1`` the devices left.

    Default (and ``fsdp`` where PLANB_MESH leaves it out and no axis says -1): ``data`` the slices the devices span,
    ``tensor`` 1, ``fsdp`` the rest. Raises ConfigError when the sizes cannot make the device count."""
    n = len(devices)
    slices = len({getattr(d, "slice_index", 0) for d in devices})
    wanted = dict(cfg.mesh) if cfg.mesh else {"data": slices}
    sizes = {axis: wanted.get(axis, 1) for axis in MESH_AXIS_NAMES}
    if -1 not in sizes.values() and "fsdp" not in wanted:
        sizes["fsdp"] = -1
    known = math.prod(v for v in sizes.values() if v != -1)
    if n % known:
        raise ConfigError("PLANB_MESH", f"{_show(wanted)} does not divide the {n} devices of this run")
    sizes = {axis: n // known if v == -1 else v for axis, v in sizes.items()}
    if math.prod(sizes.values()) != n:
        raise ConfigError("PLANB_MESH", f"{_show(sizes)} makes {math.prod(sizes.values())} devices, this run has {n}")
    return sizes


def _show(sizes: dict[str, int]) -> str:
    return ",".join(f"{axis}={size}" for axis, size in sizes.items())


def make_mesh(cfg: TrainConfig, devices: Sequence[Any] | None = None) -> Mesh:
    """The run's mesh over ``devices`` (default: every device of every process), axes MESH_AXIS_NAMES.

    On TPU the devices are laid out by their physical coordinates (``mesh_utils.create_device_mesh``, or its hybrid
    form across slices), so that an axis's neighbours are ICI neighbours; elsewhere in their given order."""
    devices = list(jax.devices() if devices is None else devices)
    sizes = mesh_shape(cfg, devices)
    shape = tuple(sizes[a] for a in MESH_AXIS_NAMES)
    grid = None
    if devices[0].platform == "tpu":
        from jax.experimental import mesh_utils

        slices = len({getattr(d, "slice_index", 0) for d in devices})
        try:
            if slices > 1 and sizes["data"] % slices == 0:
                per_slice = (sizes["data"] // slices, sizes["fsdp"], sizes["tensor"])
                grid = mesh_utils.create_hybrid_device_mesh(per_slice, (slices, 1, 1), devices)
            else:
                grid = mesh_utils.create_device_mesh(shape, devices, allow_split_physical_axes=True)
        except (AssertionError, NotImplementedError, ValueError):
            grid = None  # a shape the physical layout does not take: the devices' own order
    if grid is None:
        grid = np.array(devices).reshape(shape)
    return Mesh(grid, MESH_AXIS_NAMES)


def _names(path: Sequence[Any]) -> tuple[str, ...]:
    return tuple(str(getattr(p, "key", getattr(p, "name", p))) for p in path)


def logical_axes(path: Sequence[Any], ndim: int) -> tuple[str | None, ...]:
    """The logical axes of the leaf at ``path`` (PARAM_AXES by the path's tail; all None where no rule names it)."""
    names = _names(path)
    for tail, axes in PARAM_AXES.items():
        if names[-len(tail) :] == tail and ndim >= len(axes):
            return (None,) * (ndim - len(axes)) + axes  # a scanned model's leading layers axis stays whole
    return (None,) * ndim


def spec_for(shape: Sequence[int], axes: Sequence[str | None], mesh: Mesh) -> P:
    """The PartitionSpec of an array of ``shape`` with logical ``axes``: each named dimension split over its mesh
    axes of size > 1, where they divide it; a mesh axis is used by one dimension at most."""
    used: set[str] = set()
    parts: list[Any] = []
    for size, axis in zip(shape, axes, strict=True):
        mesh_axes = tuple(a for a in MESH_AXES.get(axis or "", ()) if mesh.shape[a] > 1 and a not in used)
        if mesh_axes and size % math.prod(mesh.shape[a] for a in mesh_axes) == 0:
            used.update(mesh_axes)
            parts.append(mesh_axes[0] if len(mesh_axes) == 1 else mesh_axes)
        else:
            parts.append(None)
    return P(*parts)


def state_shardings(abstract: Any, mesh: Mesh) -> Any:
    """NamedShardings for a pytree of arrays or ShapeDtypeStructs (parameters and optimizer state) by the rules."""

    def one(path: Any, leaf: Any) -> NamedSharding:
        return NamedSharding(mesh, spec_for(leaf.shape, logical_axes(path, len(leaf.shape)), mesh))

    return jax.tree_util.tree_map_with_path(one, abstract)


def batch_spec(mesh: Mesh, ndim: int = 2) -> P:
    """The batch's PartitionSpec: its first axis over BATCH_AXES (those of size > 1), the rest whole."""
    axes = tuple(a for a in BATCH_AXES if mesh.shape[a] > 1)
    first: Any = axes if len(axes) > 1 else (axes[0] if axes else None)
    return P(first, *([None] * (ndim - 1)))


def attention_over_mesh(
    make_kernel: Callable[[int], Callable[..., jax.Array]], num_heads: int, mesh: Mesh
) -> Callable[..., jax.Array]:
    """A (batch, heads, seq, head_dim) attention that runs ``make_kernel(local_heads)`` on each device's share of
    the batch (BATCH_AXES) and of the heads (``tensor``) under jax.shard_map."""
    tensor = mesh.shape["tensor"]
    if num_heads % tensor:
        raise ConfigError("PLANB_MESH", f"tensor={tensor} must divide PLANB_NUM_HEADS={num_heads}")
    kernel = make_kernel(num_heads // tensor)
    batch = batch_spec(mesh)[0]
    spec = P(batch, "tensor" if tensor > 1 else None, None, None)
    return jax.shard_map(kernel, mesh=mesh, in_specs=(spec, spec, spec), out_specs=spec, check_vma=False)
