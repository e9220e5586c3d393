"""hack/tpu_bench.py's save-policy measurement: planb's checkpoint interval (training/planb_train/interval.py) at its
defaults on the chip, for the v5e profile's default state (2.4 GB) and a 6.1 GB one.

Each size is one train.py run with checkpoints at the chart's interval (500 steps) and the policy's budget left at
train.py's default (3%), no other setting than the size's: the run's overhead is its mean step over its median one
(the median step is one no save touched; hack/tpu_bench.py's save-interval measurement counts it so), and beside it
what the policy measured of each save (its cost, its copy to host, the quiet step) and the step it chose for the
next, and how it placed the run's first save (its cost estimated from the state's bytes, nothing measured yet). The
runs share one device call (10 minutes at most): each size's steps are cut to what the call's time left allows
(``time_limit_s``, from the measurement's start), keeping the time its start and compilation take, and a size whose
steps would not reach its first save is skipped.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

#: The issue's 6.1 GB state: 7.8% of training in saves at 500 steps on the chip (mean step 0.2109 s over 0.1956 s).
SIZE_6GB = {
    "PLANB_D_MODEL": "1792",
    "PLANB_NUM_LAYERS": "10",
    "PLANB_NUM_HEADS": "14",
    "PLANB_SEQ_LEN": "2048",
    "PLANB_BATCH_PER_DEVICE": "4",
    "PLANB_REMAT": "minimal",
}
#: Each size: the steps it runs at most; the fewest worth running (past its first save under the policy and that
#: save's commit, about 20 and 35 steps on: a run short of it shows none of its saves, and is skipped); its step on
#: the chip without saves (s); and the seconds the rest of its run takes: its start with a cold compilation cache
#: (44.5 s to the first step for the profile's default, BENCHMARKS.md, "TPU v5e, one chip"), the save at its end and
#: the process's end. The policy's saves, from the chip's measures of 2026-12-07: the profile's default state at
#: 1,000 (3.2 s estimated, over 3% of the 74 s trained by 500) and at 2,000 (a 2.65 s save needs 597 steps of
#: 0.148 s after the one before), so 2,080 steps hold two; the 6.1 GB one at 1,500 and 3,000.
PLAN = (("profile-default", 2_080, 1_050, 0.151, 70.0), ("6.1gb", 3_050, 1_550, 0.196, 95.0))
#: What a run's figures keep of its metrics file (training/planb_train/loop.py's summary).
KEPT = ("ok", "state_bytes", "mean_step_s", "median_step_s", "steady_steps", "mfu", "first_step_s", "saves",
        "save_blocking_s", "save_committed_s", "save_step_s", "train_s", "wall_s", "env", "tail")  # fmt: skip


def steps_within(planned: int, step_s: float, start_s: float, left_s: float | None, every: int) -> int:
    """``planned`` steps, or fewer where ``left_s`` seconds (None: no limit) do not hold them and the run's start;
    never a multiple of ``every`` (a save at the last step would be written after the loop, uncounted)."""
    steps = planned if left_s is None else min(planned, int((left_s - start_s) / step_s))
    return steps + 1 if steps % every == 0 else steps


def figures(m: dict[str, Any], every: int) -> dict[str, Any]:
    """One run's figures: its overhead by mean over median step, and the policy's account of its saves."""
    out = {k: m[k] for k in KEPT if k in m}
    if not m.get("ok"):
        return out
    out["overhead_mean_over_median"] = m["mean_step_s"] / m["median_step_s"] - 1
    policy = m.get("save_policy") or {}
    saves = policy.get("saves") or []
    out.update(
        interval_steps=every,
        budget=policy.get("budget"),
        first_save=policy.get("first_save"),  # its estimated cost, the multiple it waited at last and where it saved
        saved_steps=[s["step"] for s in saves],
        measured_saves=saves,
        next_save_step=saves[-1]["next_step"] if saves else every,
    )
    if saves and saves[-1].get("trained_s"):
        # The policy's own measure at its last measured save: the run's saves over its training up to the commit.
        out["share_by_policy"] = saves[-1]["run_cost_s"] / saves[-1]["trained_s"]
    if saves and m.get("median_step_s"):
        # Over the whole run: every measured save's cost over the run's steps at the median step.
        out["share_of_run"] = sum(s["cost_s"] or 0.0 for s in saves) / (m["steady_steps"] * m["median_step_s"])
    return out


def measure_save_policy(
    run: Callable[[str, dict[str, str]], dict[str, Any]],
    emit: Callable[[str, dict[str, Any]], None],
    sizes: dict[str, dict[str, str]],
    every: int,
    time_limit_s: float | None,
    smoke: bool,
) -> None:
    """Each size of ``sizes`` (by PLAN's names) trained with checkpoints every ``every`` steps under the default
    policy: ``run(name, settings)`` runs train.py checkpointing into a directory of that name and returns its metrics;
    ``emit`` prints a JSON line."""
    started = time.monotonic()
    for name, planned, least, step_s, start_s in PLAN:
        if name not in sizes:  # not asked for (tpu_bench.py --sizes)
            continue
        left = None if time_limit_s is None else time_limit_s - (time.monotonic() - started)
        steps = planned if smoke else steps_within(planned, step_s, start_s, left, every)
        if steps < least:
            skipped = f"{steps} steps fit in the {left or 0:.0f} s left, fewer than the {least} to its first save"
            emit(f"save-policy-{name}", {"ok": False, "skipped": skipped})
            continue
        m = run(f"save-policy-{name}", {**sizes[name], "PLANB_EPOCHS": str(steps), "PLANB_CHECKPOINT_KEEP": "2"})
        emit(f"save-policy-{name}", figures(m, every))
