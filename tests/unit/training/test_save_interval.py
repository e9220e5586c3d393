"""planb's checkpoint interval (training/planb_train/interval.py): its decisions from measured inputs.

The module is the standard library only; these tests feed it step times and saves as the loop would, and check
each decision: saves on the user's grid (multiples of PLANB_CHECKPOINT_EVERY), spaced so that a run's saves take at
most the budget of its training, the first one by its estimated cost (the state's bytes at the job's last measured
rate, kept across restarts in planb-progress.json, or the chip's), and every multiple kept without a budget.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import planb_train.interval as interval
import pytest

next_save_step = interval.next_save_step
SaveInterval = interval.SaveInterval
#: The states of the chip's save-policy runs (docs/tpu-v5e-save-policy-2026-12-07.jsonl, state_bytes).
STATE_2_4GB, STATE_6_1GB = 2_631_180_292, 6_079_524_868


#: What the loop measured of the first save on one TPU v5e chip (docs/tpu-v5e-save-policy-2026-12-07.jsonl, the
#: measured_saves of each run): the steps saved and committed at, the training by then less the save, its cost, the
#: quiet step; and the next save's step the loop chose from them.
ON_THE_CHIP = {
    "6.1gb": (500, 535, 104.45841486549963, 7.2899119775003385, 0.1955933504999905, 2500),
    "profile-default": (500, 520, 76.82785943699994, 2.6520967540000413, 0.1479001554999968, 1500),
}


@pytest.mark.parametrize("name", sorted(ON_THE_CHIP))
def test_the_decisions_on_the_chip_follow_from_what_it_measured(name: str) -> None:
    """The 6.1 GB state: 7.29 s a save against 0.1956 s steps. Two saves in 3% need 486 s of training, 1,951 steps
    past the commit's 535 (to 2,486), and one save's own 7.29 s 1,242 steps past the save (to 1,742): the next
    multiple of 500 is 2,500. The 2.4 GB default state: 2.65 s against 0.1479 s, to 1,196 and to 1,098: 1,500, so
    1,000 is skipped."""
    saved_at, now, trained, cost, quiet, chosen = ON_THE_CHIP[name]
    assert next_save_step(500, 0.03, saved_at, now, trained, [cost], quiet) == chosen


def test_a_save_within_the_budget_keeps_the_users_500_steps() -> None:
    """1.85 s a save (the 2.4 GB state on 2026-12-05) against 0.148 s steps: two saves need 834 steps at 3%, three
    1,251, one 417 since the one before, so the user's multiples stand."""
    assert next_save_step(500, 0.03, 500, 540, 539 * 0.148, [1.85], 0.148) == 1000
    assert next_save_step(500, 0.03, 1000, 1040, 1039 * 0.148, [1.85, 1.85], 0.148) == 1500


def test_the_budget_counts_the_runs_own_training() -> None:
    """A run resumed at step 1234 has trained 65.2 s by its first save's commit (326 steps of 0.2 s): (10 + 10) / 0.03
    = 667 s needs 3,007 steps more, to 4,568; the multiple of 500 after that is 5,000."""
    assert next_save_step(500, 0.03, 1500, 1561, 326 * 0.2, [10.0], 0.2) == 5000


def test_the_next_saves_cost_is_the_mean_of_the_recent_ones() -> None:
    """Five saves so far (14 s), the next predicted at the mean of the last four (1 s): 15 s is 3% of 500 s of
    training, 1,000 steps of 0.1 s past the 400 s trained by step 4,010."""
    assert next_save_step(100, 0.03, 4000, 4010, 400.0, [10.0, 1.0, 1.0, 1.0, 1.0], 0.1) == 5100


def test_training_saved_up_is_not_spent_in_a_burst_of_saves() -> None:
    """1,000 s trained and one save of 1 s: the run as a whole could afford saves at every multiple of 100 for a long
    while, but the next save's own 1 s needs 333 steps of 0.1 s at 3% since the one before."""
    assert next_save_step(100, 0.03, 10_000, 10_010, 1000.0, [1.0], 0.1) == 10_400


@pytest.mark.parametrize(
    ("budget", "costs", "quiet"),
    [(0.0, [10.0], 0.2), (0.03, [], 0.2), (0.03, [10.0], math.nan), (0.03, [10.0], 0.0)],
    ids=["no budget", "nothing measured", "no quiet step", "zero step"],
)
def test_without_a_budget_or_a_measure_the_next_multiple(budget: float, costs: list[float], quiet: float) -> None:
    assert next_save_step(500, budget, 1500, 1561, 300.0, costs, quiet) == 2000


