"""What lets train.py's transformer fit a chip: a resume that holds one copy of the state, rematerialisation, and
the splash attention kernel, each checked on CPU against the plain computation."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import ModuleType
from typing import Any

import jax
import numpy as np
import pytest
from planb_train.config import load_config
from planb_train.models.transformer import synthetic_batch
from planb_train.runners.plain import run_plain
from planb_train.variables import ConfigError

LM = {
    "PLANB_MODEL": "transformer",
    "PLANB_ACCELERATOR": "cpu",
    "PLANB_RUNNER": "plain",
    "PLANB_D_MODEL": "128",
    "PLANB_NUM_HEADS": "4",
    "PLANB_NUM_LAYERS": "2",
    "PLANB_SEQ_LEN": "16",
    "PLANB_VOCAB_SIZE": "512",
    "PLANB_BATCH_PER_DEVICE": "2",
    "PLANB_LEARNING_RATE": "0.01",
}


def live_bytes() -> int:
    """Device memory the live arrays hold, each buffer once (an array built from single-device arrays, as Orbax's
    restore builds them, shares their buffers)."""
    buffers: dict[int, int] = {}
    for array in jax.live_arrays():
        if array.is_deleted():
            continue
        for shard in array.addressable_shards:
            buffers[shard.data.unsafe_buffer_pointer()] = shard.data.nbytes
    return sum(buffers.values())


def test_a_resume_restores_into_the_abstract_state_and_builds_no_initial_one(
    train: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the chip a fresh state beside the restored one cannot fit when the state is half of HBM. Device memory
    in use (jax.live_arrays) while Orbax restores holds no state yet, and right after it one state: an initial
    state built as the restore's target would show as a second copy at both points."""
    import planb_train.checkpoints

    ckpt = tmp_path / "ckpt"
    env = {**LM, "PLANB_NUM_LAYERS": "1", "PLANB_CHECKPOINT_DIR": str(ckpt), "PLANB_CHECKPOINT_EVERY": "100"}
    first = run_plain(load_config({**env, "PLANB_EPOCHS": "3"}))
    state_bytes = first.metrics["state_bytes"]
    assert state_bytes > 2_000_000  # the state dwarfs anything else a run keeps on the device
    del first
    seen: dict[str, int] = {}
    original = planb_train.checkpoints.Checkpointer.restore

    def watched(self: Any, step: int, abstract: Any) -> Any:
        assert all(isinstance(x, jax.ShapeDtypeStruct) for x in jax.tree.leaves(abstract))
        seen["before"] = live_bytes() - baseline
        restored = original(self, step, abstract)
        seen["after"] = live_bytes() - baseline
        return restored

    monkeypatch.setattr(planb_train.checkpoints.Checkpointer, "restore", watched)
    baseline = live_bytes()
    resumed = run_plain(load_config({**env, "PLANB_EPOCHS": "5"}))
    assert (resumed.start_step, resumed.end_step) == (3, 5)
    assert resumed.metrics["restore_s"] is not None and resumed.metrics["first_step_s"] > 0
    assert seen["before"] < state_bytes / 10, (seen, state_bytes)
    assert state_bytes * 0.9 < seen["after"] < state_bytes * 1.5, (seen, state_bytes)


def _loss_and_grads(train: ModuleType, cfg: Any, interpret: bool = False) -> tuple[float, list[np.ndarray]]:
    import planb_train.models.transformer as models

    task = models.transformer_task(cfg, interpret=interpret)
    state = task.init()
    model = models.make_lm(cfg, interpret=interpret)
    tokens = synthetic_batch(cfg.seed, 0, cfg.batch_per_device, cfg.seq_len + 1, cfg.vocab_size)
    import optax

    def loss_fn(params: Any) -> jax.Array:
        logits = model.apply(params, tokens[:, :-1]).astype(np.float32)
        return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()

    # One compiled program, as train.py's step is, which JAX's persistent cache (conftest.py) holds on a warm machine;
    # op by op, each operation was dispatched and compiled apart (14.6 CPU-s for this file against 9.5, 2026-12-07).
    with jax.default_matmul_precision("highest"):
        loss, grads = jax.jit(jax.value_and_grad(loss_fn))(state["params"])
    return float(loss), [np.asarray(g) for g in jax.tree.leaves(grads)]


@pytest.mark.parametrize("remat", ["minimal", "full"])
def test_rematerialisation_computes_the_same_gradients(train: ModuleType, remat: str) -> None:
    """PLANB_REMAT trades memory for recomputation; the loss and every gradient stay those of no remat."""
    base = load_config({**LM, "PLANB_ATTENTION": "xla", "PLANB_NUM_LAYERS": "1", "PLANB_D_MODEL": "64"})
    loss0, grads0 = _loss_and_grads(train, base)
    loss1, grads1 = _loss_and_grads(train, dataclasses.replace(base, remat=remat))
    assert loss1 == pytest.approx(loss0, rel=1e-6)
    for a, b in zip(grads0, grads1, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_splash_attention_matches_xla_attention(train: ModuleType) -> None:
    """The Pallas splash kernel (run by Pallas' interpreter on CPU, as on the chip it runs compiled) gives XLA
    attention's loss and gradients, scaled and causal alike, under remat minimal (which keeps the kernel's output
    and residuals by name, so its backward pass never reruns the forward kernel)."""
    cfg = load_config(
        {**LM, "PLANB_SEQ_LEN": "128", "PLANB_D_MODEL": "256", "PLANB_NUM_HEADS": "2", "PLANB_NUM_LAYERS": "1",
         "PLANB_BATCH_PER_DEVICE": "1", "PLANB_VOCAB_SIZE": "256"}
    )  # fmt: skip
    loss0, grads0 = _loss_and_grads(train, dataclasses.replace(cfg, attention="xla"))
    loss1, grads1 = _loss_and_grads(train, dataclasses.replace(cfg, attention="splash", remat="minimal"), True)
    assert loss1 == pytest.approx(loss0, rel=1e-4)
    for a, b in zip(grads0, grads1, strict=True):
        np.testing.assert_allclose(b, a, rtol=2e-3, atol=2e-5)


def test_auto_attention_is_splash_on_tpu_only(train: ModuleType) -> None:
    import planb_train.models.attention as attention
    import planb_train.models.transformer as models

    cfg = load_config({**LM, "PLANB_SEQ_LEN": "1024"})
    assert cfg.attention == "auto"
    assert (attention.attention_impl(cfg, "tpu"), attention.attention_impl(cfg, "cpu")) == ("splash", "xla")
    short = load_config({**LM, "PLANB_SEQ_LEN": "100"})
    assert attention.attention_impl(short, "tpu") == "xla"  # not a whole number of 128-position tiles
    with pytest.raises(ConfigError, match="PLANB_ATTENTION: splash is a TPU kernel"):
        models.make_lm(dataclasses.replace(cfg, attention="splash"))
