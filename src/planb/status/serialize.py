"""`planb status -o json|yaml`: the jobs `planb.status.report.collect` read, as one document.

The document holds what the text report renders, from the same JobStatus objects: every field of each dataclass
(camelCase, as Kubernetes writes its objects; a ``_s`` suffix spelled ``Seconds``), the derived figures the views
print (the plan, the accelerator flavor, the goodput's ratio...), and times as RFC 3339 UTC strings. Its schema is
docs/status.schema.json (tests/unit/status/test_serialize.py validates real output against it). Like
``kubectl get -o json``, a list carries ``kind: JobStatusList`` and ``items``; a named job prints its item alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import fields, is_dataclass
from typing import Any

import yaml

from planb.errors import UsageError
from planb.status import goodput as goodput_
from planb.status import lifecycle, variants
from planb.status.detail import stamp
from planb.status.job_status import JobStatus
from planb.status.regions import TokenWarning

API_VERSION = "planb.dev/v1alpha1"
FORMATS = ("json", "yaml")
#: Dataclass fields that hold a time as seconds since the epoch: they are written as RFC 3339 strings.
TIME_FIELDS = frozenset({"submitted", "finished", "now", "at", "created", "started", "moved_at"})
#: The properties each view prints beside the fields, per class.
DERIVED: dict[type, tuple[str, ...]] = {
    JobStatus: ("plan", "accelerator_flavor", "node_pools", "wrong_shape", "shape_note", "failed"),
    goodput_.Goodput: ("wall_s", "kept_s", "lost_s", "steps_lost", "ratio", "percent", "missing"),
    variants.Variants: ("running_on", "pursued"),
    lifecycle.Retries: ("left",),
}


def _key(name: str) -> str:
    """retry_count -> retryCount; kept_s -> keptSeconds."""
    if name.endswith("_s"):
        name = name[:-2] + "_seconds"
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _value(name: str, value: Any) -> Any:
    if name in TIME_FIELDS and isinstance(value, int | float) and not isinstance(value, bool):
        return stamp(float(value))
    return plain(value)


def _pods(job: JobStatus) -> list[dict[str, str]]:
    return [{"name": pod, "phase": phase, "node": node} for pod, phase, node in job.pods]


#: Fields written another way than the generic walk: JobStatus.pods is a list of tuples.
SPECIAL: dict[tuple[type, str], Callable[[Any], Any]] = {(JobStatus, "pods"): _pods}


def plain(value: Any) -> Any:
    """``value`` as JSON's types: dataclasses as objects (their fields and DERIVED properties), the rest as is."""
    if is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        kind = type(value)
        for f in fields(value):
            if f.metadata.get("document") is False:  # kept for the interpretation, not what the views print
                continue
            special = SPECIAL.get((kind, f.name))
            out[_key(f.name)] = special(value) if special else _value(f.name, getattr(value, f.name))
        for name in DERIVED.get(kind, ()):
            out[_key(name)] = _value(name, getattr(value, name))
        return out
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def item(job: JobStatus) -> dict[str, Any]:
    """One job's object."""
    return {"apiVersion": API_VERSION, "kind": "JobStatus", **plain(job)}


def warning(found: TokenWarning) -> dict[str, Any]:
    """A region token that lapses soon (planb.status.regions.token_warnings), with the line the text report prints."""
    return {
        "region": found.region,
        "secret": found.secret,
        "expires": stamp(found.expires),
        "leftSeconds": round(found.left_s),
        "message": found.line(),
    }


def document(jobs: list[JobStatus], one: bool = False, warnings: Sequence[TokenWarning] = ()) -> dict[str, Any]:
    """The list of ``jobs``; with ``one`` (a named job, found), that job's object alone. Either carries the manager's
    ``warnings`` (each region token that lapses soon; [] when none or not a MultiKueue manager)."""
    said = [warning(w) for w in warnings]
    if one and len(jobs) == 1:
        return {**item(jobs[0]), "warnings": said}
    return {"apiVersion": API_VERSION, "kind": "JobStatusList", "warnings": said, "items": [item(job) for job in jobs]}


def dump(doc: dict[str, Any], output: str) -> str:
    """The document as ``output`` (json or yaml), ending in a newline."""
    if output == "json":
        return json.dumps(doc, indent=2) + "\n"
    if output == "yaml":
        return str(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    raise UsageError(f"-o {output}: not one of {', '.join(FORMATS)}")


__all__ = ["API_VERSION", "FORMATS", "document", "dump", "item", "plain", "warning"]
