# planb.gke: what one poll of a GKE long-running operation showed, for the modules' `operations[].progress`.
"""poll_entry: a GKE v1 Operation, as one poll read it, reduced to elapsed time, status and progress metrics.

Ansible modules cannot stream output while they run, so a converging module returns every poll in its result
(``operations[].progress``); the default callback prints the result with ``-v``. The shapes read here are the
container v1 discovery document's (googleapiclient/discovery_cache/documents/container.v1.json):
``Operation.status`` (PENDING, RUNNING, DONE, ABORTING), ``Operation.progress`` an ``OperationProgress`` (``name``,
``status``, ``metrics``, ``stages``, each stage an OperationProgress again) and each ``Metric`` a ``name`` with one of
``intValue`` (an int64 written as a string), ``doubleValue`` or ``stringValue``.
"""

from __future__ import annotations

from typing import Any

Body = dict[str, Any]

#: A Metric's value fields, in the order read; GKE sets one.
_VALUE_FIELDS = ("intValue", "doubleValue", "stringValue")


def metric_value(metric: Body) -> Any:
    """A Metric's value: intValue as an int (the document's int64 travels as a string), else doubleValue or
    stringValue as given; None when it carries none."""
    for field in _VALUE_FIELDS:
        if field in metric:
            value = metric[field]
            if field == "intValue":
                try:
                    return int(value)
                except (TypeError, ValueError):
                    return value
            return value
    return None


def metrics(progress: Body) -> dict[str, Any]:
    """An OperationProgress's metrics as ``{name: value}``; metrics without a name are left out."""
    out: dict[str, Any] = {}
    for metric in progress.get("metrics") or []:
        if isinstance(metric, dict) and metric.get("name"):
            out[str(metric["name"])] = metric_value(metric)
    return out


def stages(progress: Body) -> list[Body]:
    """An OperationProgress's stages, each ``{name, status, metrics}`` (a stage's own stages are left out)."""
    out: list[Body] = []
    for stage in progress.get("stages") or []:
        if isinstance(stage, dict):
            out.append({"name": stage.get("name"), "status": stage.get("status"), "metrics": metrics(stage)})
    return out


def poll_entry(op: Body, elapsed_s: float) -> Body:
    """One poll: seconds since the wait began, the operation's status and, when GKE sent ``progress``, its metrics
    (and stages, when it has any)."""
    entry: Body = {"elapsed_s": round(elapsed_s, 1), "status": op.get("status")}
    progress = op.get("progress")
    if isinstance(progress, dict):
        entry["metrics"] = metrics(progress)
        found = stages(progress)
        if found:
            entry["stages"] = found
    return entry
