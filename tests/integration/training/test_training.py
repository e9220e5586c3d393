"""Training behaviour of train.py (plain JAX, in this process): loss goes down, resume is exact."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import jax
import numpy as np
import pytest
from planb_train.config import load_config
from planb_train.models.transformer import matmul_params, synthetic_batch
from planb_train.runners.plain import run_plain

from tests.support.shared.training import run_script

# A transformer small enough for a 2-core CI box; still 4 blocks' worth of real attention + MLP.
SMALL_LM = {
    "PLANB_MODEL": "transformer",
    "PLANB_ACCELERATOR": "cpu",
    "PLANB_RUNNER": "plain",
    "PLANB_D_MODEL": "64",
    "PLANB_NUM_HEADS": "4",
    "PLANB_NUM_LAYERS": "2",
    "PLANB_SEQ_LEN": "32",
    "PLANB_VOCAB_SIZE": "64",
    "PLANB_BATCH_PER_DEVICE": "8",
    "PLANB_LEARNING_RATE": "0.01",
}
LINEAR = {"PLANB_MODEL": "linear", "PLANB_ACCELERATOR": "cpu", "PLANB_RUNNER": "plain"}

# Resume equivalence tolerance. The resumed run restores bit-identical float32 parameters and Adam
# moments and then executes the same compiled step on the same batches, so on one CPU device the
# results are expected to be identical; the tolerance only allows for float32 reassociation noise.
RTOL = 1e-6
ATOL = 1e-7


def test_linear_loss_decreases_like_the_seed(train: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    result = run_plain(load_config(LINEAR))
    out = capsys.readouterr().out
    # The seed's output: loss every 10 epochs over 50 epochs, then the completion line.
    for epoch in (0, 10, 20, 30, 40):
        assert f"Epoch {epoch}: Loss " in out
    assert "Epoch 49:" not in out
    assert out.rstrip().endswith("Training Complete!")
    losses = [result.losses[e] for e in sorted(result.losses)]
    assert all(b < a for a, b in itertools.pairwise(losses)), losses
    assert losses[0] > 1.0 and losses[-1] < 1e-3
    assert (result.start_step, result.end_step) == (0, 50)


def test_transformer_loss_decreases_and_reports_throughput(
    train: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = load_config({**SMALL_LM, "PLANB_EPOCHS": "60", "PLANB_PEAK_TFLOPS": "0.5"})
    result = run_plain(cfg)
    out = capsys.readouterr().out
    first, last = result.losses[0], result.losses[59]
    assert first > np.log(64) - 0.5  # starts near chance (uniform over the vocabulary)
    assert last < first - 1.5, result.losses  # learns the progressions
    assert "tokens/s" in out and "MFU" in out and "Training Complete!" in out
    m = result.metrics
    assert m["tokens_per_step"] == 8 * 32 and m["tokens_per_s"] > 0 and 0 < m["mfu"] < 1
    # FLOPs formula: tokens x (6 N + 12 L D T); N excludes the embedding tables.
    n = matmul_params(result.state["params"])
    assert m["model_tflops_per_step"] * 1e12 == pytest.approx(8 * 32 * (6 * n + 6 * 2 * 64 * 32))


def test_synthetic_data_depends_only_on_seed_and_step(train: ModuleType) -> None:
    a = synthetic_batch(0, 7, 4, 16, 64)
    np.testing.assert_array_equal(a, synthetic_batch(0, 7, 4, 16, 64))
    assert not np.array_equal(a, synthetic_batch(0, 8, 4, 16, 64))
    assert not np.array_equal(a, synthetic_batch(1, 7, 4, 16, 64))
    assert a.shape == (4, 16) and a.min() >= 0 and a.max() < 64


def _leaves(tree: Any) -> list[np.ndarray]:
    return [np.asarray(x) for x in jax.tree.leaves(tree)]


@pytest.mark.parametrize("base", [SMALL_LM, LINEAR], ids=["transformer", "linear"])
def test_resume_matches_uninterrupted_run(train: ModuleType, tmp_path: Path, base: dict[str, str]) -> None:
    total, k = 24, 11
    straight = run_plain(load_config({**base, "PLANB_EPOCHS": str(total)}))

    ckpt = tmp_path / "ckpt"
    env = {**base, "PLANB_EPOCHS": str(total), "PLANB_CHECKPOINT_DIR": str(ckpt), "PLANB_CHECKPOINT_EVERY": "5"}
    env["PLANB_CHECKPOINT_BUDGET"] = "0"  # every multiple of 5 saved, whatever it costs these small steps
    first = run_plain(load_config({**env, "PLANB_STOP_AFTER": str(k)}))
    assert (first.start_step, first.end_step) == (0, k)
    assert sorted(int(p.name) for p in ckpt.iterdir() if p.name.isdigit()) == [5, 10, k]
    second = run_plain(load_config(env))
    assert (second.start_step, second.end_step) == (k, total)

    # Whole state: parameters and (for the transformer) the optimizer's moments and step count.
    a, b = _leaves(straight.state), _leaves(second.state)
    assert len(a) == len(b) > 0
    for x, y in zip(a, b, strict=True):
        np.testing.assert_allclose(y, x, rtol=RTOL, atol=ATOL)
    # And training really moved them: the interrupted half alone is different.
    assert any(not np.allclose(x, y) for x, y in zip(_leaves(first.state), a, strict=True))

    # A third start finds the finished run's checkpoint and does no more steps.
    third = run_plain(load_config(env))
    assert (third.start_step, third.end_step) == (total, total) and third.losses == {}


def test_data_parallel_over_two_devices(tmp_path: Path) -> None:
    """Two host CPU devices: the batch is sharded over a 2-device mesh and training still converges."""
    metrics = tmp_path / "metrics.json"
    proc = run_script(
        {
            **SMALL_LM,
            "PLANB_EPOCHS": "40",
            "PLANB_METRICS_FILE": str(metrics),
            "XLA_FLAGS": "--xla_force_host_platform_device_count=2",
        },
        timeout=180,
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "global batch 16 over 2 device(s)" in proc.stdout
    assert "Training Complete!" in proc.stdout
    m = json.loads(metrics.read_text())
    assert m["devices"] == 2 and m["tokens_per_step"] == 16 * 32
    assert m["final_loss"] < m["first_loss"] - 1.0
