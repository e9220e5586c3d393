"""Checkpoints belong to their run: train.py resumes only its own, and leaves other runs' alone.

Real plain-JAX runs of the seed's linear model on CPU with Orbax checkpoints in a temporary
directory: the first run records its identity (PLANB_RUN_ID) and config hash in planb-run.json;
another run, another configuration, or checkpoints without a record stop the next start before
any step (so Orbax's max_to_keep cannot prune them), unless PLANB_RESUME=force.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest
from planb_train.checkpoints import CheckpointOwnerError, run_record
from planb_train.config import load_config
from planb_train.runners.plain import run_plain
from planb_train.variables import ConfigError

BASE = {
    "PLANB_MODEL": "linear",
    "PLANB_ACCELERATOR": "cpu",
    "PLANB_RUNNER": "plain",
    "PLANB_EPOCHS": "12",
    "PLANB_CHECKPOINT_EVERY": "5",
    "PLANB_CHECKPOINT_KEEP": "1",
    "PLANB_RUN_ID": "default/job-1",
}


def steps(directory: Path) -> list[int]:
    return sorted(int(p.name) for p in directory.iterdir() if p.is_dir() and p.name.isdigit())


@pytest.fixture()
def first(train: ModuleType, tmp_path: Path) -> dict[str, str]:
    """job-1 stopped after 7 steps: checkpoint 7 (max_to_keep 1) and its record."""
    env = {**BASE, "PLANB_CHECKPOINT_DIR": str(tmp_path / "ckpt")}
    result = run_plain(load_config({**env, "PLANB_STOP_AFTER": "7"}))
    assert (result.start_step, result.end_step) == (0, 7)
    return env


def test_the_first_run_records_its_identity_and_config(train: ModuleType, first: dict[str, str]) -> None:
    directory = Path(first["PLANB_CHECKPOINT_DIR"])
    record = json.loads((directory / "planb-run.json").read_text())
    assert record["run"] == "default/job-1"
    assert record["config"]["model"] == "linear" and record["config"]["seed"] == 0
    assert record["config_sha256"] == run_record(load_config(first))["config_sha256"]
    assert steps(directory) == [7]


def test_the_same_run_resumes_even_with_more_steps(train: ModuleType, first: dict[str, str]) -> None:
    again = run_plain(load_config({**first, "PLANB_EPOCHS": "20"}))
    assert (again.start_step, again.end_step) == (7, 20)


def test_another_run_is_refused_and_the_checkpoints_stay(
    train: ModuleType, first: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    directory = Path(first["PLANB_CHECKPOINT_DIR"])
    other = load_config({**first, "PLANB_RUN_ID": "default/job-2"})
    with pytest.raises(CheckpointOwnerError, match="belongs to run 'default/job-1', not 'default/job-2'"):
        run_plain(other)
    assert "Starting training" not in capsys.readouterr().out
    # Neither resumed nor pruned: job-1's checkpoint is where it was.
    assert steps(directory) == [7]
    assert json.loads((directory / "planb-run.json").read_text())["run"] == "default/job-1"


def test_another_configuration_is_refused_naming_what_changed(train: ModuleType, first: dict[str, str]) -> None:
    changed = load_config({**first, "PLANB_SEED": "3", "PLANB_LEARNING_RATE": "0.05"})
    with pytest.raises(CheckpointOwnerError, match=r"another configuration \(changed: learning_rate, seed\)"):
        run_plain(changed)


def test_checkpoints_without_a_record_are_refused(train: ModuleType, first: dict[str, str]) -> None:
    Path(first["PLANB_CHECKPOINT_DIR"], "planb-run.json").unlink()
    with pytest.raises(CheckpointOwnerError, match=r"without a planb-run\.json naming their run"):
        run_plain(load_config(first))


def test_never_refuses_a_directory_with_checkpoints(train: ModuleType, first: dict[str, str]) -> None:
    with pytest.raises(CheckpointOwnerError, match="holds checkpoints and PLANB_RESUME=never"):
        run_plain(load_config({**first, "PLANB_RESUME": "never"}))


def test_force_resumes_another_run_and_takes_it_over(
    train: ModuleType, first: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    env = {**first, "PLANB_RUN_ID": "default/job-2", "PLANB_RESUME": "force"}
    result = run_plain(load_config(env))
    assert (result.start_step, result.end_step) == (7, 12)
    assert "taking over the checkpoints of run 'default/job-1'" in capsys.readouterr().out
    record = json.loads(Path(first["PLANB_CHECKPOINT_DIR"], "planb-run.json").read_text())
    assert record["run"] == "default/job-2"
    # Now job-2's: job-1 is the one refused.
    with pytest.raises(CheckpointOwnerError, match="belongs to run 'default/job-2'"):
        run_plain(load_config(first))


def test_the_command_line_exits_2_on_another_run_s_checkpoints(
    train: ModuleType, first: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in first.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PLANB_RUN_ID", "team-a/job-1")
    assert train.main([]) == 2
    assert "planb train: " in capsys.readouterr().err
    assert steps(Path(first["PLANB_CHECKPOINT_DIR"])) == [7]


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({"PLANB_CHECKPOINT_DIR": "ckpt"}, "PLANB_CHECKPOINT_DIR"),
        ({"PLANB_CHECKPOINT_DIR": "./runs/a"}, "PLANB_CHECKPOINT_DIR"),
        ({"PLANB_RUN_ID": "job-1"}, "PLANB_RUN_ID"),
        ({"PLANB_RUN_ID": "Default/job-1"}, "PLANB_RUN_ID"),
        ({"PLANB_RESUME": "maybe"}, "PLANB_RESUME"),
    ],
    ids=["relative", "dot-relative", "no namespace", "upper case", "unknown resume mode"],
)
def test_bad_checkpoint_settings(train: ModuleType, env: dict[str, str], variable: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config({**BASE, **env})
    assert err.value.variable == variable


def test_absolute_and_gs_directories_are_accepted(train: ModuleType) -> None:
    assert load_config({**BASE, "PLANB_CHECKPOINT_DIR": "/mnt/c"}).checkpoint_dir == "/mnt/c"
    cfg = load_config({**BASE, "PLANB_CHECKPOINT_DIR": "gs://bucket/runs/default/job-1"})
    assert (cfg.checkpoint_dir, cfg.run_id, cfg.resume) == ("gs://bucket/runs/default/job-1", "default/job-1", "auto")
