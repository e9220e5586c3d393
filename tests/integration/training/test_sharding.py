"""The transformer on a mesh (training/planb_train/sharding.py): the mesh's shape, the rules that split parameters and
optimizer state, and a sharded step that computes what one device computes.

The steps run in a process of their own with four CPU devices (XLA_FLAGS), as JAX fixes its device count when it
starts, and JAX's persistent compilation cache; the splash kernel runs there in Pallas' interpreter under
shard_map, as it runs compiled on a slice."""

from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import pytest

from tests.support.shared.training import TRAINING, clean_env, jax_cache_dir

#: Run in a process with four CPU devices: the specs of the state, and the losses of three steps on 4 devices (the
#: default mesh, and data=2,fsdp=2) and on one device of them, from the same initial state and batches.
SCRIPT = """
import dataclasses, json, sys
import jax, numpy as np
import planb_train.config as config, planb_train.models.transformer as models
env = json.loads(sys.argv[1])
cfg = config.load_config(env)
out = {}
def run(c, devices=None, interpret=False):
    task = models.transformer_task(c, interpret=interpret, devices=devices)
    state = task.init()
    specs = {jax.tree_util.keystr(p): [list(s.sharding.shard_shape(s.shape)), str(s.sharding.spec)]
             for p, s in jax.tree_util.tree_flatten_with_path(state)[0]}
    losses = []
    for step in range(2):
        state, loss = task.step_fn(state, step)
        losses.append(float(loss))
    return specs, losses
specs, out["fsdp4"] = run(cfg)
out["specs"] = specs
_, out["data2"] = run(dataclasses.replace(cfg, mesh=(("data", 2), ("fsdp", 2))))
one = dataclasses.replace(cfg, batch_per_device=cfg.batch_per_device * 4)
_, out["one"] = run(one, devices=jax.devices()[:1])
_, out["splash4"] = run(dataclasses.replace(cfg, attention="splash", remat="minimal"), interpret=True)
print("RESULT " + json.dumps(out))
"""

LM = {
    "PLANB_MODEL": "transformer",
    "PLANB_ACCELERATOR": "cpu",
    "PLANB_D_MODEL": "128",
    "PLANB_NUM_HEADS": "2",
    "PLANB_NUM_LAYERS": "1",
    "PLANB_SEQ_LEN": "128",
    "PLANB_VOCAB_SIZE": "64",
    "PLANB_BATCH_PER_DEVICE": "1",
    "PLANB_LEARNING_RATE": "0.003",
}


