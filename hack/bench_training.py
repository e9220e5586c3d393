#!/usr/bin/env python3
"""JaxTrainer vs plain JAX: steady-state training step time on CPU, as a ratio (issue 7).

Runs training/train.py twice per round as separate processes, on the same model and data:
  plain  PLANB_RUNNER=plain  one process, JAX on the local CPU device
  ray    PLANB_RUNNER=ray    Ray Train v2 JaxTrainer, local Ray cluster, ONE worker with all CPUs
One Ray worker keeps the work identical (2 CPU workers would each train a replica and share the
cores). Each run writes its metrics file; the figure used is mean_step_s: the mean wall time of a loop
iteration (step, logging, ray.train.report every PLANB_LOG_EVERY steps) over all steps after the first
two, which include compilation. Both runners get OMP_NUM_THREADS = the worker's CPUs and nice 0
(Ray would start its worker at nice 15, which only matters on a shared machine). Ray start-up,
worker start-up, model init and compilation are excluded, so the ratio is Ray Train's per-step
overhead, not its start-up cost. Rounds alternate the two runners; the reported ratio is the median
of the per-round ratios (the machine is shared).

Usage: .venv/bin/python hack/bench_training.py [--rounds 3] [--steps 150] [--quick]
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
        return {"mean_step_s": m["mean_step_s"], "median_step_s": m["median_step_s"], "wall_s": wall}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--cpus", type=int, default=os.cpu_count() or 1, help="CPUs of the one Ray worker")
    ap.add_argument("--quick", action="store_true", help="1 round of 60 steps")
    args = ap.parse_args()
    rounds, steps = (1, 60) if args.quick else (args.rounds, args.steps)

    print(__doc__.split("Usage:")[0].strip())
    print(f"\nmodel: {MODEL}; {steps} steps per run, {rounds} round(s), Ray worker CPUs {args.cpus}\n")
    ratios, median_ratios, rows = [], [], []
    for r in range(rounds):
        order = ("plain", "ray") if r % 2 == 0 else ("ray", "plain")
        res = {name: run(name, steps, args.cpus) for name in order}
        ratio = res["ray"]["mean_step_s"] / res["plain"]["mean_step_s"]
        mratio = res["ray"]["median_step_s"] / res["plain"]["median_step_s"]
        ratios.append(ratio)
        median_ratios.append(mratio)
        rows.append(res)
        print(
            f"round {r + 1}: plain {1e3 * res['plain']['mean_step_s']:.2f} ms/step "
            f"(process {res['plain']['wall_s']:.1f} s), ray {1e3 * res['ray']['mean_step_s']:.2f} ms/step "
            f"(process {res['ray']['wall_s']:.1f} s); ratio mean {ratio:.3f}, median-step {mratio:.3f}"
        )
    summary = {
        "ratio_ray_over_plain": round(statistics.median(ratios), 4),
        "ratio_of_median_steps": round(statistics.median(median_ratios), 4),
        "goal": 1.10,
        "plain_ms_per_step": round(1e3 * statistics.median(r["plain"]["mean_step_s"] for r in rows), 3),
        "ray_ms_per_step": round(1e3 * statistics.median(r["ray"]["mean_step_s"] for r in rows), 3),
        "rounds": rounds,
        "steps": steps,
    }
    print("\nJaxTrainer / plain JAX steady-state step time (median over rounds):")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
