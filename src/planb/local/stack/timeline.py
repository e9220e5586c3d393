"""When each part of `planb local up` started and became ready, printed as one table at the end.

Parts may overlap (processes start side by side and are waited on together), so each row is a span
on one clock that starts with `up`: what began when, and what it waited for, reads off the table.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from planb.local.statefile import write_json


@dataclass(frozen=True)
class Span:
    """One part of `up`: seconds from the start of `up` to its start and to its end."""

    name: str
    start: float
    end: float

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass
class Timeline:
    """Spans on the clock of one `up` (time.monotonic, zero at construction)."""

    origin: float = field(default_factory=time.monotonic)
    spans: list[Span] = field(default_factory=list)

    def now(self) -> float:
        return time.monotonic() - self.origin

    def add(self, name: str, start: float, end: float | None = None) -> None:
        """Record a span; `end` defaults to now (list.append is atomic, so threads may add)."""
        self.spans.append(Span(name, start, self.now() if end is None else end))

    @contextlib.contextmanager
    def span(self, name: str) -> Iterator[None]:
        start = self.now()
        try:
            yield
        finally:
            self.add(name, start)

    def timed(self, name: str, action: Callable[[], object]) -> None:
        """Run `action` as one span (for parts that run in threads side by side)."""
        with self.span(name):
            action()

    def total(self) -> float:
        return max((s.end for s in self.spans), default=0.0)

    def table(self) -> str:
        """The spans in order of their start: name, start, end and length in seconds."""
        width = max((len(s.name) for s in self.spans), default=4)
        lines = [f"{'part':<{width}}  start    end  seconds"]
        for s in sorted(self.spans, key=lambda s: (s.start, s.end)):
            lines.append(f"{s.name:<{width}}  {s.start:5.1f}  {s.end:5.1f}  {s.seconds:7.1f}")
        return "\n".join(lines)

    def write(self, path: Path) -> None:
        """The spans as JSON (for `make bench`), replaced whole."""
        data = [{"name": s.name, "start": round(s.start, 3), "end": round(s.end, 3)} for s in self.spans]
        write_json(path, {"total": round(self.total(), 3), "spans": data})
