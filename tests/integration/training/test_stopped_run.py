"""A run stopped on a notice is never a finished run, and the notice's files are private to the run.

train.py exits 0 and prints "Training Complete!" only after its last step. A run that stops on a notice file (the
Ray workers' pods on GKE, whose preStop hooks create it) ends with EXIT_STOPPED; one the signal reached ends by the
signal. test_ray.py gives the notice to the Ray workers alone; here the plain runner, the Ray driver's end and the
``<file>.saved`` acknowledgement, without Ray's startup.
"""

from __future__ import annotations

import signal
import stat
from pathlib import Path
from types import ModuleType

import planb_train.runners.ray_train as runners
import pytest
from planb_train.config import load_config
from planb_train.runners.outcome import EXIT_STOPPED, StoppedOnNoticeError

from tests.support.shared.training import run_main

LINEAR = {"PLANB_MODEL": "linear", "PLANB_ACCELERATOR": "cpu", "PLANB_RUNNER": "plain"}


def private_notice(tmp_path: Path) -> Path:
    """A notice file's path in a directory of the run's own (0700), as the chart's emptyDir gives each pod."""
    folder = tmp_path / "notice"
    folder.mkdir(mode=0o700, parents=True)
    return folder / "stop"


def test_a_plain_run_stopped_by_its_notice_file_exits_75_and_is_not_complete(
    train: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The notice file appears (after this process started, so it is no previous container's): the run saves and
    stops after its first step, exits with EXIT_STOPPED and never says it finished."""
    notice, ckpt = private_notice(tmp_path), tmp_path / "ckpt"
    notice.touch()
    env = {**LINEAR, "PLANB_NOTICE_FILE": str(notice), "PLANB_CHECKPOINT_DIR": str(ckpt)}
    done = run_main(train, env, monkeypatch, capsys)
    assert done.returncode == 75, done.stdout[-3000:]  # EXIT_STOPPED
    assert "Training Complete!" not in done.stdout, done.stdout[-3000:]
    assert "stopped on a notice after step 1 of 50: the run saved and is not finished" in done.stdout
    assert (ckpt / "1").is_dir()
    assert Path(f"{notice}.saved").read_text() == "1\n"
    assert EXIT_STOPPED == 75  # the status train.py's docstring and docs/training-on-tpu.md name


class Ended(Exception):
    """Raised instead of ending the test's process by a signal."""


def driver_notice(train: ModuleType, tmp_path: Path, signum: int | None) -> object:
    """The Ray driver's notice as run_ray holds it, told of ``signum`` (None: of nothing)."""
    cfg = load_config({**LINEAR, "PLANB_NOTICE_FILE": str(private_notice(tmp_path))})
    notice = runners.DriverNotice(cfg)
    notice.signum = signum
    return notice


@pytest.fixture
def ends(train: ModuleType, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The signals the driver ended by (``Ended`` raised instead)."""
    ended: list[int] = []

    def end_by_signal(signum: int) -> None:
        ended.append(signum)
        raise Ended

    monkeypatch.setattr(runners, "end_by_signal", end_by_signal)
    monkeypatch.setattr(runners.signal, "signal", lambda *_: None)  # the test's own SIGTERM handler stays
    return ended


def test_the_driver_says_complete_only_when_no_worker_stopped(
    train: ModuleType, tmp_path: Path, ends: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    runners.end_run(driver_notice(train, tmp_path / "done", None), {})
    assert capsys.readouterr().out.endswith("Training Complete!\n")
    with pytest.raises(StoppedOnNoticeError, match="1 worker\\(s\\) stopped on a notice before the last step"):
        runners.end_run(driver_notice(train, tmp_path / "stopped", None), {1: "worker 1 stopped on a notice"})
    out = capsys.readouterr().out
    assert "Stop notice: worker 1 stopped on a notice" in out and "Training Complete!" not in out
    assert ends == []


def test_a_driver_told_by_sigterm_ends_by_it(
    train: ModuleType, tmp_path: Path, ends: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(Ended):
        runners.end_run(driver_notice(train, tmp_path, signal.SIGTERM), {0: "worker 0 stopped on a notice"})
    assert ends == [signal.SIGTERM]
    assert "Training Complete!" not in capsys.readouterr().out


def test_the_driver_finds_the_stopped_workers_in_ray_trains_error(train: ModuleType) -> None:
    """As Ray Train raises it from ``trainer.fit()``: each failed rank's exception wrapped with its traceback."""
    from ray.train import WorkerGroupError
    from ray.train.v2._internal.exceptions import UserExceptionWithTraceback

    stopped = StoppedOnNoticeError("worker 0 stopped on a notice after step 7 of 50")
    error = WorkerGroupError(
        "workers failed",
        {0: UserExceptionWithTraceback(stopped, "Traceback ..."), 1: UserExceptionWithTraceback(OSError(), "...")},
    )
    assert runners.stopped_workers(error) == {0: "worker 0 stopped on a notice after step 7 of 50"}
    assert runners.stopped_workers(WorkerGroupError("a worker died", {1: RuntimeError("gone")})) == {}


def test_the_acknowledgement_replaces_a_planted_link_instead_of_writing_through_it(tmp_path: Path) -> None:
    """Whoever can write the notice's directory planted ``<file>.saved`` as a link to a file of their choosing: the
    acknowledgement replaces the link with a file of its own (0600) and leaves the link's target as it was."""
    from planb_train.notice import StopNotice

    notice = tmp_path / "stop"
    victim = tmp_path / "victim"
    victim.write_text("someone else's\n")
    saved = Path(f"{notice}.saved")
    saved.symlink_to(victim)
    StopNotice(str(notice)).acknowledge(42)
    assert victim.read_text() == "someone else's\n"
    assert not saved.is_symlink() and saved.read_text() == "42\n"
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stop.saved", "victim"]  # no temporary file left


def test_the_drivers_private_notice_folder_is_removed_after_the_workers(
    train: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without PLANB_NOTICE_FILE the driver makes a private folder for its workers' notice file (0700, mkdtemp) and
    removes it once they are gone (run_ray's `finally`); a signal after that is still recorded."""
    monkeypatch.setattr(runners.tempfile, "tempdir", str(tmp_path))
    notice = runners.DriverNotice(load_config(LINEAR))
    folder = Path(notice.file).parent
    assert folder.parent == tmp_path and folder.name.startswith("planb-notice-")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    notice._noticed(signal.SIGTERM, None)
    assert Path(notice.file).exists()
    notice.discard()
    assert list(tmp_path.iterdir()) == []
    notice._noticed(signal.SIGINT, None)
    assert notice.signum == signal.SIGINT and list(tmp_path.iterdir()) == []
