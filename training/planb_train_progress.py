"""planb training job, progress: the last step reached, next to the checkpoints (what a restart lost).

Restarts. A job that restarts with the same checkpoint directory (a retry, a preemption, or Kueue
moving it to another flavor on a new Ray cluster) resumes from the newest checkpoint. Worker 0
records the last step it reached in ``planb-progress.json`` next to the checkpoints (rewritten
atomically after every step; at most once a second on a remote ``gs://`` directory), so a resumed
run prints one line ``resumed from checkpoint step S; N step(s) lost``: N is how far the previous
run had got past S, 0 when it stopped right at a checkpoint. The file also keeps the job's earlier
resumes, which a resumed run prints first (``earlier: resumed from checkpoint step S; N step(s)
lost``, oldest first): a restarted job's one log then holds its whole history, as `planb status`
reads it from the newest submitter pod. A restart therefore loses at most
PLANB_CHECKPOINT_EVERY - 1 steps, plus the steps run while the newest checkpoint was still being
written (Orbax's CheckpointManager saves asynchronously; one killed mid-write is not restored) and, on
gs://, the steps of the last second.
"""

from __future__ import annotations

import json
import math
import os
import time
from typing import Any

from planb_train_config import TrainConfig

PROGRESS_FILE = "planb-progress.json"
REMOTE_PROGRESS_INTERVAL_S = 1.0  # a gs:// object write costs tens of milliseconds


class Progress:
    """The last step this job reached, in ``<checkpoint dir>/planb-progress.json``; a no-op without one.

    Only the writer records. A local file is replaced atomically (a temporary file, then
    ``os.replace``), after every step; a remote one (``gs://``, through etils.epath, whose object
    writes are whole) at most once per REMOTE_PROGRESS_INTERVAL_S, and always when forced.
    """

    def __init__(self, cfg: TrainConfig, writer: bool) -> None:
        self.enabled = bool(cfg.checkpoint_dir)
        self.writer = writer
        self.remote = "://" in cfg.checkpoint_dir
        self.path = ""
        if self.enabled:
            base = cfg.checkpoint_dir.rstrip("/") if self.remote else os.path.abspath(cfg.checkpoint_dir)
            self.path = f"{base}/{PROGRESS_FILE}"
        self._last_write = -math.inf
        #: The job's resumes so far, oldest first: (checkpoint step, steps lost).
        self.resumes: list[tuple[int, int]] = []

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
        """This run's resume from ``restored``: the lines to print (the earlier resumes, then this one),
        with this one added to the history the next record writes."""
        recorded = self._recorded()
        reached = self.reached(recorded)
        try:
            earlier = [(int(s), int(n)) for s, n in recorded.get("resumes") or []]
        except (TypeError, ValueError):
            earlier = []
        self.resumes = [*earlier, (restored, steps_lost(restored, reached))]
        return [f"earlier: resumed from checkpoint step {s}; {n} step(s) lost" for s, n in earlier] + [
            resumed_line(restored, reached)
        ]

    def record(self, step: int, force: bool = False) -> None:
        if not (self.enabled and self.writer):
            return
        now = time.monotonic()
        if self.remote and not force and now - self._last_write < REMOTE_PROGRESS_INTERVAL_S:
            return
        text = json.dumps({"reached": step, "resumes": self.resumes})
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


def steps_lost(restored: int, reached: int | None) -> int:
    """Steps the previous run had done past the checkpoint it resumes from (0 if none recorded)."""
    return 0 if reached is None else max(0, reached - restored)


def resumed_line(restored: int, reached: int | None) -> str:
    return f"resumed from checkpoint step {restored}; {steps_lost(restored, reached)} step(s) lost"
