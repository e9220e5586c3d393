"""A job's output as `planb status` reads it: the submitter pod's log, and train.py's training-time lines in it (or the
progress records any other program prints: planb.status.progress).

train.py (training/planb_train/progress.py) prints ``training time up to step R: K s kept`` with its log lines
and at its end, and after each resume ``training time up to step S: K s kept; the N lost step(s) took L s``,
after the job's earlier resumes (``earlier: ...``), so the newest run's log holds every run of a job that
checkpoints. K and L are "unknown" where train.py's record did not hold them. The submitter pod runs ``ray job
logs --follow`` (KubeRay's submitter), so its log is the job's output; it is read with the kubelet's timestamps,
whose first one says when the newest run's log began (docs/goodput.md). A training log grows with the run, so
planb.status.gather reads its first HEAD_BYTES (the resumes come first) and, when the log is longer, its last
TAIL_LINES lines for the latest figure: two bounded reads per submitter pod on each refresh.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from planb.status import variants
from planb.status.gather import LogRead
from planb.status.progress import Resume, TrainRecord, parse_records, timed_lines

_SECONDS = r"(unknown|\d+(?:\.\d+)?) ?s?"
_TIME_LINE = re.compile(
    rf"training time up to step (\d+): {_SECONDS} kept(?:; the (\d+) lost step\(s\) took {_SECONDS})?"
)


@dataclass(frozen=True)
class TrainRun:
    """One run of train.py: the steps it ran from, the training it kept, and what it lost at its end (lost is
    None for the newest run: it has not been restarted)."""

    from_step: int
    to_step: int
    kept_s: float | None
    lost: int | None = None
    lost_s: float | None = None


def _number(text: str | None) -> float | None:
    return None if text is None or text == "unknown" else float(text)


def parse_log(text: str) -> TrainRecord | None:
    """The job's training record in a submitter log (with or without kubelet's timestamps): its program's progress
    records (planb.status.progress) where it prints any, else train.py's training-time lines; None without either."""
    return parse_records(text) or _train_py_lines(text)


def _train_py_lines(text: str) -> TrainRecord | None:
    resumes: list[Resume] = []
    latest: tuple[int, float | None] | None = None
    started = None
    for at, body, line in timed_lines(text):
        if started is None and at is not None:
            started = at
        found = _TIME_LINE.search(body)
        if not found:
            continue
        step, kept = int(found.group(1)), _number(found.group(2))
        if found.group(3) is not None:
            when = None if "earlier:" in line else at
            resumes.append(Resume(step, int(found.group(3)), kept, _number(found.group(4)), when))
        latest = (step, kept)
    if latest is None:
        return None
    return TrainRecord(resumes, latest[0], latest[1], started)


def train_runs(record: TrainRecord) -> list[TrainRun]:
    """Each run of train.py, oldest first: a run ends where the next one resumed (what it kept) plus its lost
    steps; the newest run goes to the latest figure."""
    runs = []
    begin: tuple[int, float | None] = (0, 0.0)
    for resume in record.resumes:
        kept = None if resume.kept_s is None or begin[1] is None else resume.kept_s - begin[1]
        runs.append(TrainRun(begin[0], resume.step + resume.lost, kept, resume.lost, resume.lost_s))
        begin = (resume.step, resume.kept_s)
    kept = None if record.kept_s is None or begin[1] is None else record.kept_s - begin[1]
    runs.append(TrainRun(begin[0], record.step, kept))
    return runs


def newest_log(reads: list[LogRead]) -> str | None:
    """The log of the job's newest run, of the submitter pods' logs planb.status.gather read (oldest pod first): the
    one with the most resume lines of train.py's (each run repeats the job's earlier ones), then one with
    training-time lines (a new pod's log is empty until train.py starts), then the newest; None without one."""
    found = [
        (len(variants.steps_lost(text)), parse_log(text) is not None, i, text)
        for i, text in enumerate(map(_joined, reads))
    ]
    return max(found)[3] if found else None


def _joined(read: LogRead) -> str:
    """The log's head, its complete lines, then its tail without resume lines (the head holds those; a tail next to
    the head's end would repeat them); the head alone when the log ended within it."""
    if read.tail is None:
        return read.head
    later = [line for line in read.tail.splitlines() if not _is_resume(line)]
    return "\n".join([*read.head.splitlines()[:-1], *later]) + "\n"


def _is_resume(line: str) -> bool:
    found = _TIME_LINE.search(line)
    return bool(variants.steps_lost(line)) or (found is not None and found.group(3) is not None)


__all__ = ["Resume", "TrainRecord", "TrainRun", "newest_log", "parse_log", "train_runs"]
