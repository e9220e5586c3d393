"""planb training job, models: a small decoder-only transformer LM, a ``Task``.

Data. The transformer reads synthetic token sequences generated from (PLANB_SEED, step) alone: each sequence is an
arithmetic progression modulo the vocabulary with a random start and a random stride in 1..7, so the model can learn
it, and a run resumed at step k sees exactly the batches an uninterrupted run sees.

Parallelism. The transformer runs on a mesh of every device of every process (planb_train.sharding): by default
``fsdp`` over every chip of a slice and ``data`` over the slices, parameters and optimizer state split by the
rules there, the batch split over both axes; XLA inserts the weights' all-gathers and the gradients'
reduce-scatters. Under ``JaxTrainer`` with ``use_tpu``/``use_gpu`` Ray initialises ``jax.distributed``, so the
mesh spans every host. On ``cpu`` Ray does no JAX distributed setup (Ray 2.53): each worker then trains an
identical replica, and only worker 0 writes checkpoints.

The model FLOPs per step (``model_flops_per_step``) feed the loop's MFU (see planb_train.loop).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np

from planb_train.config import TrainConfig
from planb_train.models.attention import ATTENTION_OUT, ATTENTION_RESIDUALS, attention_impl, splash_attention
from planb_train.models.task import Task
from planb_train.sharding import attention_over_mesh, batch_spec, make_mesh, state_shardings
from planb_train.variables import ConfigError


def synthetic_batch(seed: int, step: int, batch: int, seq_len: int, vocab: int) -> np.ndarray:
    """Deterministic batch for ``step``: arithmetic progressions modulo ``vocab``."""
    rng = np.random.default_rng([seed, step])
    start = rng.integers(0, vocab, size=(batch, 1))
    stride = rng.integers(1, 8, size=(batch, 1))
    return ((start + stride * np.arange(seq_len)[None, :]) % vocab).astype(np.int32)


#: PLANB_REMAT -> the jax.checkpoint policy of each decoder block (None: no rematerialisation). ``minimal`` keeps
#: the outputs of the weight matmuls (dots without batch dimensions) and the attention's, and recomputes the layer
#: norms, the GELU and XLA attention's score matrix; ``full`` keeps nothing but the block's input.
REMAT_POLICIES: dict[str, Callable[..., Any] | None] = {
    "none": None,
    "minimal": jax.checkpoint_policies.save_from_both_policies(
        jax.checkpoint_policies.dots_with_no_batch_dims_saveable,
        jax.checkpoint_policies.save_only_these_names(ATTENTION_OUT, ATTENTION_RESIDUALS),
    ),
    "full": jax.checkpoint_policies.nothing_saveable,
}


def make_lm(cfg: TrainConfig, interpret: bool = False, mesh: Any = None, platform: str | None = None) -> Any:
    """A pre-norm decoder-only transformer LM (Flax linen); each block rematerialised by PLANB_REMAT, the blocks
    scanned by PLANB_SCAN_LAYERS. With ``mesh`` the activations are kept split along the batch as the mesh says and
    the splash kernel runs under shard_map (planb_train.sharding); ``platform`` is the devices' (default: JAX's
    default backend, or ``tpu`` with ``interpret``)."""
    import flax.linen as nn

    dtype = jnp.bfloat16 if cfg.dtype == "bfloat16" else jnp.float32
    d, h = cfg.d_model, cfg.num_heads
    from jax.ad_checkpoint import checkpoint_name

    platform = "tpu" if interpret else (platform or jax.default_backend())
    impl = attention_impl(cfg, platform)
    if impl == "splash" and platform != "tpu":
        raise ConfigError(
            "PLANB_ATTENTION",
            f"splash is a TPU kernel, and this run's devices are {platform}: set auto (splash on TPU, "
            "xla elsewhere) or xla",
        )
    splash: Callable[..., jax.Array] | None = None
    if impl == "splash" and mesh is not None:
        splash = attention_over_mesh(lambda heads: splash_attention(heads, cfg.seq_len, interpret), h, mesh)
    elif impl == "splash":
        splash = splash_attention(h, cfg.seq_len, interpret)

    def along_batch(x: jax.Array) -> jax.Array:
        """``x`` kept split along its batch axis over the mesh (no-op without one)."""
        if mesh is None:
            return x
        from jax.sharding import NamedSharding

        return jax.lax.with_sharding_constraint(x, NamedSharding(mesh, batch_spec(mesh, x.ndim)))

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x: jax.Array, _: Any = None) -> Any:
            x = along_batch(x)
            b, t, _d = x.shape
            y = nn.LayerNorm(dtype=dtype)(x)
            qkv = nn.Dense(3 * d, use_bias=False, dtype=dtype, name="qkv")(y)
            q, k, v = (a.reshape(b, t, h, d // h) for a in jnp.split(qkv, 3, axis=-1))
            if splash is not None:
                q = q * jnp.asarray((d // h) ** -0.5, q.dtype)
                att = splash(*(a.transpose(0, 2, 1, 3) for a in (q, k, v))).transpose(0, 2, 1, 3)
            else:
                att = jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation=cast(Any, impl))
            att = checkpoint_name(att, ATTENTION_OUT)
            x = x + nn.Dense(d, use_bias=False, dtype=dtype, name="proj")(att.reshape(b, t, d))
            y = nn.LayerNorm(dtype=dtype)(x)
            y = nn.Dense(4 * d, dtype=dtype, name="mlp_in")(y)
            y = nn.Dense(d, dtype=dtype, name="mlp_out")(nn.gelu(y))
            return (x + y, None) if cfg.scan_layers else x + y

    policy = REMAT_POLICIES[cfg.remat]
    block_cls: Any = Block if cfg.remat == "none" else nn.remat(Block, policy=policy, prevent_cse=True)

    class LM(nn.Module):
        @nn.compact
        def __call__(self, tokens: jax.Array) -> jax.Array:
            x = nn.Embed(cfg.vocab_size, d, dtype=dtype, name="embed")(tokens)
            pos = self.param("pos_embed", nn.initializers.normal(0.02), (cfg.seq_len, d))
            x = along_batch(x + pos[None, : tokens.shape[1]].astype(dtype))
            if cfg.scan_layers:  # one block's program over weights stacked on a leading layers axis
                stack = nn.scan(
                    block_cls, variable_axes={"params": 0}, split_rngs={"params": True}, length=cfg.num_layers
                )
                x, _ = stack(name="blocks")(x, None)
            else:
                for i in range(cfg.num_layers):
                    x = block_cls(name=f"block_{i}")(x)
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
    """Model FLOPs of one training step, as MaxText counts them (``calculate_tflops_training_per_device`` in
    AI-Hypercomputer/maxtext, src/MaxText/maxtext_utils.py): 6 x N per token for the weight matmuls (forward and
    backward; N counts the output projection, not the embedding lookups), plus the attention's score and value
    matmuls with causal masking counted: MaxText halves the non-causal 4 x T^2 x D per layer and sequence, then
    triples it for the backward pass, i.e. 6 x L x D x T per token. Rematerialisation is never counted."""
    tokens = global_batch * cfg.seq_len
    return float(tokens) * (6.0 * n_matmul + 6.0 * cfg.num_layers * cfg.d_model * cfg.seq_len)


def transformer_task(cfg: TrainConfig, interpret: bool = False, devices: Any = None) -> Task:
    """The transformer's Task on a mesh of ``devices`` (default: every device of every process; the devices of a
    ``jax.experimental.topologies`` description compile for a slice this machine does not have)."""
    import optax
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = make_mesh(cfg, devices)
    batch_sharding = NamedSharding(mesh, batch_spec(mesh))  # type: ignore[no-untyped-call]
    replicated = NamedSharding(mesh, P())  # type: ignore[no-untyped-call]
    global_batch = cfg.batch_per_device * mesh.size

    model = make_lm(cfg, interpret, mesh, platform=mesh.devices.flat[0].platform)
    tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(cfg.learning_rate, b2=0.95))

    rows = mesh.size // mesh.shape["tensor"]  # the fewest sequences the mesh splits (init's are never computed)

    def init_fn() -> dict[str, Any]:
        params = model.init(jax.random.PRNGKey(cfg.seed), jnp.zeros((rows, cfg.seq_len), jnp.int32))
        return {"params": params, "opt_state": tx.init(params)}

    shardings = state_shardings(jax.eval_shape(init_fn), mesh)
    init_jitted = jax.jit(init_fn, out_shardings=shardings)

    def init() -> Any:
        return init_jitted()

    def loss_fn(params: Any, tokens: jax.Array) -> jax.Array:
        logits = model.apply(params, tokens[:, :-1]).astype(jnp.float32)
        return cast(jax.Array, optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean())

    def train_step(state: dict[str, Any], tokens: jax.Array) -> tuple[dict[str, Any], jax.Array]:
        loss, grads = jax.value_and_grad(loss_fn)(state["params"], tokens)
        updates, opt_state = tx.update(grads, state["opt_state"], state["params"])
        return {"params": optax.apply_updates(state["params"], updates), "opt_state": opt_state}, loss

    jitted = jax.jit(
        train_step,
        in_shardings=(shardings, batch_sharding),
        out_shardings=(shardings, replicated),
        donate_argnums=0,
    )
    shape = (global_batch, cfg.seq_len + 1)  # inputs are tokens[:, :-1], targets tokens[:, 1:]
    compiled: dict[str, Any] = {}

    def step_fn(state: Any, step: int) -> tuple[Any, jax.Array]:
        host = synthetic_batch(cfg.seed, step, global_batch, cfg.seq_len + 1, cfg.vocab_size)
        tokens = jax.make_array_from_callback(shape, batch_sharding, lambda idx: host[idx])
        return cast(tuple[Any, jax.Array], compiled.get("step", jitted)(state, tokens))

    abstract = jax.tree.map(
        lambda x, sharding: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding),  # type: ignore[no-untyped-call]
        jax.eval_shape(init_fn),
        shardings,
    )

    def lower() -> Any:
        """The step traced and lowered for ``abstract`` and the batch's shape, not compiled (jax.stages.Lowered)."""
        tokens = jax.ShapeDtypeStruct(shape, jnp.int32, sharding=batch_sharding)  # type: ignore[no-untyped-call]
        return jitted.lower(abstract, tokens)

    def precompile() -> dict[str, float]:
        """The step compiled for ``abstract`` and the batch's shape (jax.jit's ahead-of-time lower and compile,
        https://docs.jax.dev/en/latest/aot.html); step_fn calls it from then on. Returns the seconds of each part:
        tracing and lowering (Python, every start), then compiling or loading from the persistent cache."""
        started = time.perf_counter()
        lowered = lower()
        lowered_at = time.perf_counter()
        compiled["step"] = lowered.compile()
        return {"lower": lowered_at - started, "compile": time.perf_counter() - lowered_at}

    n_matmul = matmul_params(abstract["params"])
    n_total = sum(int(np.prod(x.shape)) for x in jax.tree.leaves(abstract["params"]))
    return Task(
        init=init,
        abstract=abstract,
        step_fn=step_fn,
        precompile=precompile,
        lower=lower,
        tokens_per_step=global_batch * cfg.seq_len,
        flops_per_step=model_flops_per_step(cfg, n_matmul, global_batch),
        describe=(
            f"transformer LM: {n_total:,} params ({n_matmul:,} in matmuls), {cfg.num_layers} layers, "
            f"d_model {cfg.d_model}, {cfg.num_heads} heads, seq {cfg.seq_len}, vocab {cfg.vocab_size}, "
            f"global batch {global_batch} over {mesh.size} device(s) (mesh {dict(mesh.shape)}), {cfg.dtype}, "
            f"attention {attention_impl(cfg, 'tpu' if interpret else None)}, remat {cfg.remat}"
        ),
    )
