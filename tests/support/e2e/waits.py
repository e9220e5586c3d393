"""Waits the e2e tier uses: poll with a deadline (`wait_until`), assert that a state lasts (`holds_for`)."""

from __future__ import annotations

import time
from collections.abc import Callable

#: Seconds between two looks at a condition: controllers act in milliseconds on the local stack.
POLL_SECONDS = 0.2


def wait_until(
    predicate: Callable[[], bool], what: str, timeout: float = 120, explain: Callable[[], object] | None = None
) -> None:
    """Poll until predicate() holds; fail naming what did not happen and, with `explain`, the state it left."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(POLL_SECONDS)
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
        time.sleep(POLL_SECONDS)
