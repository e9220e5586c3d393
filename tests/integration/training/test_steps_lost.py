"""train.py after a restart: it resumes from the newest checkpoint and says how many steps were lost.

A migration (Kueue moving a running job to another flavor) kills the training process on the old
Ray cluster at an arbitrary step and starts it again on a new one with the same checkpoint
directory. The tests kill a real train.py process mid-run to reproduce that, then restart it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path
from types import ModuleType

import pytest
from planb_train.config import load_config
from planb_train.progress import RESUMED_LINE, Progress, resumed_line, steps_lost

from tests.support.shared.training import run_main, run_script, start_script

LINEAR = {"PLANB_MODEL": "linear", "PLANB_ACCELERATOR": "cpu", "PLANB_RUNNER": "plain"}
LOST = RESUMED_LINE
TIME = re.compile(
    r"^training time up to step (\d+): ([\d.]+) s kept(?:; the (\d+) lost step\(s\) took ([\d.]+) s)?$", re.MULTILINE
)


def reached(ckpt: Path) -> int:
    return int(json.loads((ckpt / "planb-progress.json").read_text())["reached"])


def checkpoints(ckpt: Path) -> list[int]:
    return sorted(int(p.name) for p in ckpt.iterdir() if p.is_dir() and p.name.isdigit())


def test_a_run_stopped_at_a_checkpoint_loses_nothing(
    train: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both runs are train.py's command line in this process; each reads the checkpoints and the progress record
    from disk, as a new process does."""
    ckpt = tmp_path / "ckpt"
    env = {**LINEAR, "PLANB_EPOCHS": "30", "PLANB_CHECKPOINT_DIR": str(ckpt), "PLANB_CHECKPOINT_EVERY": "5"}
    first = run_main(train, {**env, "PLANB_STOP_AFTER": "12"}, monkeypatch, capsys)
    assert first.returncode == 0, first.stdout[-3000:]
    assert not LOST.search(first.stdout)  # a fresh start resumes nothing
    assert reached(ckpt) == 12 and checkpoints(ckpt)[-1] == 12
    first_s = json.loads((ckpt / "planb-progress.json").read_text())["train_s"]
    second = run_main(train, env, monkeypatch, capsys)
    assert second.returncode == 0, second.stdout[-3000:]
    assert LOST.findall(second.stdout) == [("12", "0")], second.stdout[-3000:]
    assert reached(ckpt) == 30
    # The training time: the first run's figure at step 12 is where the second starts, with nothing lost; it grows.
    ran, resumed = TIME.findall(first.stdout), TIME.findall(second.stdout)
    # The first run counted its time in the record's own precision (the log's tenths read 0.0 when 12 steps of a
    # compiled, cached model took under 0.05 s).
    assert [line[0] for line in ran] == ["1", "11", "12"] and first_s > 0, first.stdout[-3000:]
    assert resumed[0] == ("12", ran[-1][1], "0", "0.0"), second.stdout[-3000:]
    assert resumed[-1][0] == "30"
    record = json.loads((ckpt / "planb-progress.json").read_text())
    assert f"{record['train_s']:.1f}" == resumed[-1][1] and record["checkpoints"]["30"] == record["train_s"]
    # Compared in the record's own precision: the log's tenths of a second read 0.1 and 0.1 when the 18 steps after
    # the resume took under 0.05 s.
    assert record["train_s"] > first_s


def test_a_killed_run_reports_the_steps_past_its_newest_checkpoint(tmp_path: Path) -> None:
    """SIGKILL mid-run, as when the old Ray cluster's pods go: the restart counts the lost steps."""
    ckpt = tmp_path / "ckpt"
    env = {
        **LINEAR,
        "PLANB_EPOCHS": "100000000",
        "PLANB_LOG_EVERY": "100000",
        "PLANB_CHECKPOINT_DIR": str(ckpt),
        "PLANB_CHECKPOINT_EVERY": "2000",
    }
    proc = start_script(env)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if ckpt.is_dir() and checkpoints(ckpt) and reached(ckpt) % 2000 > 100:
                break
            time.sleep(0.2)
        else:
            pytest.fail("train.py did not reach a checkpoint and step past it in 180 s")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    before, saved = reached(ckpt), checkpoints(ckpt)[-1]
    assert before > saved
    resumed = run_script({**env, "PLANB_EPOCHS": str(before + 10)})
    assert resumed.returncode == 0, resumed.stdout[-3000:]
    assert LOST.findall(resumed.stdout) == [(str(saved), str(before - saved))], resumed.stdout[-3000:]
    assert 0 < before - saved < 2000  # at most one checkpoint interval
    assert f"Resumed from checkpoint step {saved} in {ckpt}" in resumed.stdout


