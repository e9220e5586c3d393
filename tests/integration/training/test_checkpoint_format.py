"""The checkpoints' format: written without zstd (training/planb_train/checkpoints.py, pytree_handler), and a
checkpoint an earlier train.py wrote with Orbax's default (StandardSave, compressed) still resumes, so that a job
upgraded between two runs loses nothing."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import jax
import numpy as np
from planb_train.config import load_config
from planb_train.runners.plain import run_plain

ENV = {
    "PLANB_MODEL": "transformer",
    "PLANB_ACCELERATOR": "cpu",
    "PLANB_RUNNER": "plain",
    "PLANB_D_MODEL": "64",
    "PLANB_NUM_HEADS": "2",
    "PLANB_NUM_LAYERS": "1",
    "PLANB_SEQ_LEN": "16",
    "PLANB_VOCAB_SIZE": "256",
    "PLANB_BATCH_PER_DEVICE": "2",
    "PLANB_CHECKPOINT_EVERY": "100",
}


def compressors(step_dir: Path) -> set[str]:
    """The codecs of every array Orbax wrote under ``step_dir`` (its zarr metadata, inside the OCDBT database)."""
    import tensorstore as ts

    found: set[str] = set()
    for manifest in step_dir.rglob("manifest.ocdbt"):
        kvs = ts.KvStore.open({"driver": "ocdbt", "base": f"file://{manifest.parent}"}).result()
        for key in kvs.list().result():
            if key.decode().endswith(".zarray"):
                meta = json.loads(kvs.read(key).result().value)
                found.add(str((meta.get("compressor") or {}).get("id", "none")))
    return found


def test_checkpoints_are_written_without_compression(train: ModuleType, tmp_path: Path) -> None:
    env = {**ENV, "PLANB_CHECKPOINT_DIR": str(tmp_path / "ckpt"), "PLANB_EPOCHS": "2"}
    run_plain(load_config(env))
    assert compressors(tmp_path / "ckpt" / "2") == {"none"}


def test_a_compressed_checkpoint_of_an_earlier_version_resumes(train: ModuleType, tmp_path: Path) -> None:
    import orbax.checkpoint as ocp
    import planb_train.checkpoints
    import planb_train.models.transformer

    ckpt = tmp_path / "ckpt"
    cfg = load_config({**ENV, "PLANB_CHECKPOINT_DIR": str(ckpt), "PLANB_EPOCHS": "5"})
    task = planb_train.models.transformer.transformer_task(cfg)
    state = task.init()
    with ocp.CheckpointManager(ckpt, options=ocp.CheckpointManagerOptions(create=True)) as old:
        old.save(3, args=ocp.args.StandardSave(state))  # Orbax's default handler: zstd
        old.wait_until_finished()
    assert compressors(ckpt / "3") == {"zstd"}
    planb_train.checkpoints.claim_checkpoints(cfg, has_checkpoints=False, write=True)

    resumed = run_plain(cfg)
    assert (resumed.start_step, resumed.end_step) == (3, 5)
    restored = planb_train.checkpoints.Checkpointer(cfg, writer=False)
    try:
        back = restored.restore(3, task.abstract)
    finally:
        restored.close()
    for a, b in zip(jax.tree.leaves(back), jax.tree.leaves(state), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