@pytest.fixture(scope="module")
def four_devices() -> dict[str, Any]:
    env = clean_env(
        {
            "XLA_FLAGS": "--xla_force_host_platform_device_count=4",
            "JAX_PLATFORMS": "cpu",
            # JAX's persistent cache outside the checkout: a warm machine compiles none of these steps again
            "JAX_COMPILATION_CACHE_DIR": str(jax_cache_dir("sharding")),
            "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
        }
    )
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(LM)],
        cwd=TRAINING,
        env={**env, "PYTHONPATH": str(TRAINING)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    return dict(json.loads(line.removeprefix("RESULT ")))


def test_parameters_and_adam_moments_are_split_over_the_slice(four_devices: dict[str, Any]) -> None:
    """Every weight matrix, and Adam's two moments of it, holds a quarter of its rows or columns on each of the four
    devices (fsdp=4); layer norms and Adam's step count are whole on each."""
    specs = four_devices["specs"]
    qkv = [v for k, v in specs.items() if k.endswith("['qkv']['kernel']")]
    assert len(qkv) == 3, specs  # the parameter, Adam's mu and nu
    for shard, spec in qkv:
        assert shard == [32, 384] and spec == "PartitionSpec('fsdp', None)", (shard, spec)
    mlp_out = [v for k, v in specs.items() if k.endswith("['mlp_out']['kernel']")]
    assert all(shard == [512, 32] for shard, _ in mlp_out), mlp_out
    embed = [v for k, v in specs.items() if k.endswith("['embed']['embedding']")]
    assert all(shard == [64, 32] for shard, _ in embed), embed
    norms = [v for k, v in specs.items() if "LayerNorm" in k]
    assert norms and all(spec == "PartitionSpec(None,)" for _, spec in norms), norms
    counts = [v for k, v in specs.items() if k.endswith(".count")]
    assert counts and all(shard == [] for shard, _ in counts), counts


def test_a_sharded_step_computes_what_one_device_computes(four_devices: dict[str, Any]) -> None:
    """Two steps on four devices, split fsdp=4 or data=2,fsdp=2, give the losses of the same global batch on one."""
    one = four_devices["one"]
    assert one[0] != one[1]  # it trains
    for mesh in ("fsdp4", "data2"):
        assert four_devices[mesh] == pytest.approx(one, rel=2e-5), (mesh, four_devices[mesh], one)


def test_the_splash_kernel_runs_under_shard_map_on_a_mesh(four_devices: dict[str, Any]) -> None:
    """The Pallas kernel, which XLA cannot partition, runs on each device's share of the batch under shard_map and
    trains as XLA's attention does (Pallas' interpreter on CPU)."""
    assert four_devices["splash4"] == pytest.approx(four_devices["fsdp4"], rel=2e-3)


def _devices(n: int, slices: int = 1) -> list[Any]:
    return [SimpleNamespace(slice_index=i * slices // n, platform="cpu") for i in range(n)]


def test_the_mesh_takes_its_shape_from_the_slice_and_from_planb_mesh() -> None:
    import planb_train.config as config
    import planb_train.sharding as sharding

    def shape(n: int, slices: int = 1, mesh: str = "") -> dict[str, int]:
        cfg = config.load_config({"PLANB_MODEL": "transformer", "PLANB_ACCELERATOR": "cpu", "PLANB_MESH": mesh})
        return dict(sharding.mesh_shape(cfg, _devices(n, slices)))

    assert shape(16) == {"data": 1, "fsdp": 16, "tensor": 1}
    assert shape(32, slices=2) == {"data": 2, "fsdp": 16, "tensor": 1}  # one replica per slice
    assert shape(16, mesh="tensor=4") == {"data": 1, "fsdp": 4, "tensor": 4}
    assert shape(16, mesh="data=-1,fsdp=2") == {"data": 8, "fsdp": 2, "tensor": 1}
    with pytest.raises(config.ConfigError, match=r"PLANB_MESH: .*does not divide the 16 devices"):
        shape(16, mesh="fsdp=3")
    with pytest.raises(config.ConfigError, match="PLANB_MESH: data=2,fsdp=2,tensor=1 makes 4 devices, this run has 16"):
        shape(16, mesh="data=2,fsdp=2")
    for bad in ("fsdp", "pipeline=2", "fsdp=-1,data=-1", "fsdp=0", "fsdp=two", "fsdp=2,fsdp=2"):
        with pytest.raises(config.ConfigError, match="PLANB_MESH"):
            config.load_config({"PLANB_MESH": bad})


def test_a_dimension_the_mesh_does_not_divide_stays_whole() -> None:
    """A width that four devices do not divide is replicated, so any model runs on any mesh."""
    import planb_train.sharding as sharding

    mesh = SimpleNamespace(shape={"data": 1, "fsdp": 4, "tensor": 1})
    assert str(sharding.spec_for((6, 8), ("embed", "mlp"), mesh)) == "PartitionSpec(None, None)"
    assert str(sharding.spec_for((8, 6), ("embed", "mlp"), mesh)) == "PartitionSpec('fsdp', None)"
    path = [SimpleNamespace(key="blocks"), SimpleNamespace(key="qkv"), SimpleNamespace(key="kernel")]
    assert sharding.logical_axes(path, 3) == (None, "embed", "heads")  # scanned: the layers axis stays whole
