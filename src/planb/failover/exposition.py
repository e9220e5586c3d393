"""Counters, gauges and histograms in Prometheus' text exposition format, with the standard library only.

The controller runs in a stock Python image with nothing installed (planb.failover.controller), and
prometheus-client is not in it, so these few types write the format themselves. The format is Prometheus'
text format 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format): a
``# HELP`` and a ``# TYPE`` line per family; a histogram's cumulative ``_bucket`` series with an ``le`` label
ending in ``+Inf``, then ``_sum`` and ``_count``
(https://prometheus.io/docs/concepts/metric_types/#histogram); a counter's samples named ``<name>_total``
(https://prometheus.io/docs/practices/naming/). The tests parse the output with prometheus-client's own parser.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence

Labels = tuple[str, ...]


class MetricError(ValueError):
    """A metric used against its definition (wrong labels, a counter made to fall, a negative observation)."""


def _escape(value: str) -> str:
    """A label value as the text format quotes it: backslash, double quote and newline escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    """A sample value or bucket bound: +Inf, -Inf, NaN, or Python's shortest repr of the float."""
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    return repr(float(value))


class Family:
    """One metric name with a fixed set of label names; children keyed by their label values."""

    kind = "untyped"

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str] = ()) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        self.lock = threading.Lock()

    def key(self, labels: dict[str, str]) -> Labels:
        if set(labels) != set(self.labelnames):
            raise MetricError(f"{self.name}: labels {sorted(labels)}, want exactly {list(self.labelnames)}")
        return tuple(str(labels[name]) for name in self.labelnames)

    def label_text(self, values: Labels, extra: tuple[tuple[str, str], ...] = ()) -> str:
        pairs = [*zip(self.labelnames, values, strict=True), *extra]
        if not pairs:
            return ""
        return "{" + ",".join(f'{name}="{_escape(value)}"' for name, value in pairs) + "}"

    def header(self) -> list[str]:
        help_text = self.documentation.replace("\\", "\\\\").replace("\n", "\\n")
        return [f"# HELP {self.name} {help_text}", f"# TYPE {self.name} {self.kind}"]

    def samples(self) -> list[str]:
        raise NotImplementedError

    def render(self) -> list[str]:
        with self.lock:
            return self.header() + self.samples()


class Counter(Family):
    """Only goes up (or is raised to a count the objects record, never lowered)."""

    kind = "counter"

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str] = ()) -> None:
        if name.endswith("_total"):
            raise MetricError(f"{name}: name the counter without _total; its samples get the suffix")
        super().__init__(name, documentation, labelnames)
        self.values: dict[Labels, float] = {}

    def inc(self, labels: dict[str, str], amount: float = 1.0) -> None:
        if amount < 0:
            raise MetricError(f"{self.name}: a counter only goes up (inc by {amount})")
        key = self.key(labels)
        with self.lock:
            self.values[key] = self.values.get(key, 0.0) + amount

    def get(self, labels: dict[str, str]) -> float:
        return self.values.get(self.key(labels), 0.0)

    def samples(self) -> list[str]:
        return [f"{self.name}_total{self.label_text(k)} {_number(v)}" for k, v in sorted(self.values.items())]


class Gauge(Family):
    """Set to what the objects say now; ``replace`` swaps every child at once (labels that vanished go)."""

    kind = "gauge"

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str] = ()) -> None:
        super().__init__(name, documentation, labelnames)
        self.values: dict[Labels, float] = {}

    def replace(self, values: dict[Labels, float]) -> None:
        for key in values:
            if len(key) != len(self.labelnames):
                raise MetricError(f"{self.name}: label values {key}, want {list(self.labelnames)}")
        with self.lock:
            self.values = dict(values)

    def samples(self) -> list[str]:
        return [f"{self.name}{self.label_text(k)} {_number(v)}" for k, v in sorted(self.values.items())]


class Histogram(Family):
    """Observations counted in cumulative buckets (``le``, upper bounds inclusive), with their sum and count."""

    kind = "histogram"

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str], buckets: Sequence[float]) -> None:
        if "le" in labelnames:
            raise MetricError(f"{name}: 'le' is the histogram's own label")
        bounds = sorted(float(b) for b in buckets if not math.isinf(b))
        if not bounds or len(set(bounds)) != len(bounds):
            raise MetricError(f"{name}: buckets {list(buckets)} must be distinct finite bounds")
        super().__init__(name, documentation, labelnames)
        self.bounds = (*bounds, math.inf)
        self.counts: dict[Labels, list[int]] = {}
        self.sums: dict[Labels, float] = {}

    def observe(self, labels: dict[str, str], value: float) -> None:
        if value < 0 or math.isnan(value):
            raise MetricError(f"{self.name}: cannot observe {value} (durations are >= 0)")
        key = self.key(labels)
        with self.lock:
            counts = self.counts.setdefault(key, [0] * len(self.bounds))
            counts[next(i for i, bound in enumerate(self.bounds) if value <= bound)] += 1
            self.sums[key] = self.sums.get(key, 0.0) + value

    def samples(self) -> list[str]:
        lines: list[str] = []
        for key, counts in sorted(self.counts.items()):
            running = 0
            for bound, count in zip(self.bounds, counts, strict=True):
                running += count
                le = self.label_text(key, (("le", _number(bound)),))
                lines.append(f"{self.name}_bucket{le} {running}")
            lines.append(f"{self.name}_sum{self.label_text(key)} {_number(self.sums[key])}")
            lines.append(f"{self.name}_count{self.label_text(key)} {running}")
        return lines


def render(families: Sequence[Family]) -> str:
    """Every family in the text format, one trailing newline."""
    return "".join(line + "\n" for family in families for line in family.render())
