"""planb's checkpoint interval in a real run: Orbax saves on CPU, measured by the loop, spaced by their cost.

The linear model's step takes under a millisecond on CPU and a save of its state tens of milliseconds of training
(the copy, Orbax's commit thread beside the steps), so saving at every multiple of PLANB_CHECKPOINT_EVERY=5 would
take most of the run. The assertions are on the policy's decisions against the inputs the run measured (what each
save cost, the quiet step), never on wall time: each save after the first lands on the first multiple of 5 at which
the run's saves, the next at their recent mean cost, are within the budget; the checkpoints on disk are those saves.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from types import ModuleType

from tests.support.shared.training import training_module

LINEAR = {"PLANB_MODEL": "linear", "PLANB_ACCELERATOR": "cpu", "PLANB_RUNNER": "plain"}
RECENT = training_module("planb_train_interval").RECENT_SAVES


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
    result = train.run_plain(train.load_config(env))
    assert result.end_step == epochs
    policy = result.metrics["save_policy"]
    assert (policy["every"], policy["budget"], policy["start_step"]) == (every, budget, 0)
    saves = policy["saves"]
    assert len(saves) >= 2, saves
    steps = [s["step"] for s in saves]
    # The checkpoints written: the measured saves, perhaps one more still being written at the end, and the end's.
    written = checkpoints(ckpt)
    assert written[: len(steps)] == steps and written[-1] == epochs and len(written) <= len(steps) + 2, written
    assert steps[0] == every  # nothing measured yet: the user's interval
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
    # Saving at every multiple would have cost more than the budget: the policy skipped multiples.
    first = saves[0]
    assert first["cost_s"] > budget * every * first["quiet_step_s"], first
    assert all(b - a > every for a, b in itertools.pairwise(written[:-1])), written


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
    result = train.run_plain(train.load_config(env))
    assert checkpoints(ckpt) == list(range(5, 41, 5))
    assert result.metrics["save_policy"]["budget"] == 0
