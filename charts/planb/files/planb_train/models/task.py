"""planb training job, models: ``Task``, what the loop needs from a model of any family."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import numpy as np


@dataclasses.dataclass
class Task:
    """What the generic loop needs from a model.

    The state is not built here: ``init`` materialises the initial state on the devices, and ``abstract`` describes
    it (shapes, dtypes and shardings, from ``jax.eval_shape``) without allocating it, so that a run with a checkpoint
    restores into ``abstract`` and never holds an initial state beside the restored one.
    """

    init: Callable[[], Any]  # () -> the initial state (a pytree of jax.Arrays); what is checkpointed
    abstract: Any  # the same pytree of jax.ShapeDtypeStruct with shardings: Orbax's restore target
    step_fn: Callable[[Any, int], tuple[Any, jax.Array]]  # (state, step) -> (state, loss)
    tokens_per_step: int = 0
    flops_per_step: float = 0.0
    describe: str = ""
    #: () -> its parts' seconds ({"lower": ..., "compile": ...}): trace, lower and compile the step ahead of time from
    #: ``abstract`` alone (a hit in the persistent compilation cache on a restart), so that the loop can do it while
    #: the restore reads the checkpoint.
    precompile: Callable[[], dict[str, float]] = dict
    #: () -> the step traced and lowered ahead of time, not compiled (jax.stages.Lowered; None where not offered):
    #: planb_train.aot compiles it for a TPU slice this machine does not have.
    lower: Callable[[], Any] = lambda: None

    @property
    def state_bytes(self) -> int:
        """Bytes of the training state (parameters and optimizer state), from its abstract description."""
        return sum(int(np.prod(x.shape)) * np.dtype(x.dtype).itemsize for x in jax.tree.leaves(self.abstract))


def abstract_state(init: Callable[[], Any], sharding: Any) -> Any:
    """``init``'s output as ShapeDtypeStructs with ``sharding``: traced, never run (nothing is allocated)."""
    return jax.tree.map(
        lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding),  # type: ignore[no-untyped-call]
        jax.eval_shape(init),
    )
