"""The chart's Grafana dashboard read as queries, and those queries evaluated against scraped samples.

A small evaluator for the subset of PromQL the dashboard's panels use, not a Prometheus: every selector
(`name{label="v", label=~"re", ...}`, with Grafana's variables at their "All" value) is matched against the samples
of one scrape of each endpoint (Prometheus' text format, read by prometheus-client's parser). A selector has data
when some sample matches; a selector of a histogram's `_bucket` series under `histogram_quantile` has data only
when its `le="+Inf"` bucket counted an observation (a quantile of no observation is NaN: an empty panel). A single
scrape cannot show `rate()` or `increase()` rising; what it shows is that the series those functions read exist.
Aggregations (`sum by`) and functions keep or drop no series this check counts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from planb import paths

DASHBOARD = paths.REPO / "charts" / "planb" / "dashboards" / "planb.json"
#: Grafana's variables as the dashboard's "All" selects them (each variable's allValue) and a rate window.
VARIABLES = {"$cluster_queue": ".*", "$region": ".*", "$__rate_interval": "1m"}
#: PromQL words that are not metric names (aggregations' modifiers, set operators).
WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset"}
_STRING = r'"(?:\\.|[^"\\])*"'
_SELECTOR = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)\s*(\{(?:[^}\"]|" + _STRING + r")*\})?")
_MATCHER = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*(" + _STRING + r")\s*,?")

Labels = dict[str, str]


@dataclass(frozen=True)
class Sample:
    name: str
    labels: tuple[tuple[str, str], ...]
    value: float


@dataclass(frozen=True)
class Matcher:
    label: str
    op: str
    value: str

    def matches(self, labels: Labels) -> bool:
        # A label that is absent reads as the empty string (Prometheus' data model).
        have = labels.get(self.label, "")
        if self.op in ("=~", "!~"):
            found = re.fullmatch(self.value, have) is not None
            return found if self.op == "=~" else not found
        return (have == self.value) if self.op == "=" else (have != self.value)


@dataclass(frozen=True)
class Selector:
    name: str
    matchers: tuple[Matcher, ...]
    #: Read under histogram_quantile: data only where an observation was counted.
    quantile: bool

    def select(self, samples: Iterable[Sample]) -> list[Sample]:
        return [s for s in samples if s.name == self.name and all(m.matches(dict(s.labels)) for m in self.matchers)]

    def has_data(self, samples: Iterable[Sample]) -> bool:
        found = self.select(samples)
        if self.quantile:
            return any(dict(s.labels).get("le") == "+Inf" and s.value > 0 for s in found)
        return bool(found)


@dataclass(frozen=True)
class Query:
    """One query of a panel (a target's `expr`) or of a template variable (`label_values(metric, label)`)."""

    where: str
    expr: str

    @property
    def selectors(self) -> list[Selector]:
        return selectors(self.expr)


def substitute(expr: str) -> str:
    for variable, value in sorted(VARIABLES.items(), key=lambda kv: -len(kv[0])):
        expr = expr.replace(variable, value)
    if "$" in expr:
        raise ValueError(f"a Grafana variable this evaluator does not know: {expr}")
    return expr


def _unquote(literal: str) -> str:
    # PromQL's double-quoted strings take Go's escapes; JSON's are the same for what the dashboard writes.
    return str(json.loads(literal))


def parse_matchers(braces: str) -> tuple[Matcher, ...]:
    inner, out, at = braces[1:-1], [], 0
    while inner[at:].strip():
        found = _MATCHER.match(inner, at)
        if found is None:
            raise ValueError(f"not a label matcher this evaluator reads: {inner[at:]!r}")
        out.append(Matcher(found.group(1), found.group(2), _unquote(found.group(3))))
        at = found.end()
    return tuple(out)


def selectors(expr: str) -> list[Selector]:
    """The series selectors of `expr`: names outside strings, ranges and grouping clauses that are not called as
    functions, each with its label matchers."""
    text = substitute(expr)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    quantile = "histogram_quantile(" in text
    out: list[Selector] = []
    at = 0
    while (found := _SELECTOR.search(text, at)) is not None:
        at = found.end()
        name, braces = found.group(1), found.group(2)
        before = text[: found.start()]
        if before and (before[-1].isalnum() or before[-1] in "_.:"):
            continue  # inside a number or another word
        if braces is None and (text[at:].lstrip().startswith("(") or name in WORDS):
            continue  # a function or a keyword
        out.append(Selector(name, parse_matchers(braces) if braces else (), quantile and name.endswith("_bucket")))
    return out


def parse_text(text: str) -> list[Sample]:
    """Samples of Prometheus' text exposition format."""
    return [
        Sample(s.name, tuple(sorted(s.labels.items())), float(s.value))
        for family in text_string_to_metric_families(text)
        for s in family.samples
    ]


def _targets(node: Any, where: str) -> Iterator[Query]:
    for target in node.get("targets", []):
        if isinstance(target.get("expr"), str):
            yield Query(f"{where} ({target.get('refId', '?')})", target["expr"])


def dashboard_queries(path: Path = DASHBOARD) -> dict[str, list[Query]]:
    """Each panel's queries by title; each template variable's `label_values(metric, label)` under `$name`."""
    dashboard = json.loads(path.read_text())
    out = {p["title"]: list(_targets(p, p["title"])) for p in dashboard["panels"]}
    for variable in dashboard.get("templating", {}).get("list", []):
        query = variable.get("query")
        text = query.get("query") if isinstance(query, dict) else None
        found = re.fullmatch(r"label_values\((\w+),\s*(\w+)\)", text or "")
        if variable.get("type") == "query" and found:
            out["$" + variable["name"]] = [Query(f"${variable['name']}", found.group(1))]
    return out
