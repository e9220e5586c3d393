"""planb training job, models: the tutorial's linear regression on its fixed data set, a ``Task``.

On ``cpu`` under Ray Train (no JAX distributed setup, Ray 2.53) each worker trains an identical replica, and only
worker 0 writes checkpoints.
"""

from __future__ import annotations

from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np

from planb_train.config import TrainConfig
from planb_train.models.task import Task


def linear_task(cfg: TrainConfig) -> Task:
    """The tutorial's linear regression: 1000 x 10 features, full-batch gradient descent."""
    key = jax.random.PRNGKey(cfg.seed)
    x = jax.random.normal(key, (1000, 10))
    w_true = jax.random.normal(key, (10, 1))
    y = jnp.dot(x, w_true)
    lr = cfg.learning_rate

    # The weights are a global array replicated over every device, so that with jax.distributed
    # (several processes) the checkpoint holds one logical array, not one per process.
    replicated = _replicated_sharding()
    w0 = np.zeros((10, 1), np.float32)

    def loss_fn(w: jax.Array) -> jax.Array:
        return jnp.mean((jnp.dot(x, w) - y) ** 2)

    def update(state: dict[str, jax.Array]) -> tuple[dict[str, jax.Array], jax.Array]:
        loss, grad = jax.value_and_grad(loss_fn)(state["w"])
        return {"w": state["w"] - lr * grad}, loss

    jitted = jax.jit(update, out_shardings=(replicated, replicated))

    def step_fn(state: Any, step: int) -> tuple[Any, jax.Array]:
        return cast(tuple[Any, jax.Array], jitted(state))

    def init() -> dict[str, jax.Array]:
        return {"w": jax.make_array_from_callback(w0.shape, replicated, lambda idx: w0[idx])}

    abstract = {"w": jax.ShapeDtypeStruct(w0.shape, w0.dtype, sharding=replicated)}  # type: ignore[no-untyped-call]
    return Task(init=init, abstract=abstract, step_fn=step_fn, describe="linear regression 10 -> 1")


def _replicated_sharding() -> Any:
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    return NamedSharding(Mesh(np.array(jax.devices()), ("data",)), P())  # type: ignore[no-untyped-call]