def run(policy: SaveInterval, steps: int, step_s: float, copy_s: float, write_steps: int, slow_s: float) -> list[int]:
    """Drive ``policy`` as the loop and the Checkpointer do, over ``steps`` steps of ``step_s``; a save's copy to host
    adds ``copy_s`` to the step after it, and its write ``slow_s`` to each of the ``write_steps`` steps after that,
    the last of which finds it committed. The steps saved."""
    now, saved, writing = 0.0, [], -1
    slow_left = 0
    for step in range(1, steps + 1):
        now += step_s
        if slow_left:
            now += slow_s
            slow_left -= 1
        policy.tick(step, now)
        if writing >= 0 and step >= writing:
            policy.committed()
            writing = -1
        if policy.due(step):
            saved.append(step)
            policy.saved(step, copy_s)
            now += copy_s
            slow_left = write_steps
            writing = step + write_steps + 1
    return saved


def test_a_run_of_costly_saves_keeps_them_within_the_budget_from_the_second_save_on() -> None:
    """Saves of a 1.55 s copy and 60 steps 0.14 s slower (9.95 s in all) against 0.2 s steps. The first at the user's
    500; the second where the two are 3% of the training (step 3,318: 3,500); from then on each 1,658 steps after the
    one before at least (9.95 s in 3% of 0.2 s steps), the next multiple of 500."""
    policy = SaveInterval(500, 0.03)
    saved = run(policy, 20_000, 0.2, 1.55, 60, 0.14)
    assert saved == [500, 3500, 5500, 7500, 9500, 11_500, 13_500, 15_500, 17_500, 19_500]
    assert len(policy.measured) == len(saved)
    for k, m in enumerate(policy.measured):
        assert (m.step, m.quiet_step_s, m.steps_touched) == (saved[k], pytest.approx(0.2), 61)
        assert m.cost_s == pytest.approx(1.55 + 60 * 0.14)  # the copy, and the slowdown beside the write
        assert m.trained_s == pytest.approx((m.step + 60) * 0.2)  # steps 2 to the commit's, at 0.2 s
        assert m.next_step == (saved[k + 1] if k + 1 < len(saved) else 21_500)
        if k:  # from the second save on, the saves so far are within 3% of the training up to each
            assert m.run_cost_s / m.trained_s <= 0.03
    assert policy.measured[-1].run_cost_s / (19_999 * 0.2) <= 0.03  # and over the whole run


def test_cheap_saves_keep_every_multiple_of_the_users_interval() -> None:
    policy = SaveInterval(500, 0.03)
    assert run(policy, 3000, 0.15, 0.8, 40, 0.02) == [500, 1000, 1500, 2000, 2500, 3000]
    assert all(m.next_step == m.step + 500 for m in policy.measured)


def test_no_budget_saves_at_every_multiple_whatever_it_costs() -> None:
    policy = SaveInterval(500, 0.0)
    assert run(policy, 3000, 0.2, 1.5, 60, 0.14) == [500, 1000, 1500, 2000, 2500, 3000]


def test_no_save_starts_while_the_one_before_is_written() -> None:
    """A write longer than the interval (20 steps of a 10-step interval): the multiples in between are skipped."""
    policy = SaveInterval(10, 0.5)
    saved = run(policy, 100, 1.0, 0.0, 20, 0.0)
    assert saved[0] == 10 and all(b - a > 20 for a, b in itertools.pairwise(saved))


def test_a_save_before_any_quiet_step_is_not_measured_and_the_users_interval_stands() -> None:
    policy = SaveInterval(1, 0.03)
    policy.tick(1, 0.0)
    assert policy.due(1)
    policy.saved(1, 0.5)
    policy.tick(2, 1.0)
    m = policy.committed()
    assert m is not None and math.isnan(m.cost_s) and m.next_step == 2
    assert m.to_dict()["cost_s"] is None  # JSON's null, not NaN
    assert "no quiet step" in policy.line(m)


def test_the_record_names_the_settings_and_every_measured_save() -> None:
    policy = SaveInterval(500, 0.03)
    run(policy, 1200, 0.2, 1.5, 60, 0.14)
    record = policy.record()
    assert (record["every"], record["budget"], record["start_step"]) == (500, 0.03, 0)
    assert [s["step"] for s in record["saves"]] == [500]
    assert record["saves"][0]["next_step"] == 3500
    line = policy.line(policy.measured[0])
    assert line.startswith("Checkpoint step 500 cost 9.90 s of training (copy to host 1.50 s, 61 step(s)")
    assert line.endswith(
        "saves so far 8.8% of 112.0 s of training; the next at step 3500 (every 500 steps, at most 3%)"
    )


import planb_train.config as config  # noqa: E402


@pytest.mark.parametrize(("raw", "budget"), [("", 0.03), ("0", 0.0), ("0.1", 0.1), (" 0.5 ", 0.5)])
def test_the_budget_is_a_share_of_training(raw: str, budget: float) -> None:
    assert config.load_config({"PLANB_CHECKPOINT_BUDGET": raw}).checkpoint_budget == budget


