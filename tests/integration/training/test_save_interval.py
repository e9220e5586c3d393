"""planb's checkpoint interval in a real run: Orbax saves on CPU, measured by the loop, spaced by their cost.

The linear model's step takes under a millisecond on CPU and a save of its state tens of milliseconds of training
(the copy, Orbax's commit thread beside the steps), so saving at every multiple of PLANB_CHECKPOINT_EVERY=5 would
take most of the run. The assertions are on the policy's decisions against the inputs the run measured (what each
save cost, the quiet step), never on wall time: each save after the first lands on the first multiple of 5 at which
the run's saves, the next at their recent mean cost, are within the budget; the checkpoints on disk are those saves.
The first save of a run is estimated from the state's bytes: the linear model's 40 at the chip's rate
(under a microsecond) on a fresh job, at its own last save's cost (kept in planb-progress.json) on a resumed one.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from types import ModuleType

import pytest
from planb_train.config import load_config
from planb_train.interval import RECENT_SAVES
from planb_train.runners.plain import run_plain

LINEAR = {"PLANB_MODEL": "linear", "PLANB_ACCELERATOR": "cpu", "PLANB_RUNNER": "plain"}
RECENT = RECENT_SAVES


def checkpoints(ckpt: Path) -> list[int]:
    return sorted(int(p.name) for p in ckpt.iterdir() if p.is_dir() and p.name.isdigit())


def test_a_run_spaces_its_saves_by_what_they_cost_it(train: ModuleType, tmp_path: Path) -> None:
    """A budget of 25% rather than planb's 3%, so that a few thousand steps of a few seconds hold several saves."""
    every, budget, epochs = 5, 0.25, 4000
    ckpt = tmp_path / "ckpt"
    env = {
        **LINEAR,
        "PLANB_EPOCHS": str(epochs),
        "PLANB_LOG_EVERY": str(10 * epochs),
        "PLANB_CHECKPOINT_DIR": str(ckpt),
        "PLANB_CHECKPOINT_EVERY": str(every),
        "PLANB_CHECKPOINT_BUDGET": str(budget),
        "PLANB_CHECKPOINT_KEEP": "1000",  # every save stays on disk, to be counted
    }
    result = run_plain(load_config(env))
    assert result.end_step == epochs
    policy = result.metrics["save_policy"]
    assert (policy["every"], policy["budget"], policy["start_step"]) == (every, budget, 0)
    saves = policy["saves"]
    steps = [s["step"] for s in saves]
    # The checkpoints written: the measured saves, perhaps one more still being written at the end, and the end's.
    written = checkpoints(ckpt)
    assert written[: len(steps)] == steps and written[-1] == epochs and len(written) <= len(steps) + 2, written
    # Several saves on a quiet machine. On a loaded one a save can cost a second (1.06 s for the first, in a make test
    # of 2026-12-07, against tens of milliseconds quiet), and 25 % of the run's few seconds then hold no second one:
    # the policy must have said so (its next save at the run's end or past it), or the second was still being written.
    assert saves and (len(saves) >= 2 or saves[0]["next_step"] >= epochs or len(written) == 3), (saves, written)
    # Nothing measured yet: the state's 40 bytes at the chip's rate, under a microsecond, well within 25% of the 4
    # steps before the first multiple, which is saved.
    first = policy["first_save"]
    assert policy["earlier_save"] is None and policy["state_bytes"] == result.metrics["state_bytes"] < 1000
    assert first["estimated_cost_s"] < 1e-5 and "waited_at" not in first, first
    assert steps[0] == first["saved_at"] == every
    for k, save in enumerate(saves):
        step, quiet, trained = save["step"], save["quiet_step_s"], save["trained_s"]
        assert save["cost_s"] is not None and save["cost_s"] >= 0 and quiet > 0 and trained > 0, save
        costs = [s["cost_s"] for s in saves[: k + 1]]
        assert save["run_cost_s"] == sum(costs)
        # The next save: the first multiple of 5 past this one at which one more save at the recent mean cost keeps
        # the run's saves within the budget of its training (as measured up to the commit, then at the quiet step),
        # and its own cost within the budget of the steps since this one.
        mean = sum(costs[-RECENT:]) / len(costs[-RECENT:])
        now = step + save["steps_touched"]

        def within(n: int, costs: list[float] = costs, mean: float = mean, now: int = now, save: dict = save) -> bool:
            run = sum(costs) + mean <= budget * (save["trained_s"] + (n - now) * save["quiet_step_s"])
            return run and mean <= budget * (n - save["step"]) * save["quiet_step_s"]

        assert save["next_step"] % every == 0 and save["next_step"] > step and within(save["next_step"]), save
        if save["next_step"] > step + every:  # a multiple skipped: the one before would not have kept the budget
            assert not within(save["next_step"] - every), save
        # It took that multiple, or the first one after the boundary that found this save committed.
        if k + 1 < len(written) - 1:
            assert written[k + 1] == max(save["next_step"], -(-now // every) * every), (save, written)
    # Saving at every multiple would have cost more than the budget: the policy skipped multiples. (Some save, not
    # always the first: its baseline is the 4 steps before step 5, which can be slower than the steps beside its
    # write, and then it measures 0 s.)
    assert any(s["cost_s"] > budget * every * s["quiet_step_s"] for s in saves), saves
    assert all(b - a > every for a, b in itertools.pairwise(written[:-1])), written


def test_a_resumed_runs_first_save_is_estimated_from_the_jobs_last_save(train: ModuleType, tmp_path: Path) -> None:
    """A job of two runs: the first measures its saves and its progress file keeps the last; the second, resumed, waits
    with its first save for the multiple of 5 at which that save's cost is within the budget of its own training."""
    every, budget = 5, 0.25
    ckpt = tmp_path / "ckpt"
    env = {
        **LINEAR,
        "PLANB_LOG_EVERY": "100000",
        "PLANB_CHECKPOINT_DIR": str(ckpt),
        "PLANB_CHECKPOINT_EVERY": str(every),
        "PLANB_CHECKPOINT_BUDGET": str(budget),
    }
    first = run_plain(load_config({**env, "PLANB_EPOCHS": "1500"}))
    measured = [s for s in first.metrics["save_policy"]["saves"] if s["cost_s"] is not None]
    assert measured, first.metrics["save_policy"]
    kept = json.loads((ckpt / "planb-progress.json").read_text())["save"]
    size = first.metrics["state_bytes"]
    assert kept == {"step": measured[-1]["step"], "cost_s": measured[-1]["cost_s"], "state_bytes": size}

    second = run_plain(load_config({**env, "PLANB_EPOCHS": "3000"}))
    assert second.start_step == 1500
    policy = second.metrics["save_policy"]
    assert policy["earlier_save"] == kept
    decision = policy["first_save"]
    estimate = decision["estimated_cost_s"]
    assert estimate == pytest.approx(kept["cost_s"])  # the same state: the job's last save's cost
    assert estimate <= budget * decision["trained_s"], decision  # within the budget where it saved
    if "waited_at" in decision:  # and over it at the multiple before, where it waited
        assert decision["waited_at"] == decision["saved_at"] - every, decision
        assert estimate > budget * decision["waited_trained_s"], decision
    else:
        assert decision["saved_at"] == 1500 + every, decision
    saves = policy["saves"]
    assert saves and saves[0]["step"] == decision["saved_at"]
    # The progress file now keeps the second run's own last measured save.
    newest = [s for s in saves if s["cost_s"] is not None][-1]
    assert json.loads((ckpt / "planb-progress.json").read_text())["save"]["step"] == newest["step"]


def test_without_a_budget_every_multiple_is_saved(train: ModuleType, tmp_path: Path) -> None:
    """PLANB_CHECKPOINT_BUDGET=0: the user's interval exact, whatever the saves cost; each is still measured."""
    ckpt = tmp_path / "ckpt"
    env = {
        **LINEAR,
        "PLANB_EPOCHS": "40",
        "PLANB_CHECKPOINT_DIR": str(ckpt),
        "PLANB_CHECKPOINT_EVERY": "5",
        "PLANB_CHECKPOINT_BUDGET": "0",
        "PLANB_CHECKPOINT_KEEP": "100",
    }
    result = run_plain(load_config(env))
    assert checkpoints(ckpt) == list(range(5, 41, 5))
    assert result.metrics["save_policy"]["budget"] == 0
