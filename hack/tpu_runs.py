"""What one measurement of hack/tpu_bench.py runs: the job's sizes on one v5e chip (and their tiny CPU stand-ins for
``--smoke``), and ``Bench``, which starts training/train.py as one process with them and reads its metrics file.
hack/tpu_bench.py's measurements and hack/tpu_sweep.py's exploration both run through it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TRAIN_PY = ROOT / "training" / "train.py"
#: One v5e chip: 197 bf16 TFLOP/s peak (the catalog's, https://cloud.google.com/tpu/docs/v5e), 16 GiB HBM.
CHIP = {
    "PLANB_MODEL": "transformer",
    "PLANB_RUNNER": "plain",
    "PLANB_ACCELERATOR": "tpu",
    "PLANB_ACCELERATOR_TYPE": "TPU-V5LITEPOD",
    "PLANB_TOPOLOGY": "1x1",
    "PLANB_CHIPS_PER_WORKER": "1",
    "PLANB_NUM_WORKERS": "1",
    "PLANB_PEAK_TFLOPS": "197",
    "PLANB_DTYPE": "bfloat16",
    "PLANB_VOCAB_SIZE": "32768",
    "PLANB_LOG_EVERY": "10",
}


def size(d: int, layers: int, heads: int, seq: int, batch: int, remat: str = "none", **extra: str) -> dict[str, str]:
    return {
        "PLANB_D_MODEL": str(d),
        "PLANB_NUM_LAYERS": str(layers),
        "PLANB_NUM_HEADS": str(heads),
        "PLANB_SEQ_LEN": str(seq),
        "PLANB_BATCH_PER_DEVICE": str(batch),
        "PLANB_REMAT": remat,
        **extra,
    }


#: The v5e profile's default transformer (the catalog's, planb.catalog.training) and the documented large size.
PROFILE = size(1024, 12, 8, 1024, 16)
LARGE = size(2048, 8, 16, 2048, 8)
#: A training state over half of the chip's HBM: 738 M parameters x 12 bytes (float32 weights, Adam's two moments).
HALF_HBM = size(2048, 12, 16, 1024, 4, "full")
#: The sizes that did not fit before rematerialisation (BENCHMARKS.md, "TPU v5e, one chip": "did not fit").
TABLE = {
    "d2048-l8-seq2048-b8": LARGE,
    "d1536-l12-seq1024-b16": size(1536, 12, 12, 1024, 16, "minimal"),
    "d1024-l12-seq1024-b32": size(1024, 12, 8, 1024, 32, "full"),
    "d1024-l12-seq2048-b16": size(1024, 12, 8, 2048, 16, "full"),
}
SMOKE = {  # the same plan on CPU, tiny
    "PLANB_ACCELERATOR": "cpu",
    "PLANB_ACCELERATOR_TYPE": "",
    "PLANB_DTYPE": "float32",
    "PLANB_VOCAB_SIZE": "64",
}


def tiny(env: dict[str, str]) -> dict[str, str]:
    return {
        **env,
        "PLANB_D_MODEL": "32",
        "PLANB_NUM_LAYERS": "1",
        "PLANB_NUM_HEADS": "2",
        "PLANB_SEQ_LEN": "16",
        "PLANB_BATCH_PER_DEVICE": "2",
    }


class Bench:
    def __init__(self, work: Path, smoke: bool) -> None:
        self.work = work
        self.smoke = smoke
        self.cache = work / "jax-cache"  # the warm cache every measurement shares (beside the checkpoints)
        self.n = 0
        self.save_every = 500  # the chart's default interval
        self.run_s = 15.0  # seconds each preempted run trains before its SIGTERM
        self.runs = (0, 3)  # the preempted runs this call does (first, last)
        self.time_limit_s: float | None = None  # seconds a measurement that sizes its runs may take (save-policy)
        self.sizes: set[str] = set()  # save-policy's sizes by name (--sizes; empty: every size)

    def env(self, settings: dict[str, str]) -> dict[str, str]:
        base = {**CHIP, **(SMOKE if self.smoke else {})}
        merged = {**base, **(tiny(settings) if self.smoke else settings)}
        return {k: v for k, v in merged.items() if v != "" or k == "PLANB_ACCELERATOR_TYPE"}

    def start(self, settings: dict[str, str]) -> tuple[subprocess.Popen[str], Path, dict[str, str]]:
        self.n += 1
        metrics = self.work / f"metrics-{self.n}.json"
        env = self.env({"PLANB_COMPILATION_CACHE_DIR": str(self.cache), **settings, "PLANB_METRICS_FILE": str(metrics)})
        full = {k: v for k, v in os.environ.items() if not k.startswith("PLANB_")}
        full.update(env)
        proc = subprocess.Popen(
            [sys.executable, str(TRAIN_PY)], env=full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        return proc, metrics, env

    def run(self, settings: dict[str, str], timeout: float = 540) -> dict[str, Any]:
        started = time.monotonic()
        proc, metrics, env = self.start(settings)
        out, _ = proc.communicate(timeout=timeout)
        return self.result(proc, out, metrics, env, time.monotonic() - started)

    def result(
        self, proc: subprocess.Popen[str], out: str, metrics: Path, env: dict[str, str], wall: float
    ) -> dict[str, Any]:
        shown = {k: v for k, v in env.items() if k.removeprefix("PLANB_") in SHOWN}
        if proc.returncode not in (0, -signal.SIGTERM) or not metrics.is_file():
            return {"ok": False, "returncode": proc.returncode, "tail": out[-1500:], "wall_s": wall, "env": shown}
        m: dict[str, Any] = json.loads(metrics.read_text())
        m.update(ok=True, returncode=proc.returncode, wall_s=wall, env=shown, log=out)
        return m


SHOWN = {
    "D_MODEL",
    "NUM_LAYERS",
    "NUM_HEADS",
    "SEQ_LEN",
    "BATCH_PER_DEVICE",
    "REMAT",
    "ATTENTION",
    "SCAN_LAYERS",
    "VOCAB_SIZE",
    "CHECKPOINT_EVERY",
    "EPOCHS",
}
HBM_BYTES = 16 * 2**30  # one v5e chip (jax reports 15.75 GiB usable)


def emit(measure: str, figures: dict[str, Any]) -> None:
    print(json.dumps({"measure": measure, **figures}, sort_keys=False), flush=True)


def throughput(m: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "ok",
        "tokens_per_s",
        "mfu",
        "mean_step_s",
        "median_step_s",
        "steady_steps",
        "state_bytes",
        "attention",
        "remat",
        "first_step_s",
        "platform",
        "env",
        "tail",
        "returncode",
    )
    return {k: m[k] for k in keys if k in m}
