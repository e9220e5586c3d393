#!/usr/bin/env python3
"""Tokens/s and MFU of train.py's transformer on the local accelerator, printed as one JSON line.

Called by hack/gpu_throughput.sh (which makes the venv). It imports training/'s package planb_train, runs the plain
JAX runner (no Ray) for a fixed number of steps on every local device (data parallel, batch sharded)
and reports train.py's own figures: tokens/s over the steady-state steps (the first two steps, which
compile, are excluded) and MFU = model FLOPs/s / (peak x devices), model FLOPs per step =
tokens x (6 N + 12 L D T) with N the matmul parameters. Peak: the accelerator catalog's dense bf16
TFLOP/s of the GPU model jax reports in device_kind (src/planb/catalog/gpu.py; H200/H100: 989 per
GPU), passed to train.py as PLANB_PEAK_TFLOPS the way the chart passes it; or --peak-tflops.

The JSON line also goes to $OUT/gpu_throughput.json when OUT is set.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

FULL = {  # ~185 M parameters; 16 x 1024 tokens per GPU per step
    "PLANB_D_MODEL": "1024",
    "PLANB_NUM_HEADS": "16",
    "PLANB_NUM_LAYERS": "12",
    "PLANB_SEQ_LEN": "1024",
    "PLANB_VOCAB_SIZE": "32768",
    "PLANB_BATCH_PER_DEVICE": "16",
    "PLANB_EPOCHS": "40",
}
QUICK = {  # ~40 M parameters
    "PLANB_D_MODEL": "512",
    "PLANB_NUM_HEADS": "8",
    "PLANB_NUM_LAYERS": "6",
    "PLANB_SEQ_LEN": "1024",
    "PLANB_VOCAB_SIZE": "32768",
    "PLANB_BATCH_PER_DEVICE": "16",
    "PLANB_EPOCHS": "20",
}
SMOKE = {  # --allow-cpu: proves the plumbing on a machine without a GPU
    "PLANB_D_MODEL": "64",
    "PLANB_NUM_HEADS": "4",
    "PLANB_NUM_LAYERS": "1",
    "PLANB_SEQ_LEN": "32",
    "PLANB_VOCAB_SIZE": "64",
    "PLANB_BATCH_PER_DEVICE": "4",
    "PLANB_EPOCHS": "8",
}


def catalog_peak_tflops(device_kind: str) -> float | None:
    """Peak dense bf16 TFLOP/s per GPU from planb's catalog, for the GPU model named in ``device_kind``.

    The catalog keys GPU machines by the model Ray names (H100, H200, B200); jax's device_kind
    carries it, e.g. 'NVIDIA H200'. None when no catalog GPU matches.
    """
    sys.path.insert(0, str(ROOT / "src"))
    from planb.catalog import gpu

    for machine in gpu.MACHINES:
        if re.search(rf"\b{re.escape(machine.ray_accelerator_type)}\b", device_kind):
            return machine.peak_tflops
    return None


def run_once(env: dict[str, str]) -> tuple[dict[str, Any], str]:
    """One plain run of the job's package (training/planb_train) in this process: its metrics and its output."""
    sys.path.insert(0, str(ROOT / "training"))
    from planb_train.config import load_config
    from planb_train.runners.plain import run_plain

    cfg = load_config(env)
    log = io.StringIO()
    with contextlib.redirect_stdout(log):
        result = run_plain(cfg)
    return result.metrics, log.getvalue()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smaller model, 20 steps")
    ap.add_argument("--steps", type=int, help="override the number of steps")
    ap.add_argument("--peak-tflops", type=float, help="peak dense TFLOP/s per device (default: the catalog's)")
    ap.add_argument("--allow-cpu", action="store_true", help="smoke test on CPU (tiny model, no MFU)")
    args = ap.parse_args()
    t0 = time.time()

    import jax

    devices = jax.devices()
    platform = devices[0].platform
    if platform != "gpu" and not args.allow_cpu:
        print(json.dumps({"error": f"no GPU visible to JAX (platform {platform!r})"}))
        return 2
    size = SMOKE if args.allow_cpu and platform != "gpu" else QUICK if args.quick else FULL
    env = {
        "PLANB_MODEL": "transformer",
        "PLANB_RUNNER": "plain",
        "PLANB_ACCELERATOR": "gpu" if platform == "gpu" else "cpu",
        "PLANB_DTYPE": "bfloat16" if platform == "gpu" else "float32",
        "PLANB_LOG_EVERY": "10",
        **size,
    }
    if args.steps:
        env["PLANB_EPOCHS"] = str(args.steps)
    peak = args.peak_tflops or (catalog_peak_tflops(devices[0].device_kind) if platform == "gpu" else None)
    if peak:
        env["PLANB_PEAK_TFLOPS"] = str(peak)

    errors: dict[str, str] = {}
    metrics: dict[str, Any] | None = None
    log = ""
    for attention in ("cudnn", "xla") if platform == "gpu" else ("xla",):
        try:
            metrics, log = run_once({**env, "PLANB_ATTENTION": attention})
            break
        except Exception as exc:  # cuDNN flash attention unavailable: fall back to XLA attention
            errors[attention] = f"{type(exc).__name__}: {str(exc)[:300]}"
    sys.stderr.write(log)
    if metrics is None:
        print(json.dumps({"error": "all attention implementations failed", "errors": errors}))
        return 1

    out = {
        "metric": "planb transformer training throughput",
        "device_kind": devices[0].device_kind,
        "devices": len(devices),
        "jax": jax.__version__,
        "attention": attention,
        "dtype": env["PLANB_DTYPE"],
        "model": {k.removeprefix("PLANB_").lower(): int(v) for k, v in size.items() if k != "PLANB_EPOCHS"},
        "steps": metrics["end_step"],
        "steady_steps": metrics["steady_steps"],
        "step_ms": round(1e3 * metrics["mean_step_s"], 3),
        "tokens_per_step": metrics["tokens_per_step"],
        "tokens_per_s": round(metrics["tokens_per_s"], 1),
        "model_tflops_per_step": float(f"{metrics['model_tflops_per_step']:.6g}"),
        "achieved_tflops_per_device": round(
            metrics["model_tflops_per_step"] / metrics["mean_step_s"] / len(devices), 2
        ),
        "peak_tflops_per_device": metrics["peak_tflops_per_chip"],
        "mfu": None if metrics.get("mfu") is None else round(metrics["mfu"], 4),
        "flops_formula": "tokens * (6*N_matmul + 12*L*D*T)",
        "first_loss": round(metrics["first_loss"], 4),
        "final_loss": round(metrics["final_loss"], 4),
        "wall_s": round(time.time() - t0, 1),
    }
    if errors:
        out["fallback_errors"] = errors
    line = json.dumps(out)
    print(line)
    if os.environ.get("OUT"):
        Path(os.environ["OUT"]).mkdir(parents=True, exist_ok=True)
        (Path(os.environ["OUT"]) / "gpu_throughput.json").write_text(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
