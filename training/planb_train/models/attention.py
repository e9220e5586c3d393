"""planb training job, models: the transformer's attention, XLA's or JAX's Pallas splash kernel for TPU."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import jax

from planb_train.config import TrainConfig
from planb_train.variables import ConfigError


def attention_impl(cfg: TrainConfig, platform: str | None = None) -> str:
    """The attention implementation a run uses: PLANB_ATTENTION, with ``auto`` resolved for the platform."""
    if cfg.attention != "auto":
        return cfg.attention
    platform = platform or jax.default_backend()
    return "splash" if platform == "tpu" and cfg.seq_len % SPLASH_BLOCK_MIN == 0 else "xla"


#: Splash attention's tiles: at most 512 query and key positions (MaxText's default sa_block_* for TPU), at least
#: 128 (a TPU lane); the sequence must be a multiple of the tile.
SPLASH_BLOCK_MAX, SPLASH_BLOCK_MIN = 512, 128


def splash_attention(num_heads: int, seq_len: int, interpret: bool = False) -> Callable[..., jax.Array]:
    """Causal multi-head attention over (batch, heads, seq, head_dim) by JAX's Pallas splash kernel for TPU.

    The kernel skips the key blocks a causal mask hides (about half of them), keeps no (seq x seq) score matrix in
    memory, and applies no 1/sqrt(head_dim) scale: the caller scales the queries. ``interpret`` runs the kernel in
    Pallas' interpreter (CPU tests compare it with XLA's attention)."""
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as kernel_lib
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as mask_lib

    block = max(SPLASH_BLOCK_MIN, min(SPLASH_BLOCK_MAX, seq_len))
    if seq_len % block:
        raise ConfigError("PLANB_SEQ_LEN", f"splash attention needs a multiple of {block}, got {seq_len}")
    mask = mask_lib.MultiHeadMask(tuple(mask_lib.CausalMask(shape=(seq_len, seq_len)) for _ in range(num_heads)))
    sizes = kernel_lib.BlockSizes(
        block_q=block,
        block_kv=block,
        block_kv_compute=block,
        block_q_dkv=block,
        block_kv_dkv=block,
        block_kv_dkv_compute=block,
        use_fused_bwd_kernel=True,  # dq in the dk/dv kernel: one backward pass over the blocks
    )
    mha = kernel_lib.make_splash_mha(
        mask=mask,
        block_sizes=sizes,
        head_shards=1,
        q_seq_shards=1,
        residual_checkpoint_name=ATTENTION_RESIDUALS,
        interpret=interpret,
    )
    return cast(Callable[..., jax.Array], jax.vmap(mha))


#: Names (jax.ad_checkpoint.checkpoint_name) of the attention's output and of the splash kernel's residuals (its
#: log-sum-exp per query), which PLANB_REMAT=minimal keeps so that the backward pass never reruns the kernel.
ATTENTION_OUT, ATTENTION_RESIDUALS = "attention_out", "attention_residuals"
