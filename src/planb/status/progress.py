"""A job's training record as `planb status` counts its goodput, and the progress records any program prints for it.

The record (`TrainRecord`) is what status takes from a job's output: the step reached, the training time kept up to
it, the tokens trained, and the job's resumes with what each lost. train.py's lines give it
(planb.status.trainlog); any other program gives it with progress records (docs/your-code.md, "Goodput"): one line
of its output each, ``planb-progress `` followed by a JSON object, for example

    planb-progress {"step": 120, "kept_s": 33.1, "tokens": 245760}
    planb-progress {"step": 100, "kept_s": 28.0, "resumes": [{"step": 100, "lost": 1, "kept_s": 28.0, "lost_s": 0.3}]}

``step`` (required) is the last step done; ``kept_s`` the training seconds of the steps 1..step along the run that
survives (null: unknown); ``tokens`` the tokens trained in those steps (optional); ``resumes`` (optional) the job's
resumes so far, oldest first, each from checkpoint ``step`` with ``lost`` steps done past it by the run before, the
seconds kept up to it and the seconds the lost steps took. A resumed run prints its list once at its start (the
newest submitter pod's log is the one status reads, so the list is the whole history); the newest list printed
counts. A line that is not one JSON object of these fields is not a record and is skipped.

The line goes to the program's standard output because that is what status can read: the submitter pod's log
(`ray job logs --follow`), through the Kubernetes API with the rights a job's author has (pods/log). A file on the
head or in the checkpoint bucket is not readable there.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from planb.kube_objects import parse_time

#: What starts a progress record line (after the kubelet's timestamp, when the log is read with them).
PREFIX = "planb-progress "


@dataclass(frozen=True)
class Resume:
    """One resume: the checkpoint step, the steps lost, the seconds kept up to the checkpoint and the seconds the lost
    steps took (None: the program's record did not hold the figure)."""

    step: int
    lost: int
    kept_s: float | None
    lost_s: float | None
    #: When the resume happened: the kubelet's timestamp on the line that first told it (None without timestamps,
    #: and for the earlier resumes a later run repeats at its own start).
    at: float | None = None


@dataclass(frozen=True)
class TrainRecord:
    """What the job's program printed: its resumes, oldest first, and its latest figure."""

    resumes: list[Resume]
    step: int
    kept_s: float | None
    #: When the newest run's log began (its first line's timestamp), None without timestamps.
    started: float | None = None
    #: Tokens trained up to `step` (None: not told).
    tokens: int | None = None
    #: Whose lines these are, as status names them: "train.py", or "the program" for progress records.
    source: str = "train.py"


#: `TrainRecord.source` of progress records.
RECORDS = "the program"


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _seconds(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        return None
    return float(value)


def _record(text: str) -> dict[str, Any] | None:
    """The record on one line (without its timestamp), or None when it holds none."""
    at = text.find(PREFIX)
    if at < 0:
        return None
    try:
        data = json.loads(text[at + len(PREFIX) :])
    except ValueError:
        return None
    if not isinstance(data, dict) or _count(data.get("step")) is None:
        return None
    return data


def _resumes(value: Any) -> list[Resume] | None:
    if not isinstance(value, list):
        return None
    out = []
    for item in value:
        if not isinstance(item, dict) or _count(item.get("step")) is None or _count(item.get("lost")) is None:
            return None
        out.append(Resume(item["step"], item["lost"], _seconds(item.get("kept_s")), _seconds(item.get("lost_s"))))
    return out


def timed_lines(text: str) -> Iterator[tuple[float | None, str, str]]:
    """Each line of a log read with or without the kubelet's timestamps: its timestamp (None without one), the line
    after it, and the whole line."""
    for line in text.splitlines():
        head, _, rest = line.partition(" ")
        at = parse_time(head) if head[:1].isdigit() else None
        yield at, (rest if at is not None else line), line


def parse_records(text: str) -> TrainRecord | None:
    """The progress records in a log (with or without the kubelet's timestamps); None without any."""
    resumes: list[Resume] = []
    latest: dict[str, Any] | None = None
    started = None
    for at, body, _ in timed_lines(text):
        if started is None and at is not None:
            started = at
        data = _record(body)
        if data is None:
            continue
        told = _resumes(data.get("resumes"))
        if told is not None and told != [replace(r, at=None) for r in resumes]:
            # A new list: its last resume is the one this line tells first (the earlier ones are repeats).
            resumes = [*told[:-1], replace(told[-1], at=at)] if told else []
        latest = data
    if latest is None:
        return None
    return TrainRecord(
        resumes,
        latest["step"],
        _seconds(latest.get("kept_s")),
        started,
        tokens=_count(latest.get("tokens")),
        source=RECORDS,
    )


__all__ = ["PREFIX", "RECORDS", "Resume", "TrainRecord", "parse_records", "timed_lines"]