@pytest.mark.parametrize("raw", ["1", "1.5", "-0.01", "nan", "3%", "inf"])
def test_a_budget_that_is_no_share_is_refused_by_name(raw: str) -> None:
    with pytest.raises(config.ConfigError, match=r"^PLANB_CHECKPOINT_BUDGET: must be"):
        config.load_config({"PLANB_CHECKPOINT_BUDGET": raw})


def test_the_prior_is_the_slower_of_the_rates_measured_on_the_chip() -> None:
    """7.29 s for 6,079,524,868 bytes (0.83 GB/s) and 2.65 s for 2,631,180,292 (0.99 GB/s): the first, so that the 2.4
    GB state is estimated at 3.16 s, over what it cost, never under."""
    assert interval.PRIOR_BYTES == STATE_6_1GB
    assert round(interval.PRIOR_COST_S, 2) == 7.29
    assert interval.estimated_cost(STATE_6_1GB, None) == pytest.approx(7.29, abs=0.005)
    assert interval.estimated_cost(STATE_2_4GB, None) == pytest.approx(3.155, abs=0.001)
    assert interval.estimated_cost(STATE_2_4GB, None) > ON_THE_CHIP["profile-default"][3]  # its 2.65 s measured
    # The job's own rate, once it has one: its last save's cost for its bytes, scaled to the state's.
    assert interval.estimated_cost(2000, {"step": 5, "cost_s": 0.03, "state_bytes": 1000}) == pytest.approx(0.06)


@pytest.mark.parametrize(
    ("state", "step_s", "copy_s", "cost_s", "first", "saved"),
    [
        # 3.16 s estimated against 3% of 499 steps of 0.148 s (2.22 s) at 500, of 999 (4.44 s) at 1,000. Measured at
        # 2.65 s, the next save's own cost needs 597 steps since it: 2,000, then every 1,000 (1.8% of training).
        (STATE_2_4GB, 0.148, 1.0, 2.65, 1000, [1000, 2000, 3000, 4000, 5000]),
        # 7.29 s against 3% of 999 steps of 0.1956 s (5.86 s) at 1,000 and of 1,499 (8.80 s) at 1,500; then 1,243
        # steps since each save: every 1,500.
        (STATE_6_1GB, 0.1956, 3.28, 7.29, 1500, [1500, 3000, 4500]),
    ],
    ids=["2.4gb", "6.1gb"],
)
def test_the_first_save_waits_for_the_multiple_its_estimated_cost_keeps_within_the_budget(
    state: int, step_s: float, copy_s: float, cost_s: float, first: int, saved: list[int]
) -> None:
    """The chip's states at the chart's 500 steps, with no save of the job measured before: the first save is not at
    500 (where a save cost 3.5% and 7.0% of the training before it on the chip) but at the first multiple where the
    state's bytes at the prior's rate are within 3% of the run's training so far."""
    policy = SaveInterval(500, 0.03, state)
    steps = saved[-1] + 100
    assert run(policy, steps, step_s, copy_s, 20, (cost_s - copy_s) / 20) == saved
    estimate = interval.estimated_cost(state, None)
    assert policy.first == {
        "waited_at": first - 500,
        "waited_trained_s": pytest.approx((first - 501) * step_s),
        "saved_at": first,
        "trained_s": pytest.approx((first - 1) * step_s),
    }
    assert estimate > 0.03 * policy.first["waited_trained_s"] and estimate <= 0.03 * policy.first["trained_s"]
    assert policy.measured[0].cost_s == pytest.approx(cost_s)
    # Every save of the run, the first included, within 3% of the training up to its commit.
    for m in policy.measured:
        assert m.run_cost_s / m.trained_s <= 0.03, m
    record = policy.record()
    assert record["state_bytes"] == state and record["earlier_save"] is None
    assert record["first_save"]["estimated_cost_s"] == pytest.approx(estimate)


def test_the_first_wait_is_logged_with_its_estimate() -> None:
    policy = SaveInterval(500, 0.03, STATE_2_4GB)
    run(policy, 600, 0.148, 1.0, 20, 0.08)
    tiny = SaveInterval(5, 0.25, 40)
    tiny.remember({"step": 5, "cost_s": 0.146, "state_bytes": 40})
    run(tiny, 6, 0.001, 0.0, 0, 0.0)
    assert tiny.notes[0].startswith(
        "Checkpoint step 5 skipped: a save of the state (40 bytes) is estimated at 0.146 s of training (at the rate "
        "of this job's save of step 5, 0.146 s for 40 bytes), over 25% of the 0.0 s trained;"
    )
    assert policy.notes == [
        "Checkpoint step 500 skipped: a save of the state (2.63 GB) is estimated at 3.16 s of training (at the rate of "
        "7.29 s for 6.08 GB, measured on a TPU v5e chip), over 3% of the 73.9 s trained; the first save waits for a "
        "multiple of 500 steps within it"
    ]


