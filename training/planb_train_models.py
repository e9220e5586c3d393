"""planb training job, models: the seed's linear regression and a small transformer LM, each a ``Task``.

Data. The linear model uses the seed's fixed data set. The transformer reads synthetic token
sequences generated from (PLANB_SEED, step) alone: each sequence is an arithmetic progression modulo
the vocabulary with a random start and a random stride in 1..7, so the model can learn it, and a run
resumed at step k sees exactly the batches an uninterrupted run sees.

Parallelism. The transformer is data parallel over ``jax.devices()`` with ``jax.sharding``: a 1-D
``Mesh`` named ``data``, the batch sharded along it (``NamedSharding(mesh, P("data"))``), parameters
and optimizer state replicated (``P()``); XLA inserts the gradient all-reduce. Under ``JaxTrainer``
with ``use_tpu``/``use_gpu`` Ray initialises ``jax.distributed``, so the mesh spans every host. On
``cpu`` Ray does no JAX distributed setup (Ray 2.53): each worker then trains an identical replica,
and only worker 0 writes checkpoints.

The model FLOPs per step (``model_flops_per_step``) feed the loop's MFU (see planb_train_loop).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np
from planb_train_config import TrainConfig


@dataclasses.dataclass
class Task:
    """What the generic loop needs from a model."""

    state: Any  # pytree with the parameters (and optimizer state); what is checkpointed
    step_fn: Callable[[Any, int], tuple[Any, jax.Array]]  # (state, step) -> (state, loss)
    tokens_per_step: int = 0
    flops_per_step: float = 0.0
    describe: str = ""


def linear_task(cfg: TrainConfig) -> Task:
    """The seed's linear regression: 1000 x 10 features, full-batch gradient descent."""
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

    state = {"w": jax.make_array_from_callback(w0.shape, replicated, lambda idx: w0[idx])}
    return Task(state=state, step_fn=step_fn, describe="linear regression 10 -> 1")


def _replicated_sharding() -> Any:
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    return NamedSharding(Mesh(np.array(jax.devices()), ("data",)), P())  # type: ignore[no-untyped-call]


def synthetic_batch(seed: int, step: int, batch: int, seq_len: int, vocab: int) -> np.ndarray:
    """Deterministic batch for ``step``: arithmetic progressions modulo ``vocab``."""
    rng = np.random.default_rng([seed, step])
    start = rng.integers(0, vocab, size=(batch, 1))
    stride = rng.integers(1, 8, size=(batch, 1))
    return ((start + stride * np.arange(seq_len)[None, :]) % vocab).astype(np.int32)


