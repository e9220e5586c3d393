"""The figures of hack/tpu_bench.py's preemptions measurement, from the runs it appended to preemptions.jsonl (one
job's runs may span several device calls), and the lines of a run's log that say how its step was compiled."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: What each preempted run's row keeps of its metrics file (training/planb_train/loop.py's summary).
PER_RUN = ("returncode", "start_step", "end_step", "restore_s", "compile_s", "first_step_s", "startup_s",
           "notice_save_s", "mean_step_s", "median_step_s", "saves", "save_blocking_s", "save_committed_s",
           "save_step_s", "train_s", "wall_s", "stopped_on_notice", "compile_parts_s", "written_at_s")  # fmt: skip


def startup_log(out: str, limit: int = 24) -> list[str]:
    """A run's lines about its compilation and the persistent cache before its first step (with
    JAX_DEBUG_LOG_MODULES=jax._src.compiler,jax._src.compilation_cache JAX says what it looked up and loaded)."""
    head = out.split("First step", 1)[0].splitlines()
    keep = ("train_step", "cache hit", "cache miss", "Resumed from")
    return [line[:300] for line in head if any(k in line for k in keep) and not line.startswith("DEBUG:jax")][:limit]


def preemption_figures(log: Path, ckpt_dir: Path, count: int) -> dict[str, Any]:
    """The figures over every run preemptions.jsonl holds (hack/tpu_bench.py's preemptions measurement)."""
    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    base = next((r["baseline"] for r in rows if "baseline" in r), {})
    runs = sorted((r for r in rows if "run" in r), key=lambda r: r["run"])
    record = json.loads((ckpt_dir / "planb-progress.json").read_text())
    kept = float(record.get("train_s") or 0.0)
    wall = sum(float(r["wall_s"]) for r in runs)
    plain = base.get("median_step_s")
    train = sum(float(r.get("train_s") or 0.0) for r in runs)
    save_steps = [s for r in runs for s in r.get("save_step_s") or []]
    extra = sum(s - plain for s in save_steps) if plain else None
    lost = [n for r in runs for n in r.get("lost") or []]
    return {
        "ok": all(r.get("ok") for r in runs) and len(runs) == count + 1 and len(lost) == count,
        "preemptions": count,
        "steps_lost": lost,
        "reached": record.get("reached"),
        "training_kept_s": kept,
        "wall_s": wall,
        "goodput": kept / wall if wall else None,
        "outside_training_s": [round(float(r["wall_s"]) - float(r.get("train_s") or 0.0), 1) for r in runs],
        # from the metrics file's writing (after the save on notice) to the process's end, as the bench saw it
        "teardown_s": [round(float(r["wall_s"]) - float(r.get("written_at_s") or 0.0), 1) for r in runs],
        "step_s_without_saves": plain,
        "saves": len(save_steps),
        "save_extra_s": extra,
        "save_overhead": extra / train if extra is not None and train else None,
        "per_run": [{k: r.get(k) for k in ("run", "ok", "lost", *PER_RUN)} for r in runs],
    }
