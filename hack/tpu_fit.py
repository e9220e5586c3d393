"""Does the compiler's fit verdict hold on the chip? For sizes around one TPU chip's HBM, compile the training step
with the chip's own compiler (memory_analysis: what one device needs) and then try to train three steps; one JSON
line a size: {"measure": "fit-...", "compiled_peak_gib", "hbm_gib", "verdict", "trained", "error"}.

``--aot`` asks the same of the TPU compiler on this machine's CPU for a v5e 1x1 slice
(jax.experimental.topologies; training/planb_train/aot.py), with no chip: the verdict the AOT test relies on.
Run on the TPU machine through hack/tpu_bench.sh's environment:
``python3 hack/tpu_fit.py`` (BENCHMARKS.md, "Compiled for each slice", says what it measured).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))

import planb_train.config as config  # the job's package, from training/

#: The v5e chip's sizes: the documented large one (d_model 2048, seq 2048, 8 layers, batch 8, trained at 68.5% MFU)
#: and the same with more sequences or layers, on both sides of the chip's 15.75 GiB.
SIZES = {
    "d2048-l8-b8": {"PLANB_BATCH_PER_DEVICE": "8", "PLANB_NUM_LAYERS": "8"},
    "d2048-l8-b10": {"PLANB_BATCH_PER_DEVICE": "10", "PLANB_NUM_LAYERS": "8"},
    "d2048-l8-b12": {"PLANB_BATCH_PER_DEVICE": "12", "PLANB_NUM_LAYERS": "8"},
    "d2048-l10-b8": {"PLANB_BATCH_PER_DEVICE": "8", "PLANB_NUM_LAYERS": "10"},
    "d2048-l8-b32": {"PLANB_BATCH_PER_DEVICE": "32", "PLANB_NUM_LAYERS": "8"},
    "d2048-l12-b8": {"PLANB_BATCH_PER_DEVICE": "8", "PLANB_NUM_LAYERS": "12"},
    "d2048-l14-b8": {"PLANB_BATCH_PER_DEVICE": "8", "PLANB_NUM_LAYERS": "14"},
    "d2048-l16-b8": {"PLANB_BATCH_PER_DEVICE": "8", "PLANB_NUM_LAYERS": "16"},
}
BASE = {
    "PLANB_MODEL": "transformer",
    "PLANB_ACCELERATOR": "tpu",
    "PLANB_ACCELERATOR_TYPE": "TPU-V5LITEPOD",
    "PLANB_TOPOLOGY": "1x1",
    "PLANB_CHIPS_PER_WORKER": "1",
    "PLANB_NUM_WORKERS": "1",
    "PLANB_DTYPE": "bfloat16",
    "PLANB_VOCAB_SIZE": "32768",
    "PLANB_D_MODEL": "2048",
    "PLANB_NUM_HEADS": "16",
    "PLANB_SEQ_LEN": "2048",
}
V5E_HBM_GIB = 16  # the catalog's (planb.catalog.training.HBM_GIB); the runtime gives the chip's own limit


def peak(compiled: Any) -> int:
    m = compiled.memory_analysis()
    return int(
        m.argument_size_in_bytes
        + m.output_size_in_bytes
        - m.alias_size_in_bytes
        + m.temp_size_in_bytes
        + m.generated_code_size_in_bytes
    )


def on_chip(name: str, cfg: config.TrainConfig) -> dict[str, Any]:
    import jax
    import planb_train.models.transformer as models

    limit = jax.devices()[0].memory_stats().get("bytes_limit", V5E_HBM_GIB * 2**30)
    out: dict[str, Any] = {"measure": f"fit-{name}", "hbm_gib": limit / 2**30}
    task = models.transformer_task(cfg)
    try:
        compiled = task.lower().compile()
        out["compiled_peak_gib"] = peak(compiled) / 2**30
        out["verdict"] = "fits" if peak(compiled) <= limit else "over"
    except Exception as exc:
        out.update(verdict="refused", error=str(exc).splitlines()[0][:300])
        compiled = None
    try:
        task.precompile()
        state = task.init()
        started = time.perf_counter()
        for step in range(3):
            state, loss = task.step_fn(state, step)
        out.update(trained=True, loss=float(loss), seconds=time.perf_counter() - started)
        del state
    except Exception as exc:
        out.update(trained=False, train_error=str(exc).splitlines()[0][:300])
    return out


def ahead_of_time(name: str, cfg: config.TrainConfig) -> dict[str, Any]:
    import planb_train.aot as aot

    out: dict[str, Any] = {"measure": f"aot-{name}", "hbm_gib": 15.75}
    try:
        done = aot.compile_step(cfg, aot.Slice("v5e", "1x1", 1))
        out.update(compiled_peak_gib=done.peak_bytes / 2**30, compile_s=done.compile_s)
        out["verdict"] = "fits" if done.peak_bytes <= 15.75 * 2**30 else "over"
    except Exception as exc:
        out.update(verdict="refused", error=str(exc).splitlines()[0][:300])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--aot", action="store_true", help="the CPU machine's TPU compiler, no chip")
    parser.add_argument("--only", default="", help="comma-separated size names")
    args = parser.parse_args()
    for name, settings in SIZES.items():
        if args.only and name not in args.only.split(","):
            continue
        cfg = config.load_config({**BASE, **settings})
        out = ahead_of_time(name, cfg) if args.aot else on_chip(name, cfg)
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
