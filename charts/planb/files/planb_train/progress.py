"""planb training job, progress: the last step reached, next to the checkpoints (what a restart lost), and the
training time those steps took (what `planb status` counts as productive).

Restarts. A job that restarts with the same checkpoint directory (a retry, a preemption, or Kueue
moving it to another flavor on a new Ray cluster) resumes from the newest checkpoint. Worker 0
records the last step it reached in ``planb-progress.json`` next to the checkpoints (rewritten
atomically after every step; at most once a second on a remote ``gs://`` directory), so a resumed
run prints one line ``resumed from checkpoint step S; N step(s) lost``: N is how far the previous
run had got past S, 0 when it stopped right at a checkpoint. The file also keeps the job's earlier
resumes, which a resumed run prints first (``earlier: resumed from checkpoint step S; N step(s)
lost``, oldest first): a restarted job's one log then holds its whole history, as `planb status`
reads it from the newest submitter pod. A restart therefore loses at most one checkpoint interval
less one step (PLANB_CHECKPOINT_EVERY, or wider where saves cost more than PLANB_CHECKPOINT_BUDGET:
planb_train.interval), plus the steps run while the newest checkpoint was still being written (Orbax's
CheckpointManager saves asynchronously; one killed mid-write is not restored) and, on gs://, the steps
of the last second.

Training time (docs/goodput.md). A step's time is the loop's wall time from the end of the step before (or the
loop's start, so a run's first step includes JAX's compilation) to the end of this one, its checkpoint save and
log line included. The time kept up to step R is the sum of the times of steps 1..R along the run that survives:
the record holds it for the step reached (``train_s``) and for each recent checkpoint (``checkpoints``), so a
run resuming from S starts from S's figure, and the time of the N lost steps is the previous run's figure at
its step reached minus S's. Each resume line is followed by ``training time up to step S: K s kept; the N
lost step(s) took L s`` (``earlier:`` for the history), and the loop prints ``training time up to step R: K s
kept`` with each log line (PLANB_LOG_EVERY) and at its end. "unknown" stands for a figure the record does not
hold (a checkpoint written before it was kept). Without a checkpoint directory nothing is recorded and a
restart starts over: the figure counts the current run alone.

Save cost. The record also keeps the job's last measured save (``save``: its step, what it cost the training, the
state's bytes; planb_train.interval), so that the first save of a resumed run is spaced by what the job's saves
cost rather than by a prior from another machine.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from typing import Any

from planb_train.config import TrainConfig
from planb_train.interval import SaveInterval

PROGRESS_FILE = "planb-progress.json"
REMOTE_PROGRESS_INTERVAL_S = 1.0  # a gs:// object write costs tens of milliseconds


class Progress:
    """The last step this job reached and the training time kept, in ``<checkpoint dir>/planb-progress.json``; the
    record is a no-op without a checkpoint directory (the time is still counted, for this run).

    Only the writer records. A local file is replaced atomically (a temporary file, then
    ``os.replace``), after every step; a remote one (``gs://``, through etils.epath, whose object
    writes are whole) at most once per REMOTE_PROGRESS_INTERVAL_S, and always when forced or at a checkpoint.
    """

    def __init__(self, cfg: TrainConfig, writer: bool, interval: SaveInterval | None = None) -> None:
        self.enabled = bool(cfg.checkpoint_dir)
        self.writer = writer
        #: The run's checkpoint interval, whose last measured save the record keeps (``save``) for the job's next run.
        self.interval = interval
        self.remote = "://" in cfg.checkpoint_dir
        self.path = ""
        if self.enabled:
            base = cfg.checkpoint_dir.rstrip("/") if self.remote else os.path.abspath(cfg.checkpoint_dir)
            self.path = f"{base}/{PROGRESS_FILE}"
        self._last_write = -math.inf
        #: The job's resumes so far, oldest first: (checkpoint step, steps lost, seconds kept up to that step,
        #: seconds the lost steps took); None for a figure the record did not hold.
        self.resumes: list[tuple[int, int, float | None, float | None]] = []
        #: The step reached and the training seconds kept up to it (None: not known since a resume).
        self.step = 0
        self.train_s: float | None = 0.0
        #: Seconds kept up to each recent checkpoint step (Orbax keeps PLANB_CHECKPOINT_KEEP; one more for a save
        #: that does not commit).
        self.checkpoints: dict[int, float] = {}
        self._keep = max(1, cfg.checkpoint_keep) + 1

    def _read(self) -> dict[str, Any]:
        if self.remote:
            from etils import epath

            text = epath.Path(self.path).read_text()
        else:
            with open(self.path, encoding="utf-8") as fh:
                text = fh.read()
        data = json.loads(text)
        return data if isinstance(data, dict) else {}

    def _recorded(self) -> dict[str, Any]:
        """What the previous run recorded; {} without a checkpoint directory, a record, or a readable one."""
        if not self.enabled:
            return {}
        try:
            return self._read()
        except (OSError, ValueError):
            return {}

    def reached(self, recorded: dict[str, Any] | None = None) -> int | None:
        """The step recorded by the previous run (in ``recorded``, else read now), or None when there is none."""
        data = self._recorded() if recorded is None else recorded
        try:
            return int(data["reached"])
        except (KeyError, TypeError, ValueError):
            return None

    def resume(self, restored: int) -> list[str]:
        """This run's resume from ``restored``: the lines to print (the earlier resumes, then this one, each with
        its training time), with this one added to the history the next record writes."""
        recorded = self._recorded()
        reached = self.reached(recorded)
        earlier = _resumes(recorded.get("resumes"))
        saved = _checkpoint_times(recorded.get("checkpoints"))
        kept, total = saved.get(restored), _seconds(recorded.get("train_s"))
        lost = steps_lost(restored, reached)
        lost_s = None if kept is None or total is None or reached is None else max(0.0, total - kept)
        self.resumes = [*earlier, (restored, lost, kept, lost_s)]
        if self.interval is not None:  # the first save of this run is estimated from the job's last one
            self.interval.remember(recorded.get("save"))
        self.step, self.train_s = restored, kept
        self.checkpoints = {s: t for s, t in saved.items() if s <= restored}
        lines = []
        for s, n, k, t in earlier:
            lines += [f"earlier: {resumed_line(s, s + n)}", f"earlier: {time_line(s, k, n, t)}"]
        return [*lines, resumed_line(restored, reached), time_line(restored, kept, lost, lost_s)]

    def line(self) -> str:
        """``training time up to step R: K s kept`` for the step reached."""
        return time_line(self.step, self.train_s)

    def record(self, step: int, seconds: float = 0.0, saved: bool = False, force: bool = False) -> None:
        """Step ``step`` reached, having taken ``seconds``; ``saved``: a checkpoint of it is being written."""
        self.step = step
        if self.train_s is not None:
            self.train_s += seconds
            if saved:
                self.checkpoints[step] = self.train_s
                for old in sorted(self.checkpoints)[: -self._keep]:
                    del self.checkpoints[old]
        if not (self.enabled and self.writer):
            return
        now = time.monotonic()
        if self.remote and not (force or saved) and now - self._last_write < REMOTE_PROGRESS_INTERVAL_S:
            return
        record: dict[str, Any] = {
            "reached": step,
            "resumes": [list(r) for r in self.resumes],
            "train_s": self.train_s,
            "checkpoints": {str(s): t for s, t in sorted(self.checkpoints.items())},
        }
        save = self.interval.memory() if self.interval is not None else None
        if save is not None:
            record["save"] = save
        text = json.dumps(record)
        if self.remote:
            from etils import epath

            epath.Path(self.path).write_text(text)
        else:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            tmp = f"{self.path}.tmp-{os.getpid()}"
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, self.path)
        self._last_write = now


def _seconds(value: object) -> float | None:
    try:
        seconds = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _resumes(value: object) -> list[tuple[int, int, float | None, float | None]]:
    """The recorded history; an entry of a record from before the times were kept has only (step, lost)."""
    out = []
    try:
        for entry in value if isinstance(value, list) else []:
            s, n, *times = entry
            times += [None, None]
            out.append((int(s), int(n), _seconds(times[0]), _seconds(times[1])))
    except (TypeError, ValueError):
        return []
    return out


def _checkpoint_times(value: object) -> dict[int, float]:
    out = {}
    if isinstance(value, dict):
        for step, seconds in value.items():
            kept = _seconds(seconds)
            if str(step).isdigit() and kept is not None:
                out[int(step)] = kept
    return out


def steps_lost(restored: int, reached: int | None) -> int:
    """Steps the previous run had done past the checkpoint it resumes from (0 if none recorded)."""
    return 0 if reached is None else max(0, reached - restored)


def resumed_line(restored: int, reached: int | None) -> str:
    return f"resumed from checkpoint step {restored}; {steps_lost(restored, reached)} step(s) lost"


#: resumed_line's lines in a job's log (the step restored, the steps lost): the benchmarks and tests read them so.
RESUMED_LINE = re.compile(r"^resumed from checkpoint step (\d+); (\d+) step\(s\) lost$", re.MULTILINE)


def _s(seconds: float | None) -> str:
    return "unknown" if seconds is None else f"{seconds:.1f} s"


def time_line(step: int, kept: float | None, lost: int | None = None, lost_s: float | None = None) -> str:
    """``training time up to step R: K s kept``, with ``; the N lost step(s) took L s`` after a resume."""
    tail = "" if lost is None else f"; the {lost} lost step(s) took {_s(lost_s)}"
    return f"training time up to step {step}: {_s(kept)} kept{tail}"