@pytest.mark.parametrize(
    ("cost_s", "first"),
    [(1.0, 500), (10.0, 2500)],
    ids=["cheaper than the prior", "dearer than the prior"],
)
def test_a_resumed_runs_first_save_is_estimated_from_the_jobs_last_one(cost_s: float, first: int) -> None:
    """The job's own rate, not the chip's: 1 s for the 2.4 GB state is within 3% of 73.9 s at step 500; 10 s needs
    333 s of training, 2,253 steps of 0.148 s past the resume at 10,000."""
    policy = SaveInterval(500, 0.03, STATE_2_4GB)
    policy.remember({"step": 9500, "cost_s": cost_s, "state_bytes": STATE_2_4GB})
    assert policy.estimate() == pytest.approx(cost_s)
    saved = []
    for step in range(10_001, 13_001):
        policy.tick(step, (step - 10_000) * 0.148)
        if policy.due(step):
            saved.append(step)
            break
    assert saved == [10_000 + first]
    assert policy.record()["earlier_save"] == {"step": 9500, "cost_s": cost_s, "state_bytes": STATE_2_4GB}
    if first == 500:
        assert policy.notes == []
    else:
        assert "at the rate of this job's save of step 9500, 10 s for 2.63 GB" in policy.notes[0]


def test_a_small_state_saves_at_the_users_first_multiple() -> None:
    """The linear model's state (a few hundred bytes) or a transformer of 50 MB: milliseconds or less, within 3% of
    the 500 steps before the first multiple."""
    for state in (400, 50 << 20):
        policy = SaveInterval(500, 0.03, state)
        assert run(policy, 600, 0.01, 0.001, 5, 0.0)[0] == 500
    policy = SaveInterval(5, 0.25, 400)  # the CPU integration test's: 4 steps of a millisecond at step 5
    assert run(policy, 6, 0.001, 0.0, 0, 0.0) == [5]


def test_the_job_keeps_its_last_measured_save_for_its_next_run() -> None:
    policy = SaveInterval(500, 0.03, STATE_2_4GB)
    earlier = {"step": 500, "cost_s": 2.0, "state_bytes": STATE_2_4GB}
    policy.remember(earlier)
    assert policy.memory() == earlier  # nothing of this run measured yet: the earlier run's carried on
    # 2 s estimated is within 3% of 73.9 s at step 500; each measured at 2.65 s, the next 597 steps on at least.
    assert run(policy, 2200, 0.148, 1.0, 20, 0.0825) == [500, 1500]
    assert policy.memory() == {"step": 1500, "cost_s": pytest.approx(2.65), "state_bytes": STATE_2_4GB}
    assert SaveInterval(500, 0.03).memory() is None


@pytest.mark.parametrize(
    "entry",
    [
        None,
        "2.65",
        {"cost_s": 2.65, "state_bytes": 10},
        {"step": 5, "cost_s": "nan", "state_bytes": 10},
        {"step": 5, "cost_s": -1, "state_bytes": 10},
        {"step": 5, "cost_s": 1.0, "state_bytes": 0},
        {"step": 5, "cost_s": [1], "state_bytes": 10},
    ],
)
def test_a_record_that_is_no_measured_save_leaves_the_prior(entry: object) -> None:
    policy = SaveInterval(500, 0.03, STATE_2_4GB)
    policy.remember(entry)
    assert policy.earlier is None and policy.estimate() == pytest.approx(3.155, abs=0.001)


import planb_train.progress as progress  # noqa: E402


def test_the_progress_file_carries_the_jobs_last_save_to_its_next_run(tmp_path: Path) -> None:
    """planb-progress.json keeps the last measured save; a run resumed from the directory estimates its first save
    from it, and carries it on until it measures one of its own."""
    cfg = config.load_config({"PLANB_CHECKPOINT_DIR": str(tmp_path)})
    first = SaveInterval(500, 0.03, STATE_2_4GB)
    writer = progress.Progress(cfg, writer=True, interval=first)
    writer.record(1)
    assert "save" not in json.loads(Path(writer.path).read_text())  # nothing measured yet
    run(first, 1100, 0.148, 1.0, 20, 0.0825)
    writer.record(1100, saved=True)
    kept = {"step": 1000, "cost_s": pytest.approx(2.65), "state_bytes": STATE_2_4GB}
    assert json.loads(Path(writer.path).read_text())["save"] == kept
    second = SaveInterval(500, 0.03, STATE_2_4GB)
    resumed = progress.Progress(cfg, writer=True, interval=second)
    resumed.resume(1000)
    assert second.earlier == kept and second.estimate() == pytest.approx(2.65)
    resumed.record(1001)
    assert json.loads(Path(writer.path).read_text())["save"] == kept
