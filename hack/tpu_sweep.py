"""hack/tpu_bench.sh sweep: many transformer sizes, attention kernels and remat policies side by side in one
process on one chip (exploration: one chip open, each size compiled and run for eight steps; an out-of-memory size
is a result). The measurements BENCHMARKS.md quotes come from hack/tpu_bench.py, one process each."""

from __future__ import annotations

import sys
import time

from tpu_runs import HALF_HBM, LARGE, PROFILE, TABLE, TRAIN_PY, Bench, emit, size


def sweep(b: Bench, names: list[str]) -> None:
    """Many sizes in one process (exploration only: one chip open, each size compiled and run for a few steps)."""
    sys.path.insert(0, str(TRAIN_PY.parent))
    import gc

    import jax
    import numpy as np
    import planb_train.config as config
    import planb_train.models.transformer as models

    grid: dict[str, dict[str, str]] = {
        "profile-xla": {**PROFILE, "PLANB_ATTENTION": "xla"},
        "profile-splash": PROFILE,
        "large-minimal": size(2048, 8, 16, 2048, 8, "minimal"),
        "large-none": LARGE,
        "large-full": size(2048, 8, 16, 2048, 8, "full"),
        "large-minimal-b4": size(2048, 8, 16, 2048, 4, "minimal"),
        "large-minimal-xla": {**LARGE, "PLANB_ATTENTION": "xla"},
        **{f"table-{k}": v for k, v in TABLE.items()},
        "half-hbm": HALF_HBM,
    }
    for name in names or list(grid):
        settings = grid[name]
        env = b.env(settings)
        try:
            cfg = config.load_config(env)
            task = models.transformer_task(cfg)
            state = task.init()
            times = []
            for step in range(8):
                t = time.perf_counter()
                state, loss = task.step_fn(state, step)
                loss.block_until_ready()
                times.append(time.perf_counter() - t)
            mean = float(np.mean(times[3:]))
            mfu = task.flops_per_step / mean / (197e12)
            emit(
                f"sweep-{name}",
                {
                    "ok": True,
                    "mean_step_s": mean,
                    "mfu": mfu,
                    "compile_s": times[0],
                    "tokens_per_s": task.tokens_per_step / mean,
                    "state_bytes": task.state_bytes,
                    "loss": float(loss),
                },
            )
            del state, loss
        except Exception as exc:  # an out-of-memory size is a result here
            emit(f"sweep-{name}", {"ok": False, "error": str(exc)[:400]})
        gc.collect()
        jax.clear_caches()