def test_a_run_told_to_stop_saves_first_and_loses_no_step(tmp_path: Path) -> None:
    """SIGTERM, as Kueue's eviction, a Spot VM's notice or a DWS booking's end deliver it before the grace period:
    train.py saves at the next step boundary, waits for the save, and ends by the same signal; the restart resumes
    from the step it reached, with 0 steps lost (a checkpoint interval far longer than the run so far)."""
    ckpt = tmp_path / "ckpt"
    env = {
        **LINEAR,
        "PLANB_EPOCHS": "100000000",
        "PLANB_LOG_EVERY": "100000",
        "PLANB_CHECKPOINT_DIR": str(ckpt),
        "PLANB_CHECKPOINT_EVERY": "1000000",
    }
    proc = start_script(env, output=True)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and not ((ckpt / "planb-progress.json").is_file() and reached(ckpt) > 50):
            time.sleep(0.2)
        assert checkpoints(ckpt) == [], "a checkpoint before the notice: the interval is too short for this test"
        os.killpg(proc.pid, signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == -signal.SIGTERM, out[-3000:]  # ended by the signal it was told of
    saved = checkpoints(ckpt)
    assert len(saved) == 1 and saved[0] == reached(ckpt) > 50, (saved, out[-3000:])
    assert f"Stop notice (SIGTERM) after step {saved[0]}: checkpoint step {saved[0]} saved; stopping" in out
    resumed = run_script({**env, "PLANB_EPOCHS": str(saved[0] + 5)})
    assert resumed.returncode == 0, resumed.stdout[-3000:]
    assert LOST.findall(resumed.stdout) == [(str(saved[0]), "0")], resumed.stdout[-3000:]


def test_with_save_on_notice_off_sigterm_ends_the_run_at_once_and_saves_nothing(tmp_path: Path) -> None:
    """PLANB_SAVE_ON_NOTICE=0, the benchmark's control column: SIGTERM keeps its default action, as before save on
    notice; the steps since the newest checkpoint (here: none yet) are lost."""
    ckpt = tmp_path / "ckpt"
    env = {
        **LINEAR,
        "PLANB_EPOCHS": "100000000",
        "PLANB_LOG_EVERY": "100000",
        "PLANB_CHECKPOINT_DIR": str(ckpt),
        "PLANB_CHECKPOINT_EVERY": "1000000",
        "PLANB_SAVE_ON_NOTICE": "0",
    }
    proc = start_script(env, output=True)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and not ((ckpt / "planb-progress.json").is_file() and reached(ckpt) > 50):
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == -signal.SIGTERM, out[-3000:]
    assert reached(ckpt) > 50 and checkpoints(ckpt) == [], out[-3000:]
    assert "Stop notice" not in out


def test_steps_lost_counts_from_the_restored_step(train: ModuleType) -> None:
    assert steps_lost(100, 137) == 37
    assert steps_lost(100, 100) == 0
    assert steps_lost(100, None) == 0  # nothing recorded (a run before progress was kept)
    assert steps_lost(100, 90) == 0  # a record older than the checkpoint
    assert resumed_line(100, 137) == "resumed from checkpoint step 100; 37 step(s) lost"


def test_progress_is_kept_only_with_a_checkpoint_directory(train: ModuleType, tmp_path: Path) -> None:
    off = Progress(load_config(LINEAR), writer=True)
    off.record(5)
    assert off.reached() is None and not list(tmp_path.iterdir())
    cfg = load_config({**LINEAR, "PLANB_CHECKPOINT_DIR": str(tmp_path / "c")})
    reader = Progress(cfg, writer=False)
    reader.record(5)
    assert reader.reached() is None  # only the writer records
    writer = Progress(cfg, writer=True)
    writer.record(5)
    writer.record(6)
    assert reader.reached() == 6
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == ["planb-progress.json"]  # no temporary left


def test_a_resumed_run_prints_the_jobs_earlier_resumes_first(train: ModuleType, tmp_path: Path) -> None:
    """The newest submitter pod's log is all `planb status` reads, so each run repeats the history before it, each
    resume with its training time: kept up to the checkpoint, and what the lost steps took."""
    cfg = load_config({**LINEAR, "PLANB_CHECKPOINT_DIR": str(tmp_path / "c")})
    first = Progress(cfg, writer=True)
    for step in range(1, 14):  # 0.5 s a step, checkpoints at 5 and 10
        first.record(step, 0.5, saved=step % 5 == 0)
    second = Progress(cfg, writer=True)
    assert second.resume(10) == [
        "resumed from checkpoint step 10; 3 step(s) lost",
        "training time up to step 10: 5.0 s kept; the 3 lost step(s) took 1.5 s",
    ]
    for step in range(11, 28):  # 1 s a step, checkpoints at 15, 20 and 25
        second.record(step, 1.0, saved=step % 5 == 0)
    assert second.line() == "training time up to step 27: 22.0 s kept"
    third = Progress(cfg, writer=True)
    assert third.resume(20) == [
        "earlier: resumed from checkpoint step 10; 3 step(s) lost",
        "earlier: training time up to step 10: 5.0 s kept; the 3 lost step(s) took 1.5 s",
        "resumed from checkpoint step 20; 7 step(s) lost",
        "training time up to step 20: 15.0 s kept; the 7 lost step(s) took 7.0 s",
    ]
    third.record(21, 1.0)
    assert json.loads((tmp_path / "c" / "planb-progress.json").read_text()) == {
        "reached": 21,
        "resumes": [[10, 3, 5.0, 1.5], [20, 7, 15.0, 7.0]],
        "train_s": 16.0,
        "checkpoints": {"10": 5.0, "15": 10.0, "20": 15.0},  # none past the step resumed from; at most keep + 1
    }


def test_a_record_from_before_the_training_time_says_unknown(train: ModuleType, tmp_path: Path) -> None:
    """A checkpoint directory of a run that recorded no training time: the figures are unknown, not guessed."""
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "planb-progress.json").write_text('{"reached": 13, "resumes": [[4, 1]]}')
    progress = Progress(load_config({**LINEAR, "PLANB_CHECKPOINT_DIR": str(tmp_path / "c")}), writer=True)
    assert progress.resume(10)[1:] == [
        "earlier: training time up to step 4: unknown kept; the 1 lost step(s) took unknown",
        "resumed from checkpoint step 10; 3 step(s) lost",
        "training time up to step 10: unknown kept; the 3 lost step(s) took unknown",
    ]
    progress.record(11, 1.0, saved=True)
    assert progress.line() == "training time up to step 11: unknown kept"
