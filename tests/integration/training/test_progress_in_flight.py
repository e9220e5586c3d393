"""The progress record (planb-progress.json, "reached") never claims a step the device may not have finished.

The loop keeps one step in flight: after dispatching step s it waits for step s-1 only (planb_train.loop.train_loop),
so that the host prepares the next batch while the device runs. A hard kill (SIGKILL, a node lost) at that moment
loses step s, and a restart reads "reached" to say how many steps were lost: a record that counted step s would
overstate the loss by one. The test wraps the real linear task's losses so that it knows which steps were waited
for, and reads the record as the next step starts, as a restart would.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import planb_train.config as CONFIG
import planb_train.loop as LOOP
import planb_train.startup as STARTUP
import pytest


class WatchedLoss:
    """A step's loss that notes when the loop waits for it (block_until_ready, or float() on a logged step)."""

    def __init__(self, loss: Any, step: int, waited: set[int]) -> None:
        self.loss, self.step, self.waited = loss, step, waited

    def block_until_ready(self) -> Any:
        self.loss.block_until_ready()
        self.waited.add(self.step)
        return self

    def __float__(self) -> float:
        value = float(self.loss)
        self.waited.add(self.step)
        return value


def test_the_record_counts_only_steps_waited_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ckpt = tmp_path / "ckpt"
    cfg = CONFIG.load_config(
        {
            "PLANB_MODEL": "linear",
            "PLANB_ACCELERATOR": "cpu",
            "PLANB_RUNNER": "plain",
            "PLANB_EPOCHS": "40",
            "PLANB_LOG_EVERY": "10",
            "PLANB_CHECKPOINT_DIR": str(ckpt),
            "PLANB_CHECKPOINT_EVERY": "1000",  # no periodic save: a save would wait for its step
            "PLANB_SAVE_ON_NOTICE": "0",
        }
    )
    waited: set[int] = set()
    seen: list[tuple[int, int, int]] = []  # (step about to start, reached in the record, steps waited for) then
    real = STARTUP.linear_task

    def watched_task(config: Any) -> Any:
        task = real(config)

        def step_fn(state: Any, step: int) -> tuple[Any, Any]:
            record = ckpt / "planb-progress.json"
            if record.is_file():
                done = 1 + max(waited, default=-1)  # steps counted from 1: step s waited for is s+1 done
                seen.append((step, int(json.loads(record.read_text())["reached"]), done))
            state, loss = task.step_fn(state, step)
            return state, WatchedLoss(loss, step, waited)

        return dataclasses.replace(task, step_fn=step_fn)

    monkeypatch.setattr(STARTUP, "linear_task", watched_task)
    result = LOOP.train_loop(cfg)
    assert result.end_step == 40
    assert len(seen) == 39, seen  # every step but the first found a record
    # Each record reached at most what had been waited for.
    overstated = [(step, reached, done) for step, reached, done in seen if reached > done]
    assert not overstated, overstated
    # The loop still keeps one step in flight: most records trail the step about to start by one.
    assert sum(1 for step, reached, _ in seen if reached == step - 1) > 30, seen
    assert json.loads((ckpt / "planb-progress.json").read_text())["reached"] == 40
