#!/usr/bin/env python3
"""JaxTrainer vs plain JAX: steady-state training step time on CPU, as a ratio.

Runs training/train.py as separate processes, on the same model and data:
  plain  PLANB_RUNNER=plain  one process, JAX on the local CPU device
  ray    PLANB_RUNNER=ray    Ray Train v2 JaxTrainer, local Ray cluster, ONE worker
One Ray worker keeps the work identical (2 CPU workers would each train a replica and share the
cores). Each run writes its metrics file; the figure used is mean_step_s: the mean wall time of a loop
iteration (step, logging, ray.train.report every PLANB_LOG_EVERY steps) over all steps after the first
two, which include compilation. Both runners get the same CPUs (--cpus, default 1: OMP_NUM_THREADS=1
and XLA's CPU thread pool off, the least sensitive setting on a shared 2-core box) and nice 0
(Ray would start its worker at nice 15, which only matters on a shared machine). Ray start-up,
worker start-up, model init and compilation are excluded, so the ratio is Ray Train's per-step
overhead, not its start-up cost. Each round runs plain, ray, plain and compares the Ray run with the
mean of the two plain runs around it, so load changes on a shared machine hit both sides; the figure
is the median over rounds of ray mean step / plain mean step (the 25th-percentile ratio, which
ignores bursts of load but also the slower reporting steps, is printed alongside).

Usage: .venv/bin/python hack/bench_training.py [--rounds 5] [--steps 150] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRAIN_PY = ROOT / "training" / "train.py"
MODEL = {
    "PLANB_MODEL": "transformer",
    "PLANB_ACCELERATOR": "cpu",
    "PLANB_D_MODEL": "128",
    "PLANB_NUM_HEADS": "4",
    "PLANB_NUM_LAYERS": "2",
    "PLANB_SEQ_LEN": "128",
    "PLANB_VOCAB_SIZE": "256",
    "PLANB_BATCH_PER_DEVICE": "8",
    "PLANB_LOG_EVERY": "10",
}


def run(runner: str, steps: int, cpus: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="planb-bench-") as tmp:
        metrics = Path(tmp) / "metrics.json"
        env = {k: v for k, v in os.environ.items() if not k.startswith("PLANB_") and k != "RAY_ADDRESS"}
        env.update(MODEL)
        env.update(
            PLANB_RUNNER=runner,
            PLANB_EPOCHS=str(steps),
            PLANB_METRICS_FILE=str(metrics),
            PLANB_NUM_WORKERS="1",
            PLANB_CPUS_PER_WORKER=str(cpus),
            RAY_DEDUP_LOGS="0",
            RAY_USAGE_STATS_ENABLED="0",
            # Ray sets OMP_NUM_THREADS to the worker's CPUs when unset; set it for both runners alike.
            OMP_NUM_THREADS=str(cpus),
            # One CPU: XLA's own thread pool off too, so a descheduled helper thread cannot stall a step.
            XLA_FLAGS="--xla_cpu_multi_thread_eigen=false" if cpus == 1 else os.environ.get("XLA_FLAGS", ""),
            # Ray runs workers at nice 15 by default; on a shared box that alone skews the ratio.
            RAY_worker_niceness="0",
        )
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, str(TRAIN_PY)], env=env, capture_output=True, text=True, timeout=900, check=False
        )
        wall = time.perf_counter() - t0
        if proc.returncode != 0 or not metrics.exists():
            sys.exit(f"{runner} run failed (rc {proc.returncode}):\n{(proc.stdout + proc.stderr)[-3000:]}")
        m = json.loads(metrics.read_text())
        keys = ("mean_step_s", "median_step_s", "p25_step_s", "report_s", "steady_steps")
        return {**{k: m[k] for k in keys}, "wall_s": wall}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--cpus", type=int, default=1, help="CPUs (and XLA/OMP threads) of both runners")
    ap.add_argument("--quick", action="store_true", help="1 round of 60 steps")
    args = ap.parse_args()
    rounds, steps = (1, 60) if args.quick else (args.rounds, args.steps)

    print(__doc__.split("Usage:")[0].strip())
    print(f"\nmodel: {MODEL}; {steps} steps per run, {rounds} round(s), Ray worker CPUs {args.cpus}\n")
    mean_ratios: list[float] = []
    p25_ratios: list[float] = []
    plain_ms: list[float] = []
    ray_ms: list[float] = []
    for r in range(rounds):
        # plain, ray, plain: the Ray run is compared with the mean of the plain runs around it, so a
        # change in the machine's load during the round affects both sides alike.
        before = run("plain", steps, args.cpus)
        ray = run("ray", steps, args.cpus)
        after = run("plain", steps, args.cpus)
        plain_mean = (before["mean_step_s"] + after["mean_step_s"]) / 2
        plain_p25 = (before["p25_step_s"] + after["p25_step_s"]) / 2
        mean_ratios.append(ray["mean_step_s"] / plain_mean)
        p25_ratios.append(ray["p25_step_s"] / plain_p25)
        plain_ms.append(1e3 * plain_mean)
        ray_ms.append(1e3 * ray["mean_step_s"])
        print(
            f"round {r + 1}: plain {1e3 * before['mean_step_s']:.2f} / {1e3 * after['mean_step_s']:.2f} ms/step, "
            f"ray {1e3 * ray['mean_step_s']:.2f} ms/step (of which ray.train.report "
            f"{1e3 * ray['report_s'] / ray['steady_steps']:.2f}); ratio of means {mean_ratios[-1]:.3f}, "
            f"of 25th percentiles {p25_ratios[-1]:.3f}; process wall plain {before['wall_s']:.1f} s, "
            f"ray {ray['wall_s']:.1f} s",
            flush=True,
        )
    summary = {
        "ratio_ray_over_plain": round(statistics.median(mean_ratios), 4),
        "ratio_min_max": [round(min(mean_ratios), 4), round(max(mean_ratios), 4)],
        "ratio_p25_steps": round(statistics.median(p25_ratios), 4),
        "goal": 1.10,
        "plain_ms_per_step": round(statistics.median(plain_ms), 3),
        "ray_ms_per_step": round(statistics.median(ray_ms), 3),
        "rounds": rounds,
        "steps": steps,
    }
    print("\nJaxTrainer / plain JAX steady-state step time (median over rounds):")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