def make_lm(cfg: TrainConfig) -> Any:
    """A pre-norm decoder-only transformer LM (Flax linen)."""
    import flax.linen as nn

    dtype = jnp.bfloat16 if cfg.dtype == "bfloat16" else jnp.float32
    d, h = cfg.d_model, cfg.num_heads
    impl: Any = cfg.attention

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x: jax.Array) -> jax.Array:
            b, t, _ = x.shape
            y = nn.LayerNorm(dtype=dtype)(x)
            qkv = nn.Dense(3 * d, use_bias=False, dtype=dtype, name="qkv")(y)
            q, k, v = (a.reshape(b, t, h, d // h) for a in jnp.split(qkv, 3, axis=-1))
            att = jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation=impl)
            x = x + nn.Dense(d, use_bias=False, dtype=dtype, name="proj")(att.reshape(b, t, d))
            y = nn.LayerNorm(dtype=dtype)(x)
            y = nn.Dense(4 * d, dtype=dtype, name="mlp_in")(y)
            y = nn.Dense(d, dtype=dtype, name="mlp_out")(nn.gelu(y))
            return x + y

    class LM(nn.Module):
        @nn.compact
        def __call__(self, tokens: jax.Array) -> jax.Array:
            x = nn.Embed(cfg.vocab_size, d, dtype=dtype, name="embed")(tokens)
            pos = self.param("pos_embed", nn.initializers.normal(0.02), (cfg.seq_len, d))
            x = x + pos[None, : tokens.shape[1]].astype(dtype)
            for i in range(cfg.num_layers):
                x = Block(name=f"block_{i}")(x)
            x = nn.LayerNorm(dtype=dtype)(x)
            return nn.Dense(cfg.vocab_size, use_bias=False, dtype=dtype, name="head")(x)

    return LM()


def matmul_params(params: Any) -> int:
    """Parameters used in matrix multiplies: all but the embedding tables."""
    total = 0
    for path, leaf in jax.tree_util.tree_flatten_with_path(params)[0]:
        names = "/".join(str(getattr(p, "key", p)) for p in path)
        if "embed" not in names:
            total += int(np.prod(leaf.shape))
    return total


def model_flops_per_step(cfg: TrainConfig, n_matmul: int, global_batch: int) -> float:
    tokens = global_batch * cfg.seq_len
    return float(tokens) * (6.0 * n_matmul + 12.0 * cfg.num_layers * cfg.d_model * cfg.seq_len)


def transformer_task(cfg: TrainConfig) -> Task:
    import optax
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    devices = np.array(jax.devices())
    mesh = Mesh(devices, ("data",))
    batch_sharding = NamedSharding(mesh, P("data"))  # type: ignore[no-untyped-call]
    replicated = NamedSharding(mesh, P())  # type: ignore[no-untyped-call]
    global_batch = cfg.batch_per_device * devices.size

    model = make_lm(cfg)
    tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(cfg.learning_rate, b2=0.95))

    def init() -> dict[str, Any]:
        params = model.init(jax.random.PRNGKey(cfg.seed), jnp.zeros((1, cfg.seq_len), jnp.int32))
        return {"params": params, "opt_state": tx.init(params)}

    state = jax.jit(init, out_shardings=replicated)()

    def loss_fn(params: Any, tokens: jax.Array) -> jax.Array:
        logits = model.apply(params, tokens[:, :-1]).astype(jnp.float32)
        return cast(jax.Array, optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean())

    def train_step(state: dict[str, Any], tokens: jax.Array) -> tuple[dict[str, Any], jax.Array]:
        loss, grads = jax.value_and_grad(loss_fn)(state["params"], tokens)
        updates, opt_state = tx.update(grads, state["opt_state"], state["params"])
        return {"params": optax.apply_updates(state["params"], updates), "opt_state": opt_state}, loss

    jitted = jax.jit(
        train_step,
        in_shardings=(replicated, batch_sharding),
        out_shardings=(replicated, replicated),
        donate_argnums=0,
    )
    shape = (global_batch, cfg.seq_len + 1)  # inputs are tokens[:, :-1], targets tokens[:, 1:]

    def step_fn(state: Any, step: int) -> tuple[Any, jax.Array]:
        host = synthetic_batch(cfg.seed, step, global_batch, cfg.seq_len + 1, cfg.vocab_size)
        tokens = jax.make_array_from_callback(shape, batch_sharding, lambda idx: host[idx])
        return cast(tuple[Any, jax.Array], jitted(state, tokens))

    n_matmul = matmul_params(state["params"])
    n_total = sum(int(np.prod(x.shape)) for x in jax.tree.leaves(state["params"]))
    return Task(
        state=state,
        step_fn=step_fn,
        tokens_per_step=global_batch * cfg.seq_len,
        flops_per_step=model_flops_per_step(cfg, n_matmul, global_batch),
        describe=(
            f"transformer LM: {n_total:,} params ({n_matmul:,} in matmuls), {cfg.num_layers} layers, "
            f"d_model {cfg.d_model}, {cfg.num_heads} heads, seq {cfg.seq_len}, vocab {cfg.vocab_size}, "
            f"global batch {global_batch} over {devices.size} device(s), {cfg.dtype}"
        ),
    )
