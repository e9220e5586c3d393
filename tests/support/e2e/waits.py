"""Waits the e2e tier uses: poll with a deadline (`wait_until`), assert that a state lasts (`holds_for`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

# The pauses between looks at a condition: POLL_SECONDS first, as controllers act in milliseconds on the local
# stack, then each half as long again, up to POLL_MAX_SECONDS, because a wait that outlasts its first looks is
# waiting for a timer (a DWS delay, a grace period, a backoff), and every look is several requests to the API server:
# at a fixed 0.2 s the tier's looks were a large share of the API server's 60 requests a second, on the same two
# cores as the tests that end last (BENCHMARKS.md, "The test suite").
POLL_SECONDS = 0.2
POLL_MAX_SECONDS = 1.0
#: Seconds between two looks of `holds_for`, which looks for its whole span.
HOLD_LOOK_SECONDS = 0.5


def pauses() -> Iterator[float]:
    """The pauses between looks: POLL_SECONDS, then half as long again each time, up to POLL_MAX_SECONDS."""
    pause = POLL_SECONDS
    while True:
        yield pause
        pause = min(POLL_MAX_SECONDS, pause * 1.5)


def wait_until(
    predicate: Callable[[], bool], what: str, timeout: float = 120, explain: Callable[[], object] | None = None
) -> None:
    """Poll until predicate() holds; fail naming what did not happen and, with `explain`, the state it left."""
    deadline = time.monotonic() + timeout
    for pause in pauses():
        if predicate():
            return
        if time.monotonic() >= deadline:
            break
        time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
    state = ""
    if explain is not None:
        try:
            state = f"; state: {explain()}"
        except Exception as exc:  # the explanation must not hide the timeout
            state = f"; (the state could not be read: {exc})"
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}{state}")


def holds_for(predicate: Callable[[], bool], what: str, seconds: float) -> None:
    """Assert that predicate() holds at every look for `seconds` (instead of a sleep, then one look); fails at the
    first look it does not."""
    deadline = time.monotonic() + seconds
    while True:
        if not predicate():
            raise AssertionError(f"{what} stopped holding {seconds - (deadline - time.monotonic()):.1f} s in")
        if time.monotonic() >= deadline:
            return
        time.sleep(min(HOLD_LOOK_SECONDS, max(0.0, deadline - time.monotonic())))
